#!/usr/bin/env bash
# The main job, walked through: create a store, save, query, URI round trip, reopen.
# Usage: Scripts/demo.sh [directory]   (default: a fresh temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --product TandemDemo
.build/debug/TandemDemo "$@"
