#!/usr/bin/env bash
# The sync engine on loopback (release builds): tandem-server on its SQLite default and the
# SyncBench client (store A → server → store B, raw SQLite inserts of the same rows in the
# same run, no-op syncs, 100-change syncs, the client's peak RSS); then the same one sync
# after the other with a `.unique` title (SYNCBENCH_UNIQUE=1), as seed-style models have.
# Usage: Scripts/bench-sync.sh [changes]   (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
changes="${1:-100000}"
swift build --package-path Server -c release --product tandem-server
swift build -c release --product SyncBench
swift build -c release --product tandem
source Scripts/loopback-server.sh
start_loopback_server Server/.build/release/tandem-server
TANDEM_LOG_LEVEL=error .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
TANDEM_LOG_LEVEL=error SYNCBENCH_UNIQUE=1 SYNCBENCH_SEQUENTIAL_ONLY=1 .build/release/SyncBench --server "$base" --token "$token" --changes "$changes" --server-pid "$pid"
