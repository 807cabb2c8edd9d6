#!/usr/bin/env python3
"""Drives headless Chromium through the operator's dashboard of a running tandem-server:
opens /admin/sign-in, types the operator's token into the form and submits it (a real
browser, its cookie jar and the 303 to /admin), then reads what the page shows and writes a
screenshot. Talks to Chromium over --remote-debugging-pipe (the DevTools protocol, JSON
messages ending in NUL on fds 3 and 4): nothing beyond the standard library.

Usage: dashboard_browser.py BASE_URL TOKEN SCREENSHOT.png
Prints a JSON object: {"path", "title", "datasets", "users", "activity", "requestsChart", "signedIn"}.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

base, token, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
browser = os.environ.get("CHROMIUM", "chromium")

to_chrome_r, to_chrome_w = os.pipe()
from_chrome_r, from_chrome_w = os.pipe()
profile = tempfile.mkdtemp(prefix="tandem-chromium-")


def child_fds():
    # Chromium reads commands on fd 3 and writes answers on fd 4. Copied out of the way first
    # (a pipe may already be fd 3 or 4); dup2 makes the copies inheritable across exec.
    read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
    os.dup2(read_end, 3)
    os.dup2(write_end, 4)


process = subprocess.Popen(
    [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
     "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
    preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_chrome_r)
os.close(from_chrome_w)
reader = os.fdopen(from_chrome_r, "rb", buffering=0)
buffer = b""
next_id = 0
events = []


def message(deadline):
    global buffer
    while b"\0" not in buffer:
        if not select.select([reader], [], [], max(deadline - time.time(), 0))[0]:
            raise SystemExit("chromium did not answer in time")
        chunk = reader.read(1 << 16)
        if not chunk:
            raise SystemExit("chromium closed the pipe")
        buffer += chunk
    text, buffer = buffer.split(b"\0", 1)
    return json.loads(text)


def call(method, params=None, session=None, timeout=30):
    global next_id
    next_id += 1
    request = {"id": next_id, "method": method, "params": params or {}}
    if session:
        request["sessionId"] = session
    os.write(to_chrome_w, json.dumps(request).encode() + b"\0")
    deadline = time.time() + timeout
    while time.time() < deadline:
        answer = message(deadline)
        if answer.get("id") == next_id:
            if "error" in answer:
                raise SystemExit(f"{method}: {answer['error']}")
            return answer["result"]
        events.append(answer)
    raise SystemExit(f"{method}: no answer in {timeout} s")


def wait_for(event, session, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for index, seen in enumerate(events):
            if seen.get("method") == event and seen.get("sessionId") == session:
                del events[: index + 1]
                return seen
        events.append(message(deadline))
    raise SystemExit(f"no {event} in {timeout} s")


def evaluate(expression, session):
    result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
    if "exceptionDetails" in result:
        raise SystemExit(f"page script failed: {result['exceptionDetails']}")
    return result["result"].get("value")


try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    call("Page.enable", session=session)
    call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
    call("Page.navigate", {"url": base + "/admin/sign-in"}, session)
    wait_for("Page.loadEventFired", session)
    evaluate(
        "document.querySelector('input[name=token]').value = %s; document.querySelector('form').submit(); true" % json.dumps(token),
        session)
    wait_for("Page.loadEventFired", session)
    shown = evaluate(
        """JSON.stringify({
            path: location.pathname,
            title: document.title,
            datasets: [...document.querySelectorAll('#datasets tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())),
            users: [...document.querySelectorAll('#users tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())),
            activity: [...document.querySelectorAll('section.activity')].map(s => ({
                dataset: s.querySelector('h3').textContent.trim(),
                clients: [...s.querySelectorAll('table.clients tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())),
                events: [...s.querySelectorAll('table.events tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())),
                chart: !!s.querySelector('svg.chart polyline')
            })),
            requestsChart: !!document.querySelector('#server svg.chart polyline'),
            signedIn: !!document.querySelector('form[action="/admin/sign-out"]')
        })""",
        session)
    shot = call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
    with open(screenshot, "wb") as file:
        file.write(base64.b64decode(shot["data"]))
    print(shown)
    try:
        call("Browser.close", timeout=5)
    except SystemExit:
        pass
finally:
    process.kill()
    process.wait()
    shutil.rmtree(profile, ignore_errors=True)
