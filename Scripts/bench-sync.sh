#!/usr/bin/env bash
# The sync engine on loopback (release builds): tandem-server on its SQLite default and the
# SyncBench client (store A → server → store B, raw SQLite inserts of the same rows in the
# same run, no-op syncs, 100-change syncs, the client's peak RSS); then the same one sync
# after the other with a `.unique` title (SYNCBENCH_UNIQUE=1), as seed-style models have;
# then, on a server of its own, joining from a snapshot (SYNCBENCH_BOOTSTRAP=1: the first
# sync of the records, then again after every record was updated 9 more times) and the
# server's database before and after compacting that log.
# Then the engine in one process over each transport side by side (SYNCBENCH_TRANSPORTS=1:
# libcurl, the CLI's, and URLSession, the apps'; A's push, B's pull, no-op and 100-change syncs).
# Then sync throughput against size: the first sync (A's push, B's bootstrap) at each of
# TANDEM_SYNC_BENCH_SIZES (default "10000 30000 300000"; empty: none).
# Every figure is appended to .build/bench/sync.jsonl (emptied first) and drawn by
# Scripts/bench-charts.py into docs/images/.
# Usage: Scripts/bench-sync.sh [changes]   (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
changes="${1:-100000}"
chart_sizes="${TANDEM_SYNC_BENCH_SIZES-10000 30000 300000}"
mkdir -p .build/bench
rm -f .build/bench/sync.jsonl
swift build --package-path Server -c release --product tandem-server
swift build -c release --product SyncBench
swift build -c release --product tandem
source Scripts/loopback-server.sh
start_loopback_server Server/.build/release/tandem-server
TANDEM_LOG_LEVEL=error .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
TANDEM_LOG_LEVEL=error SYNCBENCH_UNIQUE=1 SYNCBENCH_SEQUENTIAL_ONLY=1 .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
TANDEM_LOG_LEVEL=error SYNCBENCH_TRANSPORTS=1 .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
for size in $chart_sizes; do
  TANDEM_LOG_LEVEL=error SYNCBENCH_DATASET="size-$size" SYNCBENCH_SEQUENTIAL_ONLY=1 .build/release/SyncBench --server "$base" --token "$token" --changes "$size" --server-pid "$pid"
done
# Joining from a snapshot, on a fresh server, and compaction of the 10-entries-per-record log.
kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"
start_loopback_server Server/.build/release/tandem-server
TANDEM_LOG_LEVEL=error SYNCBENCH_BOOTSTRAP=1 .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
sizes() {
  python3 - "$data/tandem.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
size = db.execute("PRAGMA page_size").fetchone()[0]
pages = db.execute("PRAGMA page_count").fetchone()[0]
free = db.execute("PRAGMA freelist_count").fetchone()[0]
entries = db.execute("SELECT COUNT(*) FROM log").fetchone()[0]
print(f"{(pages - free) * size / 2**20:.0f} MiB in use ({pages * size / 2**20:.0f} MiB file), {entries} log entries")
PY
}
echo "server database before compaction: $(sizes)"
Server/.build/release/tandem-server storage compact --data-dir "$data" --log-retention forever --log-retention-entries 1 >/dev/null
echo "server database after compaction:  $(sizes) (freed pages are reused by later writes)"
python3 Scripts/bench-charts.py
