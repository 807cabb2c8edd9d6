#!/usr/bin/env python3
"""Tenant fairness on a real tandem-server: tenant B pushes 10 changes and pulls a page, over
and over, for PHASE seconds alone, then for PHASE seconds while tenant A attacks; prints B's
latency percentiles in both phases, and the server's peak memory.

The attacks (each in its own thread, bounded in size, repeated):
  schema   registers 20 000-attribute schemas (alternately compatible and breaking)
  pull     pulls pages of 8 MiB entries (20 of them stored first)
  slow     holds 1 100 half-sent requests open
  unknown  pushes naming schema versions that do not exist

Usage: fairness.py BASE TOKEN_A TOKEN_B SERVER_PID [PHASE_SECONDS]
"""
import http.client, json, socket, sys, threading, time, uuid
from urllib.parse import urlparse

base, token_a, token_b, server_pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
phase = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
host, port = urlparse(base).hostname, urlparse(base).port
SCHEMA = {"formatVersion": 1, "entities": [{"name": "Todo", "attributes": [
    {"name": "title", "type": {"kind": "scalar", "scalar": "string"}, "isOptional": False},
    {"name": "rank", "type": {"kind": "scalar", "scalar": "int"}, "isOptional": True}]}]}


def request(method, path, token, body=None, timeout=60, headers=None):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    h = {"Authorization": "Bearer " + token}
    if body is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return reply.status, data


def stamp(counter, node):
    return "%012x-%04x-%016x" % (int(time.time() * 1000), counter % 65536, node)


def push(dataset, token, changes, version=1):
    body = json.dumps({"schemaVersion": version, "changes": changes})
    return request("POST", "/v1/datasets/%s/push" % dataset, token, body, headers={"Idempotency-Key": str(uuid.uuid4())})


def change(dataset, title, counter, node):
    s = stamp(counter, node)
    return {"record": "tandem://%s/Todo/%s" % (dataset, uuid.uuid4()), "entity": "Todo", "kind": "insert",
            "values": {"title": title}, "stamps": {"title": s}}


def setup():
    for token, dataset in ((token_a, "a"), (token_b, "b")):
        request("PUT", "/v1/datasets/" + dataset, token)
        status, _ = request("PUT", "/v1/datasets/%s/schema" % dataset, token, json.dumps(SCHEMA))
        assert status in (200, 201), status
    big = "x" * (8 * 1024 * 1024 - 4096)
    for i in range(20):
        status, data = push("a", token_a, [change("a", big, i, 1)])
        assert status == 200, (status, data[:200])


def victim(until, latencies, errors):
    counter = 0
    cursor = ""
    while time.time() < until:
        counter += 1
        started = time.time()
        try:
            status, _ = push("b", token_b, [change("b", "t%d" % i, counter, 2) for i in range(10)], version=1)
            if status != 200:
                errors.append(status)
            status, data = request("GET", "/v1/datasets/b/pull?limit=100&after=" + cursor, token_b)
            if status == 200:
                cursor = json.loads(data)["nextCursor"]
            else:
                errors.append(status)
        except Exception as error:  # a timeout or a refused connection is a failure of fairness
            errors.append(type(error).__name__)
        latencies.append(time.time() - started)


def attack_schema(until):
    n = 0
    while time.time() < until:
        n += 1
        attributes = [{"name": "a%d" % i, "type": {"kind": "scalar", "scalar": "string"}, "isOptional": True} for i in range(20000 + n % 2)]
        schema = {"formatVersion": 1, "entities": [{"name": "Wide", "attributes": attributes}]}
        try:
            request("PUT", "/v1/datasets/a/schema", token_a, json.dumps(schema))
        except Exception:
            pass


def attack_pull(until):
    while time.time() < until:
        try:
            request("GET", "/v1/datasets/a/pull?limit=5000", token_a)
        except Exception:
            pass


def attack_slow(until, held):
    for _ in range(1100):
        try:
            s = socket.create_connection((host, port), timeout=5)
            s.send(b"GET /v1/datasets HTTP/1.1\r\nHost: x\r\nAuthor")
            held.append(s)
        except Exception:
            pass
    while time.time() < until:
        time.sleep(0.2)


def attack_unknown(until):
    n = 0
    while time.time() < until:
        n += 1
        try:
            push("a", token_a, [change("a", "u", n, 3)], version=1000 + n)
        except Exception:
            pass


def peak_rss_mib():
    with open("/proc/%d/status" % server_pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def percentiles(values):
    values = sorted(values)
    if not values:
        return "no requests"
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] * 1000
    return "%d rounds, p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (len(values), pick(0.5), pick(0.99), values[-1] * 1000)


setup()
print("setup: 20 entries of 8 MiB stored for tenant A; server peak RSS so far %.0f MiB" % peak_rss_mib())
alone, errors_alone = [], []
victim(time.time() + phase, alone, errors_alone)
print("B alone:        " + percentiles(alone) + ("; failures: %s" % errors_alone[:5] if errors_alone else ""))
under, errors_under, held = [], [], []
until = time.time() + phase
attackers = [threading.Thread(target=attack_schema, args=(until,)), threading.Thread(target=attack_pull, args=(until,)),
             threading.Thread(target=attack_slow, args=(until, held)), threading.Thread(target=attack_unknown, args=(until,))]
for thread in attackers:
    thread.start()
time.sleep(1)
victim(until, under, errors_under)
for thread in attackers:
    thread.join()
for s in held:
    s.close()
print("B under attack: " + percentiles(under) + ("; failures: %s" % errors_under[:5] if errors_under else ""))
print("server peak RSS: %.0f MiB" % peak_rss_mib())
