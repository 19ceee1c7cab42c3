#!/usr/bin/env bash
# `make bench-gpu`: training throughput (img/s, synthetic data, batch 256) of ResNet-50,
# AlexNet, ConvNeXt-Tiny, ViT-B/16 and EfficientNet-B0, our CUDA trainer vs PyTorch on the same
# GPU in the same run (AMP, channels_last, the faster of eager and torch.compile). Prints one
# RESULTS.md row per model and precision with the ratio as N.NN×, plus the GPU busy fraction of
# our trainer (sampled with nvidia-smi), and our img/s without CUDA graphs (--no-graph) beside
# it, each net built NCHW and, where it allows, channels-last (--layout nhwc; the faster is the
# row's figure, both are in the last column; ViT-B/16's token layers refuse nhwc, so its rows
# are NCHW); then the time for the Fashion-MNIST example to reach 92% (bench/time_to_acc.sh).
# Needs a GPU: without one it fails, loudly. A trainer that fails to build or run is a
# "failed" row and the script ends non-zero.
# Environment: BUILD, MODELS (default "resnet50 alexnet convnext_tiny vit_b_16
# efficientnet_b0"), PRECISIONS (default "bf16 fp16"), STEPS (our --benchmark steps, default
# 30), PYTHON (default python3).
set -u
BUILD=${BUILD:-build}
MODELS=${MODELS:-resnet50 alexnet convnext_tiny vit_b_16 efficientnet_b0}
PRECISIONS=${PRECISIONS:-bf16 fp16}
STEPS=${STEPS:-30}
PYTHON=${PYTHON:-python3}
out=$BUILD/bench-gpu
mkdir -p "$out"
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "error: make bench-gpu needs an NVIDIA GPU and driver, and this machine has none (nvidia-smi -L failed)" >&2
  echo "HINT: run it on a GPU machine" >&2
  exit 1
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
date=$(date -u +%Y-%m-%d)
rows=$out/rows.md
: > "$rows"
missing=0

# Runs our trainer's benchmark; prints img/s and the mean GPU utilization while it ran, then
# img/s with --no-graph (every op launched from the host). A build that fails prints
# "nobuild": for --layout nhwc that is a net the layout refuses (lower.c check_nhwc: a
# per-feature op on a flattened tensor with positions); every benchmark net builds.
ours() {  # spec, tag, extra build flags...
  local spec=$1 tag=$2 bin=$out/$2
  shift 2
  "$BUILD/trainc" build "$spec" --backend cuda -o "$bin" "$@" > "$out/$tag.build.log" 2>&1 ||
    { echo "nobuild ? nobuild"; return; }
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$out/$tag.util" 2>/dev/null &
  local mon=$!
  "$bin" --benchmark "$STEPS" --out "$out/$tag.run" > "$out/$tag.log" 2>&1
  kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
  "$bin" --benchmark "$STEPS" --no-graph --out "$out/$tag.nograph.run" > "$out/$tag.nograph.log" 2>&1
  local ips util ng
  ips=$(sed -n 's/^benchmark: .* \([0-9.]*\) images\/s$/\1/p' "$out/$tag.log")
  ng=$(sed -n 's/^benchmark: .* \([0-9.]*\) images\/s$/\1/p' "$out/$tag.nograph.log")
  util=$(awk '{ s += $1; n++ } END { if (n) printf "%.0f", s / n }' "$out/$tag.util")
  echo "${ips:-failed} ${util:-?} ${ng:-failed}"
}

better() { awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 > a + 0) ? "nhwc" : "nchw" }'; }

printf '| date | GPU | model | precision | command | trainc img/s (layout) | PyTorch img/s (mode) | ratio | GPU busy (ours) | trainc --no-graph img/s | trainc NCHW / NHWC img/s |\n' | tee -a "$rows"
printf '|---|---|---|---|---|---|---|---|---|---|---|\n' | tee -a "$rows"
for m in $MODELS; do
  spec=bench/specs/gpu_$m.spec
  for p in $PRECISIONS; do
    P=$(echo "$p" | tr a-z A-Z)
    printf 'extends: "%s/%s"\nprecision { compute: %s }\n' "$(pwd)" "$spec" "$P" > "$out/${m}_$p.spec"
    read -r ips util ng < <(ours "$out/${m}_$p.spec" "${m}_$p")
    [ "$ips" = failed ] || [ "$ips" = nobuild ] && missing=1
    # Channels-last where the net allows it (trainc build --layout nhwc); the faster layout
    # is the row's figure, both are in the last column.
    read -r nips nutil nng < <(ours "$out/${m}_$p.spec" "${m}_${p}_nhwc" --layout nhwc)
    [ "$nips" = failed ] && missing=1
    nchw_ips=$ips layout=nchw
    if [ "$(better "$ips" "$nips")" = nhwc ]; then ips=$nips util=$nutil ng=$nng layout=nhwc; fi
    ref=$("$PYTHON" bench/torch_gpu_ref.py "$m" "$p" 2> "$out/${m}_$p.torch.err" | tee "$out/${m}_$p.torch.log" | tail -1)
    tips=$(echo "$ref" | "$PYTHON" -c 'import json,sys; r=json.loads(sys.stdin.read() or "{}"); print(r.get("best_img_per_s","failed"), r.get("best_mode","-"))' 2>/dev/null || echo "failed -")
    read -r t_ips t_mode <<< "$tips"
    ratio=$(awk -v a="$ips" -v b="$t_ips" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f×", a / b; else print "n/a" }')
    printf '| %s | %s | %s | %s | `make bench-gpu` | %s (%s) | %s (%s) | %s | %s%% | %s | %s / %s |\n' "$date" "$gpu" \
      "$m" "$P" "$ips" "$layout" "$t_ips" "$t_mode" "$ratio" "$util" "$ng" "$nchw_ips" "$nips" | tee -a "$rows"
  done
done
# The Fashion-MNIST example to 92% test top-1, ours vs PyTorch with the same net and recipe.
echo | tee -a "$rows"
BUILD=$BUILD PYTHON=$PYTHON bash bench/time_to_acc.sh 2> "$out/tta.err" | tee -a "$rows" ||
  { cat "$out/tta.err" >&2; missing=1; }
echo "rows written to $rows (copy them into bench/RESULTS.md)"
[ "$missing" -eq 0 ] || { echo "error: some of our trainers failed to build or run (logs in $out)" >&2; exit 1; }
