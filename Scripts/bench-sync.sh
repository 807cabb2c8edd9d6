#!/usr/bin/env bash
# The sync engine on loopback (release builds): tandem-server on its SQLite default and the
# SyncBench client (store A → server → store B, raw SQLite inserts of the same rows in the
# same run, no-op syncs, 100-change syncs, the client's peak RSS).
# Usage: Scripts/bench-sync.sh [changes]   (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
changes="${1:-100000}"
swift build -c release --product tandem-server
swift build -c release --product SyncBench
swift build -c release --product tandem
server=.build/release/tandem-server
data=$(mktemp -d)
port=$((20000 + RANDOM % 30000))
trap 'kill $pid 2>/dev/null || true; rm -rf "$data"' EXIT
"$server" users add bench --data-dir "$data" >/dev/null
token=$("$server" tokens create bench --data-dir "$data")
"$server" serve --data-dir "$data" --port "$port" --log-level error --requests-per-second 0 &
pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
TANDEM_LOG_LEVEL=error .build/release/SyncBench --server "http://127.0.0.1:$port" --token "$token" --changes "$changes"
