#!/usr/bin/env bash
# The sync server under load on loopback, SQLite storage (release build), in two phases:
#  1. saturation: 45 wrk connections push 100-change batches back to back and 5 pull pages of
#     100 back to back, for DURATION seconds (default 30): the most changes/s the server takes;
#     latency there is queueing (closed loop: latency ≈ connections ÷ throughput).
#  2. paced: 50 clients push 100-change batches and 50 pull, each with random (exponential)
#     think time of TANDEM_PACE_MS (default 170) between requests, for DURATION seconds: the
#     latency at a sustained load of about 25 000 changes/s (the issue's ≥ 20 000 target).
# Prints changes/s, p50/p99 latency, non-2xx answers and the server's peak RSS (over both
# phases; 1 M+ changes with the default duration).
# Usage: Scripts/bench-server.sh [duration seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-30}"
pace="${TANDEM_PACE_MS:-170}"
command -v wrk >/dev/null 2>&1 || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"; $SUDO apt-get install -y -qq wrk; }
swift build --package-path Server -c release --product tandem-server
source Scripts/loopback-server.sh
start_loopback_server Server/.build/release/tandem-server
export TANDEM_TOKEN=$token
auth="Authorization: Bearer $TANDEM_TOKEN"
curl -sf -X PUT -H "$auth" "$base/v1/datasets/bench" >/dev/null
curl -sf -X PUT -H "$auth" --data-binary '{"formatVersion":1,"entities":[{"name":"Todo","attributes":[{"name":"title","type":{"kind":"scalar","scalar":"string"},"isOptional":false},{"name":"rank","type":{"kind":"scalar","scalar":"int"},"isOptional":true}]}]}' "$base/v1/datasets/bench/schema" >/dev/null

# run NAME PUSH_CONNECTIONS PULL_CONNECTIONS PACE_MS RUN_ID
run() {
  TANDEM_PACE_MS=$4 wrk -t 2 -c "$3" -d "${duration}s" --latency -s Benchmarks/server/pull.lua "$base" > "$data/$1-pull.txt" &
  local puller=$!
  TANDEM_RUN=$5 TANDEM_PACE_MS=$4 wrk -t 2 -c "$2" -d "${duration}s" --latency -s Benchmarks/server/push.lua "$base" > "$data/$1-push.txt"
  wait $puller
  echo "== $1: push ($2 connections, 100 changes per request, think time ${4} ms) =="
  cat "$data/$1-push.txt"
  echo "== $1: pull ($3 connections, pages of 100, think time ${4} ms) =="
  cat "$data/$1-pull.txt"
}
summary() {
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' "$data/$1-push.txt")
  p50=$(awk '/ 50%/ {print $2}' "$data/$1-push.txt")
  p99=$(awk '/ 99%/ {print $2}' "$data/$1-push.txt")
  errors=$(cat "$data/$1-push.txt" "$data/$1-pull.txt" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
  echo "$1: $(awk -v r="$rps" 'BEGIN {printf "%.0f", r * 100}') changes/s pushed, push p50 $p50 p99 $p99, errors: ${errors:-none}"
}
run saturation 45 5 0 1
run paced 50 50 "$pace" 2
rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
total=$(curl -sf -H "$auth" "$base/metrics" | awk '/^tandem_changes_applied_total / {print $2}')
echo
summary saturation
summary paced
echo "server: peak RSS $((rss / 1024)) MiB over ${total} changes applied"
echo "targets (issue 6): paced >= 20000 changes/s at push p99 <= 100 ms, 0 errors; peak RSS <= 150 MB over 1 M changes"
