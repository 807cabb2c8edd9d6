#!/usr/bin/env bash
# Live sync on loopback (release builds): edit-to-visible latency A → tandem-server → B with
# two `tandem daemon` processes, live (the default) and polling (--no-live --interval 1)
# side by side in one run, then the server's RSS and CPU with 1 000 idle waiting pulls.
# Usage: Scripts/bench-live.sh [edits]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
edits="${1:-200}"
swift build --package-path Server -c release --product tandem-server
swift build -c release --product LiveBench
swift build -c release --product tandem
source Scripts/loopback-server.sh
TANDEM_SERVE_ARGS="--max-waiting-pulls-per-user 2000" start_loopback_server Server/.build/release/tandem-server
.build/release/LiveBench --server "$base" --token "$token" --tandem .build/release/tandem --server-pid "$pid" --edits "$edits" --waiters 1000
