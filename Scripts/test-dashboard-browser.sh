#!/usr/bin/env bash
# The operator's dashboard in a real browser: a real tandem-server on loopback with an
# operator and two datasets; two real stores sync one of them with the real `tandem` (bob's,
# and carol's, a reader whose edit the server refuses: it waits in her quarantine, pending);
# headless Chromium (Debian's chromium, installed when missing) signs in with the form and the
# page is checked: the datasets, users and both clients appear, and each client's pending and
# behind figures are the ones its own `tandem status --server --json` prints. A screenshot is
# written to .build/dashboard.png for people to look at. Skipped with a message only where
# Chromium cannot be installed.
# Usage: Scripts/test-dashboard-browser.sh [tandem-server binary] [tandem binary]
# (default: the debug builds)
set -euo pipefail
cd "$(dirname "$0")/.."
server="${1:-Server/.build/debug/tandem-server}"
tandem="${2:-.build/debug/tandem}"
if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } >/dev/null 2>&1; then
        echo "SKIPPED: the dashboard browser test (Chromium could not be installed here: apt-get install chromium failed)"
        exit 0
    fi
fi
source Scripts/loopback-server.sh
start_loopback_server "$server" bob
"$server" users add ops --operator --data-dir "$data" >/dev/null
ops=$("$server" tokens create ops --data-dir "$data")
curl -sf -X PUT -H "Authorization: Bearer $token" "$base/v1/datasets/groceries" >/dev/null
curl -sf -X PUT -H "Authorization: Bearer $token" "$base/v1/datasets/todos" >/dev/null
# bob syncs two records; carol, a reader, pulls them, and her own record is refused (pending);
# bob adds a third, which carol has not pulled (behind).
echo "$token" > "$data/bob.token"
"$server" users add carol --data-dir "$data" >/dev/null
"$server" tokens create carol --data-dir "$data" > "$data/carol.token"
"$server" datasets share bob/todos --with carol --role reader --data-dir "$data" >/dev/null
"$tandem" schema extract Examples/SchemaVersions/v1 -o "$data/schema.json"
for who in bob carol; do "$tandem" init --store "$data/$who.store" --schema "$data/schema.json" --dataset todos >/dev/null; done
put() { "$tandem" records put --store "$data/$1.store" --entity Todo "$2" >/dev/null; }
put bob '{"code":"T-1","title":"Buy milk","people.name":"Ann","people.age":31,"priority":1}'
put bob '{"code":"T-2","title":"Call Bob","people.name":"Bob","people.age":40,"priority":2}'
"$tandem" sync --store "$data/bob.store" --server "$base" --token-file "$data/bob.token" >/dev/null
put carol '{"code":"T-9","title":"Carol suggests","people.name":"Cy","people.age":9,"priority":0}'
if "$tandem" sync --store "$data/carol.store" --server "$base" --dataset bob/todos --token-file "$data/carol.token" >/dev/null 2>&1; then
    echo "dashboard browser test: a reader's push was expected to be refused" >&2
    exit 1
fi
put bob '{"code":"T-3","title":"Water plants","people.name":"Cy","people.age":9,"priority":0}'
"$tandem" sync --store "$data/bob.store" --server "$base" --token-file "$data/bob.token" >/dev/null
bob_status=$("$tandem" status --store "$data/bob.store" --server "$base" --token-file "$data/bob.token" --json)
carol_status=$("$tandem" status --store "$data/carol.store" --server "$base" --dataset bob/todos --token-file "$data/carol.token" --json)
mkdir -p .build
shown=$(python3 Scripts/dashboard_browser.py "$base" "$ops" .build/dashboard.png)
python3 - "$shown" "$bob_status" "$carol_status" <<'PY'
import json, sys
shown = json.loads(sys.argv[1])
statuses = {"bob": json.loads(sys.argv[2]), "carol": json.loads(sys.argv[3])}
problems = []
if statuses["carol"]["pendingChanges"] < 1: problems.append(f"carol's refused edit is not pending: {statuses['carol']}")
if statuses["carol"].get("behind", 0) < 1: problems.append(f"carol is not behind bob's last push: {statuses['carol']}")
sections = {section["dataset"]: section for section in shown["activity"]}
todos = sections.get("bob/todos")
if todos is None:
    problems.append(f"no activity section for bob/todos: {list(sections)}")
else:
    clients = {row[0]: row for row in todos["clients"]}
    for who, status in statuses.items():
        row = clients.get(status["client"])
        if row is None:
            problems.append(f"{who}'s client {status['client']} is not on the dashboard: {todos['clients']}")
            continue
        # Client, User, Last push, Last pull, Behind, Pending, Schema version
        if row[1] != who: problems.append(f"{who}'s client shows user {row[1]}")
        if row[4] != str(status.get("behind")): problems.append(f"{who}: the dashboard says {row[4]} behind, tandem status {status.get('behind')}")
        if row[5] != str(status["pendingChanges"]): problems.append(f"{who}: the dashboard says {row[5]} pending, tandem status {status['pendingChanges']}")
    if not any(event[1] == "refused" and "carol" in event[3] for event in todos["events"]):
        problems.append(f"carol's refused push is not among the events: {todos['events']}")
    if not todos["chart"]: problems.append("bob/todos has no chart")
if not shown["requestsChart"]: problems.append("no requests chart")
if shown["path"] != "/admin": problems.append(f"the browser is at {shown['path']}, not /admin")
if not shown["signedIn"]: problems.append("no sign-out form: not signed in with a session")
names = [row[0] for row in shown["datasets"]]
if names != ["bob/groceries", "bob/todos"]: problems.append(f"datasets shown: {names}")
users = {row[0]: row[1] for row in shown["users"]}
if users != {"bob": "user", "carol": "user", "ops": "operator"}: problems.append(f"users shown: {users}")
if problems:
    sys.exit("dashboard browser test failed: " + "; ".join(problems) + f"\npage: {shown}")
print(f"dashboard browser test: signed in, {len(names)} datasets and {len(users)} users shown, bob's and carol's clients with the pending and behind figures of their tandem status; screenshot .build/dashboard.png")
PY
