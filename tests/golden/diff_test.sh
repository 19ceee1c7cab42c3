#!/usr/bin/env bash
# Golden `trainc diff` output: tests/golden/diff/NAME.txt holds the exact stdout of
# `trainc diff A B` for the pairs below (the published comparisons the diff is meant to
# explain, and two identical trainings); the exit status must be 1 for different runs and 0
# for the same one. UPDATE=1 rewrites the files; review the diff before committing it.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
TRAINC=$BUILD/trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# A spec that differs from fmnist_mlp only in its descriptive fields: the same run.
sed -e 's/^name: .*/name: "renamed"/' -e 's/^description: .*/description: "edited"/' \
  specs/examples/fmnist_mlp.spec > "$tmp/renamed.spec"
n=0; bad=0
while read -r name a b want; do
  n=$((n + 1))
  b=${b/TMP/$tmp}
  "$TRAINC" diff "$a" "$b" > "$tmp/out" 2> "$tmp/err"; rc=$?
  golden=tests/golden/diff/$name.txt
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/out" "$golden"
  if [ "$rc" != "$want" ]; then
    bad=$((bad + 1)); echo "FAIL $name: exit $rc, expected $want"; head -5 "$tmp/err"
  elif ! cmp -s "$golden" "$tmp/out"; then
    bad=$((bad + 1)); echo "FAIL $name: output differs from $golden"
    diff -u --label "$golden" --label "trainc diff $a $b" "$golden" "$tmp/out" | head -40
  fi
done <<'PAIRS'
ibm_2_vs_64gpu specs/published/ibm_hal_resnet50_2gpu.spec specs/published/ibm_hal_resnet50_64gpu.spec 1
juwels_step_vs_cosine specs/published/juwels_resnet50_step_1024gpu.spec specs/published/juwels_resnet50_cosine_1024gpu.spec 1
resnet50_vs_resnet101 specs/models/resnet50.spec specs/models/resnet101.spec 1
goyal_vs_ibm specs/published/goyal_resnet50_256gpu.spec specs/published/ibm_hal_resnet50_64gpu.spec 1
intelcaffe_part1_vs_part2 specs/published/intelcaffe_resnet50_448node.spec specs/published/intelcaffe_resnet50_448node_part2.spec 1
torchvision_v1_vs_v2 specs/published/torchvision_resnet50_v1.spec specs/published/torchvision_resnet50_v2.spec 1
goyal_vs_mlperf_v40 specs/published/goyal_resnet50_256gpu.spec specs/published/mlperf_v40_resnet50_8xh100.spec 1
rsb_a2_vs_a3 specs/published/rsb_resnet50_a2.spec specs/published/rsb_resnet50_a3.spec 1
renamed_same_run specs/examples/fmnist_mlp.spec TMP/renamed.spec 0
PAIRS
echo "$((n - bad)) of $n diff goldens match"
[ "$bad" -eq 0 ]
