#!/usr/bin/env bash
# Tenant fairness on a release tandem-server (on its SQLite default, loopback): tenant B's
# push-and-pull latency alone, then while tenant A attacks (20 000-attribute schemas, pulls
# of 8 MiB entries, 1 100 half-sent requests, pushes naming unknown schema versions), and the
# server's peak memory. Benchmarks/fairness/fairness.py says what each attack does.
# Usage: Scripts/bench-fairness.sh [phase seconds]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --package-path Server -c release --product tandem-server
source Scripts/loopback-server.sh
start_loopback_server Server/.build/release/tandem-server alice
token_a=$token
Server/.build/release/tandem-server users add bob --data-dir "$data" >/dev/null
token_b=$(Server/.build/release/tandem-server tokens create bob --data-dir "$data")
python3 Benchmarks/fairness/fairness.py "$base" "$token_a" "$token_b" "$pid" "${1:-10}"
