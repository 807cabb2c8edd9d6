#!/usr/bin/env bash
# The main job, walked through:
#  1. the store: create, save, query, URI round trip, reopen (Examples/TandemDemo);
#  2. sync: tandem-server on its embedded SQLite default, a user, a token and a dataset; two
#     stores ("laptop" and "phone") made from release 1's schema edit offline, including one
#     real conflict and one delete against an update, sync through the server and converge;
#     the converged records and the conflict log are printed; then live: a daemon on each
#     store, and a record put on the laptop shows on the phone without a sync by hand;
#  3. a breaking schema change refused by `tandem schema check`.
# Exits non-zero if anything diverged or a step fails. The server is stopped at the end.
# Usage: Scripts/demo.sh [directory]   (default: a fresh temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --product TandemDemo
swift build --product tandem
swift build --package-path Server --product tandem-server
.build/debug/TandemDemo "$@"

tandem=.build/debug/tandem
server=Server/.build/debug/tandem-server
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
export NO_COLOR=1

echo
echo "== Sync: tandem-server on its embedded SQLite default =="
port=$((20000 + RANDOM % 30000))
"$server" users add alice --data-dir "$work/server" >/dev/null
"$server" tokens create alice --data-dir "$work/server" > "$work/token"
echo "user alice, token written to a file (stored hashed on the server)"
"$server" serve --data-dir "$work/server" --port "$port" --log-level warning &
pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -sf "$url/health" >/dev/null && break; sleep 0.1; done
export TANDEM_SERVER="$url" TANDEM_TOKEN_FILE="$work/token"

source Scripts/demo-stores.sh
make_stores laptop phone
$tandem sync --store "$work/laptop.store"
$tandem sync --store "$work/phone.store"
edit_offline laptop phone

echo
echo "-- sync: phone, laptop, phone"
$tandem sync --store "$work/phone.store"
$tandem sync --store "$work/laptop.store"
$tandem sync --store "$work/phone.store"
check_converged laptop phone
echo
$tandem status --store "$work/laptop.store" --server "$url"

echo
echo "-- live: a tandem daemon on each store; a new record on the laptop shows on the phone"
$tandem daemon --store "$work/laptop.store" 2>/dev/null &
daemons="$!"
$tandem daemon --store "$work/phone.store" 2>/dev/null &
daemons="$daemons $!"
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$daemons" ] && kill $daemons 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
started=$(date +%s%N)
live=$(put laptop '{"code":"T-5","title":"Seen live","people.name":"Ann","people.age":31,"priority":1}')
arrived=""
for _ in $(seq 1 500); do
  if $tandem records get --store "$work/phone.store" "$live" >/dev/null 2>&1; then arrived=$(date +%s%N); break; fi
  sleep 0.01
done
[ -n "$arrived" ] || { echo "the record did not reach the phone live"; exit 1; }
echo "T-5 put on the laptop is on the phone $(( (arrived - started) / 1000000 )) ms later (the put's process start included), no sync run by hand"
kill -TERM $daemons; wait $daemons 2>/dev/null || true
daemons=""

echo
echo "-- sharing: alice shares the dataset with bob as a reader; his replica gets everything, his edit waits"
"$server" users add bob --data-dir "$work/server" >/dev/null
"$server" datasets share alice/demo --with bob --role reader --data-dir "$work/server"
"$server" tokens create bob --dataset alice/demo --expires 1h --data-dir "$work/server" > "$work/bob.token"
$tandem init --store "$work/bob.store" --schema "$work/schema.json" --dataset demo
$tandem sync --store "$work/bob.store" --dataset alice/demo --token-file "$work/bob.token"
check_converged laptop bob > "$work/bob-converged.txt"
echo "bob's replica holds alice's records"
put bob '{"code":"T-9","title":"Bob suggests","people.name":"Bob","people.age":40,"priority":0}' >/dev/null
if $tandem sync --store "$work/bob.store" --dataset alice/demo --token-file "$work/bob.token"; then
    echo "demo: a reader's push was expected to be refused" >&2
    exit 1
fi
echo "refused as expected: bob's edit waits in his quarantine (tandem quarantine list), nothing lost, and his pulls go on"

echo
echo "== Schema check: release 2 of the models against release 1 =="
echo "released schema: schema.json ($(wc -c < "$work/schema.json") bytes)"
status=0
$tandem schema check --baseline "$work/schema.json" --candidate Examples/SchemaVersions/v2 || status=$?
if [ "$status" -ne 1 ]; then
    echo "demo: expected tandem schema check to refuse release 2 (exit 1), got exit $status" >&2
    exit 1
fi
echo "refused as expected (exit 1): fix the breaking changes before releasing."
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo "server stopped."
