#!/usr/bin/env bash
# make bench-project: how far `trainc project` is from what it projects.
# 1. For each example spec: the projection from a 20-step --benchmark of its CPU trainer
#    here, against the wall time of a real 1-epoch run (training and its evaluation), as a
#    ratio (target: within 15%). EPOCHS=N to run longer.
# 2. For every published spec with a published time or throughput: the roofline +
#    all-reduce projection on the system of that run (table below; hardware numbers in
#    compiler/cmd/project_tables.c, `trainc project --systems`), against the published figure.
# Prints two markdown tables for bench/RESULTS.md.
set -eu
BUILD=${BUILD:-build}
TRAINC=$BUILD/trainc
dir=$BUILD/bench/project
mkdir -p "$dir"
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

echo "| example spec | projected epoch (20-step benchmark) | measured 1-epoch run | projected / measured |"
echo "|---|---|---|---|"
for spec in specs/examples/*.spec; do
  name=$(basename "$spec" .spec)
  "$TRAINC" build "$spec" -o "$dir/$name" > /dev/null
  rm -rf "$dir/$name-bench" "$dir/$name-run"
  "$dir/$name" --benchmark 20 --out "$dir/$name-bench" > /dev/null
  proj=$("$TRAINC" project "$spec" --benchmark "$dir/$name-bench/benchmark.jsonl" | grep machine-readable)
  epoch=$(echo "$proj" | field epoch_s); eval_s=$(echo "$proj" | field eval_s)
  "$dir/$name" --epochs "${EPOCHS:-1}" --out "$dir/$name-run" > /dev/null
  wall=$(grep '"event":"summary"' "$dir/$name-run/metrics.jsonl" | sed 's/.*"wall_s":\([0-9.e+-]*\).*/\1/')
  awk -v n="$name" -v e="$epoch" -v v="$eval_s" -v w="$wall" -v k="${EPOCHS:-1}" 'BEGIN {
    p = k * (e + v); printf "| %s | %.1f s (%.1f train + %.1f eval) | %.1f s | %.2f |\n", n, p, k * e, k * v, w, p / w }'
done

echo
echo "| published spec | system | GPUs | projected | published | projected / published |"
echo "|---|---|---|---|---|---|"
while read -r spec system; do
  out=$("$TRAINC" project "specs/published/$spec.spec" --system "$system")
  line=$(echo "$out" | grep machine-readable)
  ranks=$(echo "$out" | head -1 | sed 's/.*: \([0-9]*\) ranks.*/\1/')
  pub=$(echo "$line" | field published_s); ips=$(echo "$line" | field published_ips)
  if [ "$ips" != "-1" ]; then
    proj=$(echo "$line" | field images_per_s)
    awk -v s="$spec" -v y="$system" -v r="$ranks" -v p="$proj" -v q="$ips" 'BEGIN {
      printf "| %s | %s | %s | %.0f images/s | %.0f images/s | %.2f |\n", s, y, r, p, q, p / q }'
  else
    case $pub in
      */epoch) proj=$(echo "$line" | field epoch_s); pub=${pub%/epoch}; unit=" per epoch" ;;
      *) proj=$(echo "$line" | field total_s); unit="" ;;
    esac
    awk -v s="$spec" -v y="$system" -v r="$ranks" -v p="$proj" -v q="$pub" -v u="$unit" 'BEGIN {
      printf "| %s | %s | %s | %.0f s%s | %.0f s%s | %.2f |\n", s, y, r, p, u, q, u, p / q }'
  fi
done <<'RUNS'
goyal_resnet50_256gpu big-basin
ibm_hal_resnet50_2gpu hal
ibm_hal_resnet50_64gpu hal
intelcaffe_resnet50_448node skylake-cluster
intelcaffe_resnet50_448node_part2 skylake-cluster
juwels_resnet152_step juwels-booster
juwels_resnet152_step_1024gpu juwels-booster
juwels_resnet50_cosine_1024gpu juwels-booster
juwels_resnet50_exponential_1024gpu juwels-booster
juwels_resnet50_step juwels-booster
juwels_resnet50_step_1024gpu juwels-booster
mxnet_1080ti_resnet50_1gpu 1080ti-cluster
mxnet_1080ti_resnet50_64gpu 1080ti-cluster
RUNS
