#!/usr/bin/env bash
# Golden diagnostics: runs `trainc check` on every tests/golden/errors/NAME.spec and
# compares its stderr, byte for byte, with NAME.expected; the exit code must be 1 and
# stdout empty. Helper files pulled in by include/extends end in .inc and are not run.
# UPDATE=1 rewrites the .expected files from the current output: review every change
# (git diff) before committing it; an unclear message is a bug, not a new golden.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

n=0; bad=0
for spec in tests/golden/errors/*.spec; do
  name=$(basename "$spec" .spec)
  expected=${spec%.spec}.expected
  n=$((n + 1))
  rc=0
  "$TRAINC" check "$spec" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/err" "$expected"
  fi
  problems=""
  [ "$rc" -eq 1 ] || problems="$problems exit code $rc (want 1);"
  [ -s "$tmp/out" ] && problems="$problems unexpected stdout;"
  if [ ! -f "$expected" ]; then
    problems="$problems no $expected (UPDATE=1 creates it);"
  elif ! cmp -s "$expected" "$tmp/err"; then
    problems="$problems stderr differs from $expected;"
  fi
  if [ -n "$problems" ]; then
    bad=$((bad + 1))
    echo "FAIL $name:$problems"
    [ -f "$expected" ] && diff -u --label "$expected" --label "actual stderr" "$expected" "$tmp/err" | head -40
    [ -s "$tmp/out" ] && head -5 "$tmp/out" | sed 's/^/  stdout: /'
  fi
done
echo "$((n - bad)) of $n golden diagnostics match"
[ "$n" -ge 30 ] || { echo "expected at least 30 golden specs, found $n"; exit 1; }
[ "$bad" -eq 0 ]
