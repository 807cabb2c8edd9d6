#!/usr/bin/env bash
# tandem-server scaled out: a throwaway PostgreSQL cluster (Scripts/postgres.sh) and two
# server nodes on it, on different ports, as behind a load balancer. Store A syncs through
# node 1 and store B through node 2; each edits offline (one real conflict, a delete against
# an update), they sync again through their own node, and converge: one log, whichever node
# wrote it. Exits non-zero if they diverge. Everything is stopped and removed at the end.
# Usage: Scripts/demo-cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --product tandem
swift build --package-path Server --product tandem-server
tandem=.build/debug/tandem
server=Server/.build/debug/tandem-server
work=$(mktemp -d)
pids=()
source Scripts/postgres.sh
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; stop_postgres; rm -rf "$work"' EXIT
export NO_COLOR=1

echo "== PostgreSQL: a throwaway cluster, one database for the servers =="
start_postgres
database=$(create_postgres_database tandem)
echo "database: $database"
"$server" users add alice --database "$database"
"$server" tokens create alice --database "$database" > "$work/token"
echo "user alice, token written to a file (stored hashed in PostgreSQL)"

echo
echo "== Two tandem-server nodes on it =="
urls=()
for node in 1 2; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$server" serve --database "$database" --port "$port" --log-level warning &
  pids+=($!)
  urls+=("http://127.0.0.1:$port")
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  echo "node $node: http://127.0.0.1:$port (health: $(curl -s "http://127.0.0.1:$port/health"))"
done
export TANDEM_TOKEN_FILE="$work/token"
via() { local node=$1; shift; TANDEM_SERVER="${urls[$((node - 1))]}" "$tandem" "$@"; }

source Scripts/demo-stores.sh
make_stores a b
echo
echo "-- store a syncs through node 1, store b through node 2"
via 1 sync --store "$work/a.store"
via 2 sync --store "$work/b.store"
edit_offline a b

echo
echo "-- sync: b through node 2, a through node 1, b through node 2"
via 2 sync --store "$work/b.store"
via 1 sync --store "$work/a.store"
via 2 sync --store "$work/b.store"
check_converged a b
echo
via 1 status --store "$work/a.store"
