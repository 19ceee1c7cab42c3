#!/usr/bin/env bash
# Golden `trainc show` output for every model spec, every example, and a few published runs
# whose run summaries cover warmup, scaling and several schedules: tests/golden/show/NAME.txt
# holds the exact stdout of `trainc show specs/.../NAME.spec`. UPDATE=1 rewrites the files from
# the current output; review the diff before committing it.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; bad=0
for spec in specs/models/*.spec specs/examples/*.spec \
            specs/published/{ibm_hal_resnet50_64gpu,juwels_resnet50_cosine_1024gpu,intelcaffe_resnet50_448node_part2,goyal_resnet50_256gpu}.spec; do
  model=$(basename "$spec" .spec)
  golden=tests/golden/show/$model.txt
  n=$((n + 1))
  if ! "$TRAINC" show "$spec" >"$tmp/out" 2>"$tmp/err"; then
    bad=$((bad + 1)); echo "FAIL $model: trainc show failed"; head -20 "$tmp/err"; continue
  fi
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/out" "$golden"
  if [ ! -f "$golden" ]; then
    bad=$((bad + 1)); echo "FAIL $model: no $golden (UPDATE=1 creates it)"
  elif ! cmp -s "$golden" "$tmp/out"; then
    bad=$((bad + 1)); echo "FAIL $model: output differs from $golden"
    diff -u --label "$golden" --label "trainc show $spec" "$golden" "$tmp/out" | head -40
  fi
done
echo "$((n - bad)) of $n show goldens match"
[ "$bad" -eq 0 ]
