#!/usr/bin/env bash
# Golden expansions of the spec language: `trainc print` of every tests/golden/language/NAME.spec
# must equal NAME.expected byte for byte (use ... from, "/global" names, math functions).
# UPDATE=1 rewrites the .expected files; review the diff before committing it.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; bad=0
for spec in tests/golden/language/*.spec; do
  name=$(basename "$spec" .spec)
  expected=${spec%.spec}.expected
  n=$((n + 1))
  rc=0
  "$TRAINC" print "$spec" >"$tmp/out" 2>"$tmp/err" || rc=$?
  # print expands without checking the net: check must pass too
  "$TRAINC" check "$spec" >/dev/null 2>>"$tmp/err" || rc=$((rc + 10))
  [ "${UPDATE:-0}" = 1 ] && [ "$rc" -eq 0 ] && cp "$tmp/out" "$expected"
  if [ "$rc" -ne 0 ]; then
    bad=$((bad + 1)); echo "FAIL $name: exit $rc"; head -20 "$tmp/err"
  elif [ ! -f "$expected" ]; then
    bad=$((bad + 1)); echo "FAIL $name: no $expected (UPDATE=1 creates it)"
  elif ! cmp -s "$expected" "$tmp/out"; then
    bad=$((bad + 1)); echo "FAIL $name: output differs from $expected"
    diff -u --label "$expected" --label "trainc print $spec" "$expected" "$tmp/out" | head -40
  fi
done
echo "$((n - bad)) of $n language goldens match"
[ "$n" -ge 3 ] || { echo "expected at least 3 language specs, found $n"; exit 1; }
[ "$bad" -eq 0 ]
