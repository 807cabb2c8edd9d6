#!/usr/bin/env bash
# Builds Tandem and runs every test (Swift Testing). Usage: Scripts/test.sh [swift test args]
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
