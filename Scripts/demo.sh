#!/usr/bin/env bash
# The main job, walked through: create a store, save, query, URI round trip, reopen; then
# a breaking schema change refused by `tandem schema check`.
# Usage: Scripts/demo.sh [directory]   (default: a fresh temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build --product TandemDemo
swift build --product tandem
.build/debug/TandemDemo "$@"

echo
echo "== Schema check: release 2 of the models against release 1 =="
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.build/debug/tandem schema extract Examples/SchemaVersions/v1 -o "$work/release-1.json"
echo "released schema written: release-1.json ($(wc -c < "$work/release-1.json") bytes)"
status=0
NO_COLOR=1 .build/debug/tandem schema check --baseline "$work/release-1.json" --candidate Examples/SchemaVersions/v2 || status=$?
if [ "$status" -ne 1 ]; then
    echo "demo: expected tandem schema check to refuse release 2 (exit 1), got exit $status" >&2
    exit 1
fi
echo "refused as expected (exit 1): fix the breaking changes before releasing."
