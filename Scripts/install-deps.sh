#!/usr/bin/env bash
# Installs the system packages Tandem builds against, and the tools its tests run (curl drives
# the real tandem-server process; python3 reads its database; faketime runs tandem with a wrong
# clock; PostgreSQL backs the server storage tests, in a throwaway cluster: Scripts/postgres.sh),
# when they are missing.
set -euo pipefail
missing=()
for pkg in libsqlite3-dev libcurl4-openssl-dev zlib1g-dev curl python3 faketime postgresql; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
