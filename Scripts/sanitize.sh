#!/usr/bin/env bash
# Runs both packages' tests under ThreadSanitizer and AddressSanitizer, each in build
# directories of its own (.build-thread, Server/.build-thread, .build-address,
# Server/.build-address), and fails on any report. Outside CI: each sanitizer rebuilds
# everything (swift-syntax, NIO…) and slows the tests several times, which does not fit CI's
# budget on 2 cores. The server package's tests run the root's sanitized `tandem`
# (TANDEM_CLI). Reports go to sanitize-<sanitizer>.log.
# Usage: Scripts/sanitize.sh [thread|address ...]   (default: thread address)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(thread address)
# Reports fail the run (every one is collected: the run goes on); leaks are not reported
# (swift-testing and Foundation keep process-lifetime allocations that LeakSanitizer lists).
# The first frame of each report, counted, ends the output.
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1"
export ASAN_OPTIONS="halt_on_error=0 detect_leaks=0"
# The convergence simulations run 30 histories instead of 300 (TANDEM_SIM_HISTORIES overrides):
# under a sanitizer each history costs ten times more, and the soak covers the thousands.
export TANDEM_SIM_HISTORIES="${TANDEM_SIM_HISTORIES:-30}"
# A sanitized binary hangs at start under faketime's LD_PRELOAD: the suite that runs `tandem`
# under faketime skips itself when this is set.
export TANDEM_SANITIZER=1
status=0
for sanitizer in "${sanitizers[@]}"; do
    log="sanitize-$sanitizer.log"
    : >"$log"
    echo "== --sanitize=$sanitizer (log: $log)"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build-$sanitizer" 2>&1 | tail -1
    swift build --package-path Server --build-tests --sanitize="$sanitizer" --scratch-path "Server/.build-$sanitizer" 2>&1 | tail -1
    root_ok=0 server_ok=0
    swift test --skip-build --sanitize="$sanitizer" --scratch-path ".build-$sanitizer" >>"$log" 2>&1 || root_ok=$?
    TANDEM_CLI="$PWD/.build-$sanitizer/debug/tandem" \
        swift test --package-path Server --skip-build --sanitize="$sanitizer" --scratch-path "Server/.build-$sanitizer" >>"$log" 2>&1 || server_ok=$?
    reports=$(grep -c "^SUMMARY: \(Thread\|Address\)Sanitizer" "$log" || true)
    echo "root tests: exit $root_ok; server tests: exit $server_ok; sanitizer reports: $reports"
    grep -E "Test run with" "$log" || true
    grep -A2 "^WARNING: \(Thread\|Address\)Sanitizer\|^==.*ERROR: AddressSanitizer" "$log" | grep -o '#0 [^ ]*' | sort | uniq -c | sort -rn | head -20 || true
    if [ "$root_ok" -ne 0 ] || [ "$server_ok" -ne 0 ] || [ "$reports" -ne 0 ]; then status=1; fi
done
exit $status
