# Sourced by Scripts/demo.sh and Scripts/demo-cluster.sh: the two stores' story, whatever
# servers they sync through. Uses $tandem (the CLI) and $work (the demo's directory).

# make_stores FIRST SECOND: both stores from release 1's schema; FIRST gets three records.
# Sets milk and call (the URIs of T-1 and T-2).
make_stores() {
  $tandem schema extract Examples/SchemaVersions/v1 -o "$work/schema.json"
  $tandem init --store "$work/$1.store" --schema "$work/schema.json" --dataset demo
  $tandem init --store "$work/$2.store" --schema "$work/schema.json" --dataset demo
  milk=$(put "$1" '{"code":"T-1","title":"Buy milk","people.name":"Ann","people.age":31,"priority":1}')
  call=$(put "$1" '{"code":"T-2","title":"Call Bob","people.name":"Bob","people.age":40,"priority":2}')
  put "$1" '{"code":"T-3","title":"Water plants","people.name":"Cy","people.age":9,"priority":0}' >/dev/null
}

put() { $tandem records put --store "$work/$1.store" --entity Todo "${@:2}"; }

# edit_offline FIRST SECOND: both edit T-1's title (SECOND later: it wins); FIRST deletes T-2
# while SECOND edits it (the delete wins); SECOND adds T-4.
edit_offline() {
  echo
  echo "-- offline: both edit the title of T-1 ($2 later); $1 deletes T-2 while $2 edits it; $2 adds T-4"
  put "$1" --id "${milk##*/}" '{"title":"Buy oat milk"}' >/dev/null
  sleep 0.05
  put "$2" --id "${milk##*/}" '{"title":"Buy milk and eggs"}' >/dev/null
  $tandem records delete --store "$work/$1.store" "$call"
  put "$2" --id "${call##*/}" '{"priority":0}' >/dev/null
  put "$2" '{"code":"T-4","title":"Book dentist","people.name":"Ann","people.age":31,"priority":1}' >/dev/null
}

# check_converged FIRST SECOND: prints FIRST's records and conflict log; exits 1 unless both
# stores hold the same records, the newer title won and the deleted record stayed deleted.
check_converged() {
  $tandem records list --store "$work/$1.store" --entity Todo > "$work/$1.json"
  $tandem records list --store "$work/$2.store" --entity Todo > "$work/$2.json"
  echo
  echo "-- converged records ($1):"
  python3 -c 'import json,sys
for r in json.load(open(sys.argv[1])):
    v = r["values"]
    print("  {}: {!r} (priority {})".format(v["code"], v["title"], v["priority"]))' "$work/$1.json"
  if ! cmp -s "$work/$1.json" "$work/$2.json"; then
    echo "demo: the stores diverged" >&2
    diff "$work/$1.json" "$work/$2.json" >&2 || true
    exit 1
  fi
  grep -q '"Buy milk and eggs"' "$work/$1.json" || { echo "demo: the newer title did not win" >&2; exit 1; }
  if grep -q '"T-2"' "$work/$1.json"; then echo "demo: the deleted record came back" >&2; exit 1; fi
  echo "$1 and $2 hold the same records."
  echo
  echo "-- conflict log ($1):"
  $tandem conflicts --store "$work/$1.store"
}
