#!/usr/bin/env bash
# Golden `trainc diff` output: tests/golden/diff/NAME.txt holds the exact stdout of
# `trainc diff A B` for the pairs below (the published comparisons the diff is meant to
# explain, and two identical trainings); the exit status must be 1 for different runs and 0
# for the same one. Messages switched on by presence (warmup, ema, init, val, fillers) print
# one line "(absent) -> {fields written}" when one spec lacks them, never invented defaults. UPDATE=1 rewrites the files; review the diff before committing it.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# A spec that differs from fmnist_mlp only in its descriptive fields: the same run.
sed -e 's/^name: .*/name: "renamed"/' -e 's/^description: .*/description: "edited"/' \
  specs/examples/fmnist_mlp.spec > "$tmp/renamed.spec"
# One side with a filler / warmup / EMA the other lacks; an EMA written out at its defaults
# against an empty one (the same run).
sed 's/linear { name: "fc1" out: 128 }/linear { name: "fc1" out: 128 weight_filler { type: GAUSSIAN std: 0.01 } }/' \
  specs/examples/fmnist_mlp.spec > "$tmp/filler.spec"
sed 's/lr { base: 0.05 schedule/lr { base: 0.05 warmup { epochs: 0.5 start_factor: 0.1 } schedule/' \
  specs/examples/fmnist_mlp.spec > "$tmp/warmup.spec"
sed 's/^  epochs: 1$/  epochs: 1 ema { }/' specs/examples/fmnist_mlp.spec > "$tmp/ema_empty.spec"
sed 's/^  epochs: 1$/  epochs: 1 ema { decay: 0.99998 every_iterations: 32 }/' specs/examples/fmnist_mlp.spec > "$tmp/ema_written.spec"
n=0; bad=0
while read -r name a b want; do
  n=$((n + 1))
  a=${a/TMP/$tmp}; b=${b/TMP/$tmp}
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
goyal_vs_nvidia_dle specs/published/goyal_resnet50_256gpu.spec specs/published/nvidia_dle_resnet50_8xa100.spec 1
he_caffe_vs_goyal specs/published/he_resnet50_caffe.spec specs/published/goyal_resnet50_256gpu.spec 1
filler_one_sided specs/examples/fmnist_mlp.spec TMP/filler.spec 1
warmup_one_sided specs/examples/fmnist_mlp.spec TMP/warmup.spec 1
ema_one_sided specs/examples/fmnist_mlp.spec TMP/ema_empty.spec 1
ema_defaults_written TMP/ema_empty.spec TMP/ema_written.spec 0
PAIRS
echo "$((n - bad)) of $n diff goldens match"
[ "$bad" -eq 0 ]
