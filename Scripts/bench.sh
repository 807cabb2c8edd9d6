#!/usr/bin/env bash
# Release build, then Tandem vs GRDB vs the raw SQLite C API side by side in one process.
# Usage: Scripts/bench.sh [--rows N]   (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build -c release --product TandemBench
.build/release/TandemBench "$@"
