#!/usr/bin/env bash
# Every spec the repo ships (specs/models, examples, published) passes `trainc check`
# with no diagnostics. Partial specs under specs/published/recipes/ are only included.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
n=0; bad=0
for spec in specs/models/*.spec specs/examples/*.spec specs/published/*.spec; do
  n=$((n + 1))
  err=$("$TRAINC" check "$spec" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$err" ]; then
    bad=$((bad + 1)); echo "FAIL $spec (exit $rc)"; echo "$err" | head -20
  fi
done
echo "$((n - bad)) of $n specs check clean"
[ "$bad" -eq 0 ]
