#!/usr/bin/env bash
# The operator's dashboard in a real browser: a real tandem-server on loopback with an
# operator, two users' datasets and a pushed record; headless Chromium (Debian's chromium,
# installed when missing) signs in with the form and the page is checked: the datasets and
# users appear, signed in. A screenshot is written to .build/dashboard.png for people to look
# at. Skipped with a message only where Chromium cannot be installed.
# Usage: Scripts/test-dashboard-browser.sh [tandem-server binary] (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
server="${1:-Server/.build/debug/tandem-server}"
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
mkdir -p .build
shown=$(python3 Scripts/dashboard_browser.py "$base" "$ops" .build/dashboard.png)
python3 - "$shown" <<'PY'
import json, sys
shown = json.loads(sys.argv[1])
problems = []
if shown["path"] != "/admin": problems.append(f"the browser is at {shown['path']}, not /admin")
if not shown["signedIn"]: problems.append("no sign-out form: not signed in with a session")
names = [row[0] for row in shown["datasets"]]
if names != ["bob/groceries", "bob/todos"]: problems.append(f"datasets shown: {names}")
users = {row[0]: row[1] for row in shown["users"]}
if users != {"bob": "user", "ops": "operator"}: problems.append(f"users shown: {users}")
if problems:
    sys.exit("dashboard browser test failed: " + "; ".join(problems) + f"\npage: {shown}")
print(f"dashboard browser test: signed in, {len(names)} datasets and {len(users)} users shown; screenshot .build/dashboard.png")
PY
