#!/usr/bin/env bash
# specs/REFERENCE.md is exactly what `trainc schema --markdown` prints from schema.def, so
# the field reference can never drift from the schema (`make reference` regenerates it).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
"$TRAINC" schema --markdown > "$tmp" || { echo "FAIL: trainc schema --markdown exited $?"; exit 1; }
if ! cmp -s "$tmp" specs/REFERENCE.md; then
  echo "FAIL: specs/REFERENCE.md is stale; run 'make reference' and commit it"
  diff -u --label specs/REFERENCE.md --label "trainc schema --markdown" specs/REFERENCE.md "$tmp" | head -30
  exit 1
fi
# Every schema message has its section (a sanity check on the generator itself).
n=$(grep -c '^SCHEMA_MESSAGE(' compiler/check/schema.def)
h=$(grep -c '^## `' specs/REFERENCE.md)
[ "$n" -eq "$h" ] || { echo "FAIL: $n schema messages but $h sections in specs/REFERENCE.md"; exit 1; }
echo "specs/REFERENCE.md matches trainc schema --markdown ($h messages)"
