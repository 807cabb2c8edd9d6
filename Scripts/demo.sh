#!/usr/bin/env bash
# The main job, walked through:
#  1. the store: create, save, query, URI round trip, reopen (Examples/TandemDemo);
#  2. sync: tandem-server on its embedded SQLite default, a user, a token and a dataset; two
#     stores ("laptop" and "phone") made from release 1's schema edit offline, including one
#     real conflict and one delete against an update, sync through the server and converge;
#     the converged records and the conflict log are printed;
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

$tandem schema extract Examples/SchemaVersions/v1 -o "$work/schema.json"
$tandem init --store "$work/laptop.store" --schema "$work/schema.json" --dataset demo
$tandem init --store "$work/phone.store" --schema "$work/schema.json" --dataset demo
put() { $tandem records put --store "$work/$1.store" --entity Todo "${@:2}"; }
milk=$(put laptop '{"code":"T-1","title":"Buy milk","people.name":"Ann","people.age":31,"priority":1}')
call=$(put laptop '{"code":"T-2","title":"Call Bob","people.name":"Bob","people.age":40,"priority":2}')
put laptop '{"code":"T-3","title":"Water plants","people.name":"Cy","people.age":9,"priority":0}' >/dev/null
$tandem sync --store "$work/laptop.store"
$tandem sync --store "$work/phone.store"

echo
echo "-- offline: both edit the title of T-1 (the phone later); the laptop deletes T-2 while the phone edits it"
put laptop --id "${milk##*/}" '{"title":"Buy oat milk"}' >/dev/null
sleep 0.05
put phone --id "${milk##*/}" '{"title":"Buy milk and eggs"}' >/dev/null
$tandem records delete --store "$work/laptop.store" "$call"
put phone --id "${call##*/}" '{"priority":0}' >/dev/null
put phone '{"code":"T-4","title":"Book dentist","people.name":"Ann","people.age":31,"priority":1}' >/dev/null

echo
echo "-- sync: phone, laptop, phone"
$tandem sync --store "$work/phone.store"
$tandem sync --store "$work/laptop.store"
$tandem sync --store "$work/phone.store"

$tandem records list --store "$work/laptop.store" --entity Todo > "$work/laptop.json"
$tandem records list --store "$work/phone.store" --entity Todo > "$work/phone.json"
echo
echo "-- converged records (laptop):"
python3 -c 'import json,sys
for r in json.load(open(sys.argv[1])):
    v = r["values"]
    print("  {}: {!r} (priority {})".format(v["code"], v["title"], v["priority"]))' "$work/laptop.json"
if ! cmp -s "$work/laptop.json" "$work/phone.json"; then
    echo "demo: the stores diverged" >&2
    diff "$work/laptop.json" "$work/phone.json" >&2 || true
    exit 1
fi
grep -q '"Buy milk and eggs"' "$work/laptop.json" || { echo "demo: the newer title did not win" >&2; exit 1; }
if grep -q '"T-2"' "$work/laptop.json"; then echo "demo: the deleted record came back" >&2; exit 1; fi
echo "laptop and phone hold the same records."
echo
echo "-- conflict log (laptop):"
$tandem conflicts --store "$work/laptop.store"
echo
$tandem status --store "$work/laptop.store" --server "$url"

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
