#!/usr/bin/env bash
# Lints the sources (swift format, with the checked-in .swift-format), checks that the products
# an app depends on reach nothing Linux-only (Scripts/check-app-dependencies.py), builds and
# tests the root package (the store, the engine, the CLI), then the server package (Server/: the
# server, and the tests that need a client and a server together over both transports, which
# run the root's `tandem`), then fuzzes the real tandem-server from its OpenAPI document
# (schemathesis). `swift format format
# --in-place --recursive Sources Server Tests Benchmarks Examples Package.swift` fixes what the
# lint reports. Usage: Scripts/test.sh [swift test args, given to both packages]
# Soaks: TANDEM_CRASH_ROUNDS=200 (journal kill -9 rounds), TANDEM_SERVER_CRASH_ROUNDS=50
# (server kill -9 rounds), TANDEM_FUZZ_EXAMPLES=500 (schemathesis cases per operation).
# The server's storage suite runs on SQLite, the in-memory twin and PostgreSQL: a throwaway
# cluster (Scripts/postgres.sh) is started for the run and removed after it.
# TANDEM_TEST_SERVER_LOGS=DIR keeps the log of every tandem-server process the tests start.
# The operator's dashboard is then checked in headless Chromium (Scripts/test-dashboard-browser.sh,
# installing Debian's chromium when missing; its screenshot: .build/dashboard.png).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift format lint --strict --recursive Sources Server/Sources Server/Tests Server/Package.swift Tests Benchmarks Examples Package.swift
# The products an app depends on (Tandem, TandemSync, TandemURLSession) reach no libcurl,
# server, CLI or test target; the check first shows it notices each kind of planted offence.
python3 Scripts/check-app-dependencies.py --self-test
python3 Scripts/check-app-dependencies.py
swift build --build-tests
# A hung test fails the run (the log shows which one started and did not end) instead of
# holding CI for its whole budget; each package's tests take 20 s to 3 min here.
# Each package's output is kept (.build/test-*.log); when a run fails, its failed expectations
# are printed again at the end, where a CI log's tail shows them.
tested() {
  local log=$1
  shift
  if ! "$@" 2>&1 | tee "$log"; then
    echo "=== failed expectations ($log) ==="
    grep -a -A4 -E "recorded an issue|✘ (Test|Suite)" "$log" | grep -av " info \| notice \| debug " | tail -120
    return 1
  fi
}
tested .build/test-root.log timeout 1200 swift test --skip-build "$@"
swift build --package-path Server --build-tests
source Scripts/postgres.sh
start_postgres
trap stop_postgres EXIT
export TANDEM_TEST_POSTGRES_URL="$pg_url" TANDEM_TEST_REQUIRE_POSTGRES=1
tested .build/test-server.log timeout 1800 swift test --package-path Server --skip-build "$@"
Scripts/test-dashboard-browser.sh
Scripts/fuzz-server.sh "${TANDEM_FUZZ_EXAMPLES:-40}"
