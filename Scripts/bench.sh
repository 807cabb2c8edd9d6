#!/usr/bin/env bash
# Release build, then Tandem vs GRDB vs the raw SQLite C API side by side in one process,
# and the `tandem` CLI's schema commands timed as whole processes.
# Usage: Scripts/bench.sh [--rows N] [--runs K] [--only insert|fetch|groupby|graph|journal|schema]
# Then (without --only) Scripts/bench-server.sh, the sync server under wrk load, and
# Scripts/bench-sync.sh, the sync engine from store to store, and Scripts/bench-live.sh,
# live sync's edit-to-visible latency. Each writes its results as data under .build/bench/ and
# Scripts/bench-charts.py draws them into docs/images/ (the charts docs/benchmarks.md shows).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build -c release --product TandemBench
swift build -c release --product tandem
# A partial run (--only) writes its data aside: the charts are drawn from full runs.
if [[ " $* " == *" --only "* ]]; then export TANDEM_BENCH_DATA=.build/bench/tandem-partial.json; fi
.build/release/TandemBench "$@"
# The sync server under load (wrk on loopback), unless a single TandemBench test was asked for.
if [[ " $* " != *" --only "* ]]; then
    Scripts/bench-server.sh "${TANDEM_SERVER_BENCH_SECONDS:-30}"
    Scripts/bench-sync.sh "${TANDEM_SYNC_BENCH_CHANGES:-100000}"
    Scripts/bench-live.sh "${TANDEM_LIVE_BENCH_EDITS:-200}"
fi
