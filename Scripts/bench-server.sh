#!/usr/bin/env bash
# The sync server under load on loopback (release build), in one run, on three deployments:
# SQLite (one node, the default), PostgreSQL with one node, and PostgreSQL with two nodes
# sharing it (the load split evenly between them, as a load balancer would). Each in two
# phases, all pushes to one dataset (the worst case: one dataset has one ordering point):
#  1. saturation: 45 wrk connections push 100-change batches back to back and 5 pull pages of
#     100 back to back, for DURATION seconds (default 30): the most changes/s the deployment
#     takes; latency there is queueing (closed loop: latency ≈ connections ÷ throughput).
#  2. paced (the P7 load): 50 clients push 100-change batches and 50 pull, each with random
#     (exponential) think time of TANDEM_PACE_MS (default 170) between requests, for DURATION
#     seconds: the latency at a sustained load of about 25 000 changes/s (target ≥ 20 000).
# PostgreSQL is a throwaway cluster (Scripts/postgres.sh) with its durable defaults
# (fsync, synchronous_commit on); SQLite runs as the server does (WAL, synchronous=NORMAL).
# Prints changes/s, p50/p99 push latency (the worst node's) and non-2xx answers per phase,
# and each node's peak RSS; the same figures go to .build/bench/server.csv, drawn by
# Scripts/bench-charts.py into docs/images/.
# Usage: Scripts/bench-server.sh [duration seconds]   (TANDEM_BENCH_STORAGES="sqlite pg1 pg2")
# TANDEM_BENCH_PG_STATEMENTS=1: PostgreSQL runs with pg_stat_statements, and after each
# PostgreSQL deployment the statements that took the most time are printed (calls, mean
# execution and planning time), to see where a push's time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-30}"
pace="${TANDEM_PACE_MS:-170}"
storages="${TANDEM_BENCH_STORAGES:-sqlite pg1 pg2}"
if [ "${TANDEM_BENCH_PG_STATEMENTS:-}" = 1 ]; then
  export TANDEM_PG_SETTINGS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"
fi
command -v wrk >/dev/null 2>&1 || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"; $SUDO apt-get install -y -qq wrk; }
Scripts/install-deps.sh
swift build --package-path Server -c release --product tandem-server
server=Server/.build/release/tandem-server
source Scripts/postgres.sh
work=$(mktemp -d)
mkdir -p .build/bench
echo "storage,phase,changes_per_second,push_p50,push_p99" > .build/bench/server.csv
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; stop_postgres; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# deploy NAME STORAGE_ARGS… : a user, a token and NODES servers on the storage; sets bases.
deploy() {
  local nodes=$1; shift
  "$server" users add bench "$@" >/dev/null
  TANDEM_TOKEN=$("$server" tokens create bench "$@")
  export TANDEM_TOKEN
  bases=()
  for _ in $(seq 1 "$nodes"); do
    local port; port=$(free_port)
    "$server" serve "$@" --port "$port" --log-level error --requests-per-second 0 &
    pids+=($!)
    bases+=("http://127.0.0.1:$port")
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  done
  local auth="Authorization: Bearer $TANDEM_TOKEN"
  curl -sf -X PUT -H "$auth" "${bases[0]}/v1/datasets/bench" >/dev/null
  curl -sf -X PUT -H "$auth" --data-binary '{"formatVersion":1,"entities":[{"name":"Todo","attributes":[{"name":"title","type":{"kind":"scalar","scalar":"string"},"isOptional":false},{"name":"rank","type":{"kind":"scalar","scalar":"int"},"isOptional":true}]}]}' "${bases[0]}/v1/datasets/bench/schema" >/dev/null
}

# phase NAME PUSH_CONNECTIONS PULL_CONNECTIONS PACE_MS: the connections split over the nodes.
run_id=0
phase() {
  local name=$1 push=$2 pull=$3 think=$4 n=${#bases[@]} i
  local wrks=()
  for i in $(seq 0 $((n - 1))); do
    local pushes=$(( (push + n - 1 - i) / n )) pulls=$(( (pull + n - 1 - i) / n ))
    run_id=$((run_id + 1))
    TANDEM_PACE_MS=$think wrk -t 1 -c "$pulls" -d "${duration}s" --latency -s Benchmarks/server/pull.lua "${bases[$i]}" > "$work/$name-pull-$i.txt" &
    wrks+=($!)
    TANDEM_RUN=$run_id TANDEM_PACE_MS=$think wrk -t 1 -c "$pushes" -d "${duration}s" --latency -s Benchmarks/server/push.lua "${bases[$i]}" > "$work/$name-push-$i.txt" &
    wrks+=($!)
  done
  wait "${wrks[@]}"
  local rps p50 p99 errors
  rps=$(cat "$work/$name"-push-*.txt | awk '/Requests\/sec/ {s += $2} END {printf "%.0f", s * 100}')
  p50=$(cat "$work/$name"-push-*.txt | awk '/ 50%/ {print $2}' | sort -h | tail -1)
  p99=$(cat "$work/$name"-push-*.txt | awk '/ 99%/ {print $2}' | sort -h | tail -1)
  errors=$(cat "$work/$name"-push-*.txt "$work/$name"-pull-*.txt | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
  echo "$storage $name: $rps changes/s pushed, push p50 $p50 p99 $p99, errors: ${errors:-none}" | tee -a "$work/summary"
  echo "$storage,$name,$rps,$p50,$p99" >> .build/bench/server.csv
}

stop_nodes() {
  local rss=""
  for p in "${pids[@]}"; do rss="$rss $(( $(awk '/VmHWM/ {print $2}' /proc/$p/status) / 1024 )) MiB"; done
  echo "$storage: peak RSS per node:$rss" | tee -a "$work/summary"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
}

for storage in $storages; do
  case $storage in
    sqlite) deploy 1 --data-dir "$work/sqlite" ;;
    pg1 | pg2)
      [ -n "${pg_dir:-}" ] || start_postgres durable
      deploy "${storage#pg}" --database "$(create_postgres_database "bench_$storage")" ;;
    *) echo "unknown storage $storage (sqlite, pg1, pg2)" >&2; exit 2 ;;
  esac
  echo "== $storage: ${#bases[@]} node(s) =="
  phase saturation 45 5 0
  phase paced 50 50 "$pace"
  stop_nodes
  if [ "${TANDEM_BENCH_PG_STATEMENTS:-}" = 1 ] && [ "$storage" != sqlite ]; then
    stats=$(create_postgres_database "stats_$storage")
    psql "$stats" -q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
    psql "$stats" -c "SELECT calls, round(mean_exec_time::numeric, 3) AS exec_ms, round(mean_plan_time::numeric, 3) AS plan_ms,
                             round((total_exec_time + total_plan_time)::numeric) AS total_ms,
                             left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
                      FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 15" | tee -a "$work/statements"
    psql "$stats" -q -c "SELECT pg_stat_statements_reset()" >/dev/null
  fi
done
echo
echo "== summary ($duration s per phase, pushes of 100 changes to one dataset) =="
cat "$work/summary"
echo "target (issue 22): pg2 paced >= 20000 changes/s at push p99 <= 100 ms, 0 errors"
python3 Scripts/bench-charts.py
