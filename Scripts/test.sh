#!/usr/bin/env bash
# Builds Tandem and runs every test (Swift Testing), then fuzzes the real tandem-server from
# its OpenAPI document (schemathesis). Usage: Scripts/test.sh [swift test args]
# Soaks: TANDEM_CRASH_ROUNDS=200 (journal kill -9 rounds), TANDEM_SERVER_CRASH_ROUNDS=50
# (server kill -9 rounds), TANDEM_FUZZ_EXAMPLES=500 (schemathesis cases per operation).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
Scripts/fuzz-server.sh "${TANDEM_FUZZ_EXAMPLES:-40}"
