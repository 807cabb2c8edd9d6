#!/usr/bin/env bash
# The sync server under load on loopback, SQLite storage (release build): 45 wrk connections
# pushing 100-change batches and 5 pulling, for DURATION seconds (default 30). Prints
# changes/s, p50/p99 latency, non-2xx answers and the server's peak RSS.
# Usage: Scripts/bench-server.sh [duration seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-30}"
command -v wrk >/dev/null 2>&1 || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"; $SUDO apt-get install -y -qq wrk; }
swift build -c release --product tandem-server
server=.build/release/tandem-server
data=$(mktemp -d)
port=$((20000 + RANDOM % 30000))
trap 'kill $pid 2>/dev/null || true; rm -rf "$data"' EXIT
"$server" users add bench --data-dir "$data" >/dev/null
export TANDEM_TOKEN=$("$server" tokens create bench --data-dir "$data")
"$server" serve --data-dir "$data" --port "$port" --log-level error --requests-per-second 0 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done
auth="Authorization: Bearer $TANDEM_TOKEN"
curl -sf -X PUT -H "$auth" "$base/v1/datasets/bench" >/dev/null
curl -sf -X PUT -H "$auth" --data-binary '{"formatVersion":1,"entities":[{"name":"Todo","attributes":[{"name":"title","type":{"kind":"scalar","scalar":"string"},"isOptional":false},{"name":"rank","type":{"kind":"scalar","scalar":"int"},"isOptional":true}]}]}' "$base/v1/datasets/bench/schema" >/dev/null
wrk -t 2 -c 5 -d "${duration}s" --latency -s Benchmarks/server/pull.lua "$base" > "$data/pull.txt" &
pull=$!
wrk -t 2 -c 45 -d "${duration}s" --latency -s Benchmarks/server/push.lua "$base" > "$data/push.txt"
wait $pull
rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
echo "== push (45 connections, 100 changes per request) =="
cat "$data/push.txt"
echo "== pull (5 connections, pages of 100) =="
cat "$data/pull.txt"
rps=$(awk '/Requests\/sec/ {print $2}' "$data/push.txt")
p99=$(awk '/ 99%/ {print $2}' "$data/push.txt")
stored=$(curl -sf -H "$auth" "$base/v1/datasets/bench/pull?limit=1" | python3 -c 'import json,sys; print("ok" if json.load(sys.stdin)["changes"] else "empty")')
echo
echo "server: $(awk -v r="$rps" 'BEGIN {printf "%.0f", r * 100}') changes/s pushed, push p99 $p99, peak RSS $((rss / 1024)) MiB, log $stored"
echo "targets (issue 6): >= 20000 changes/s at p99 <= 100 ms, 0 errors (non-2xx lines above), peak RSS <= 150 MB over 1 M changes"
