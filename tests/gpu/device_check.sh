#!/usr/bin/env bash
# `make device-check`: the one prepared command for a lent GPU machine (the device tool's
# `run`, carrying .devdeps from `tests/gpu/device_prep.sh fetch`), inside DEVICE_CHECK_BUDGET
# seconds in all, the build included (default 450: the issue's 8 minutes less the transfers).
# In order, each phase given what the budget has left:
#  1. set-up (device_prep.sh) and PyTorch's peers started in the background: ResNet-50 BF16
#     and FP16, ConvNeXt-Tiny BF16 and AlexNet BF16 under torch.compile, AMP, channels_last, batch 256
#     (bench/torch_gpu_ref.py) compile and warm up while we build, then wait for a go;
#  2. the build (trainc, the CUDA runtime, test_ops_gpu, for sm_$CUDA_ARCHS), then our
#     benchmark trainers built side by side (ResNet-50 BF16/FP16 channels-last, ConvNeXt-Tiny
#     BF16 NCHW and channels-last, AlexNet BF16 NCHW) while test_ops_gpu (every CUDA op against the CPU) runs;
#  3. PyTorch's peers timed one at a time on a quiet machine, then ours: 30 --benchmark steps
#     each (AlexNet 300: at 30 its start-up hid the step), and the A/Bs: the kernels the H100
#     measured (TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old, in the binary built with
#     --no-conv-genstats) against today's, and
#     ResNet-50 built without each fusion (abflags: BF16 --no-relu-mask and --no-bn-add, BF16
#     and FP16 --no-conv-genstats: cuDNN's runtime-fusion and ConvBNfprop engines, neither
#     timed yet; FP16 --no-conv-sbr, --no-conv-dgrad-fuse and --no-bn-finalize-graph; BF16 and
#     FP16 --no-graph-autotune: the cuDNN graphs' engines untimed, the heuristics' first, with
#     each run's wall time, start-up included, beside it, which shows the timing's start-up
#     cost; BF16 --no-bn-fold: the block output's bn backward not folded through conv3,
#     whose cuBLASLt products are not timed yet) and ConvNeXt-Tiny without its residual tails (--no-residual-tail),
#     without pwconv1's bias gradient in the GELU's backward (--no-bias-act-grad) and with the
#     dwconv's bias in passes of its own (--no-dw-bias) and the stem conv's bias in passes of
#     its own, not in the stem's layer norm (--no-ln-bias), against the default;
#  4. one ResNet-50 BF16 channels-last step under Nsight Compute, compared op by op with
#     `trainc show --gpu-cost` (bench/gpu_profile_vs_model.py);
#  5. the rest of make test-gpu's single-GPU steps, as far as the budget goes (each step
#     that did not run is named).
# Everything goes to $OUT (the device tool's folder; default build/device-check):
# device-check.md (the rows for bench/RESULTS.md, ratios computed), profile.txt, tests.txt,
# and logs.tgz. Exits 1 if any phase failed or did not run.
set -u
BUDGET=${DEVICE_CHECK_BUDGET:-450}
OUT=${OUT:-build/device-check}
ARCH=${CUDA_ARCHS:-90}
STEPS=${STEPS:-30}
BUILD=${BUILD:-build}
export BUILD
w=$BUILD/device-check
rm -rf "$w" && mkdir -p "$w" "$OUT"
log=$w/session.log
report=$OUT/device-check.md
t0=$SECONDS
status=0
left() { echo $((BUDGET - (SECONDS - t0))); }
stamp() { printf '[%4ds] %s\n' $((SECONDS - t0)) "$*" | tee -a "$log"; }
pack() {
  stamp "done: $( [ $status -eq 0 ] && echo all phases passed || echo some phase failed or did not run); report in $report"
  { echo; echo "Phases (seconds since the start):"; echo; echo '```'; cat "$log"; echo '```'; } >> "$report"
  tar czf "$OUT/logs.tgz" "$w" build/test-gpu/*.log build/device-build.log 2>/dev/null
}
trap pack EXIT
limit() {  # seconds wanted -> what the budget allows (keeping 15 s for the report)
  local l; l=$(( $(left) - 15 )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"
}

# ---- 1. set-up, and PyTorch's peers compiling in the background ----------------------------
if [ -d .devdeps ]; then
  source tests/gpu/device_prep.sh install .devdeps >> "$log" 2>&1 || { stamp "device_prep failed"; exit 1; }
fi
nvidia-smi -L > /dev/null 2>&1 || { echo "error: make device-check needs an NVIDIA GPU (nvidia-smi -L failed)" >&2; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
{ nvidia-smi; nproc; python3 -c 'import torch; print("torch", torch.__version__)'; git log --oneline -1; } > "$w/env.txt" 2>&1
stamp "$gpu, $(nproc) cores, budget ${BUDGET} s, at $(git log --oneline -1 | cut -c1-60)"
peers="resnet50:bf16 resnet50:fp16 convnext_tiny:bf16 alexnet:bf16"
for cfg in $peers; do
  IFS=: read -r m p <<< "$cfg"
  steps=$STEPS; [ "$m" = alexnet ] && steps=$((STEPS * 10))
  python3 bench/torch_gpu_ref.py "$m" "$p" --modes compile --steps "$steps" --ready-file "$w/torch_$m.$p.ready" \
    --go-file "$w/torch_$m.$p.go" > "$w/torch_$m.$p.log" 2> "$w/torch_$m.$p.err" &
  echo $! > "$w/torch_$m.$p.pid"
done

# ---- 2. the build; our trainers built while the op test runs --------------------------------
if timeout "$(limit 240)" nice make -j"$(nproc)" trainc cuda test-gpu-build CUDA_ARCHS="$ARCH" > build/device-build.log 2>&1; then
  stamp "build ok"
  gpu_bin=$(ls -t "$BUILD"/cuda/sm"$ARCH"*/tests/test_ops_gpu 2>/dev/null | head -n 1)
else
  stamp "build FAILED"; tail -n 30 build/device-build.log | tee -a "$log"; status=1; exit 1
fi
ours="resnet50:bf16:nhwc resnet50:fp16:nhwc convnext_tiny:bf16:nchw convnext_tiny:bf16:nhwc alexnet:bf16:nchw"
builds=()
for cfg in $ours; do
  IFS=: read -r m p l <<< "$cfg"
  printf 'extends: "%s/bench/specs/gpu_%s.spec"\nprecision { compute: %s }\n' "$(pwd)" "$m" "${p^^}" > "$w/${m}_$p.spec"
  timeout "$(limit 200)" "$BUILD/trainc" build "$w/${m}_$p.spec" --backend cuda --layout "$l" -o "$w/${m}_${p}_$l" \
    > "$w/${m}_${p}_$l.build.log" 2>&1 &
  builds+=($!)
done
# the fusions' A/B: channels-last built without each (model:precision:flag of trainc build)
abflags="resnet50:bf16:--no-relu-mask resnet50:bf16:--no-bn-add resnet50:bf16:--no-conv-genstats resnet50:fp16:--no-conv-genstats resnet50:fp16:--no-conv-sbr resnet50:fp16:--no-conv-dgrad-fuse resnet50:fp16:--no-bn-finalize-graph resnet50:bf16:--no-graph-autotune resnet50:fp16:--no-graph-autotune resnet50:bf16:--no-bn-fold convnext_tiny:bf16:--no-residual-tail convnext_tiny:bf16:--no-bias-act-grad convnext_tiny:bf16:--no-dw-bias convnext_tiny:bf16:--no-ln-bias"
for ab in $abflags; do
  IFS=: read -r m p f <<< "$ab"
  timeout "$(limit 200)" "$BUILD/trainc" build "$w/${m}_$p.spec" --backend cuda --layout nhwc $f \
    -o "$w/${m}_${p}_nhwc$f" > "$w/${m}_${p}_nhwc$f.build.log" 2>&1 &
  builds+=($!)
done
if timeout "$(limit 90)" "${gpu_bin:?}" > "$w/test_ops_gpu.log" 2>&1; then
  stamp "test_ops_gpu: passed ($(tail -n 1 "$w/test_ops_gpu.log"))"
else
  stamp "test_ops_gpu: FAILED"; tail -n 20 "$w/test_ops_gpu.log" | tee -a "$log"; status=1
fi
wait "${builds[@]}"   # each under its own timeout
stamp "our trainers built: $(for cfg in $ours; do IFS=: read -r m p l <<< "$cfg"; [ -x "$w/${m}_${p}_$l" ] && printf '%s ' "$cfg" || printf '%s(FAILED) ' "$cfg"; done)"

# ---- 3. PyTorch timed, one at a time, then ours ---------------------------------------------
declare -A torch_ips
for cfg in $peers; do
  IFS=: read -r m p <<< "$cfg"
  pid=$(cat "$w/torch_$m.$p.pid")
  while [ ! -e "$w/torch_$m.$p.ready" ] && kill -0 "$pid" 2>/dev/null && [ "$(left)" -gt 90 ]; do sleep 1; done
  [ -e "$w/torch_$m.$p.ready" ] || { stamp "torch $cfg: not ready (compile failed or too slow): $(tail -n 1 "$w/torch_$m.$p.err" | cut -c1-200)"; kill "$pid" 2>/dev/null; status=1; continue; }
done
for cfg in $peers; do
  IFS=: read -r m p <<< "$cfg"
  [ -e "$w/torch_$m.$p.ready" ] || continue
  touch "$w/torch_$m.$p.go"
  timeout "$(limit 60)" tail --pid="$(cat "$w/torch_$m.$p.pid")" -f /dev/null
  torch_ips[$cfg]=$(tail -n 1 "$w/torch_$m.$p.log" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read() or "{}").get("best_img_per_s","failed"))' 2>/dev/null || echo failed)
  stamp "torch.compile $cfg: ${torch_ips[$cfg]} img/s"
done
bench() {  # tag binary env... -> img/s
  local tag=$1 bin=$2; shift 2
  [ -x "$bin" ] || { echo nobuild; return; }
  local steps=$STEPS; case $tag in alexnet*) steps=$((STEPS * 10));; esac   # its steps are ~14 ms: time the step, not start-up
  local t=$SECONDS
  env "$@" timeout "$(limit 90)" "$bin" --benchmark "$steps" --out "$w/$tag.run" > "$w/$tag.log" 2>&1
  echo $((SECONDS - t)) > "$w/$tag.wall"   # start-up included (the graphs' engine timing among it)
  sed -n 's/^benchmark: .* \([0-9.]*\) images\/s$/\1/p' "$w/$tag.log" | tail -n 1 | grep . || echo failed
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f×", a / b; else print "n/a" }'; }
date=$(date -u +%Y-%m-%d)
{
  echo "### $date make device-check on $gpu at $(git log --oneline -1 | cut -c1-9)"
  echo
  echo "| model | precision | layout | trainc img/s | torch.compile img/s | ratio |"
  echo "|---|---|---|---|---|---|"
} > "$report"
for cfg in $ours; do
  IFS=: read -r m p l <<< "$cfg"
  ips=$(bench "${m}_${p}_$l" "$w/${m}_${p}_$l")
  [[ $ips =~ ^[0-9] ]] || status=1
  t=${torch_ips[$m:$p]:-failed}
  echo "| $m | ${p^^} | $l | $ips | $t | $(ratio "$ips" "$t") |" >> "$report"
  stamp "ours $cfg: $ips img/s (torch.compile $t, $(ratio "$ips" "$t"))"
done
new=$(bench ab_new "$w/resnet50_bf16_nhwc")
# (the H100 measured no conv + genstats: the old kernels run in the binary built without it)
old=$(bench ab_old "$w/resnet50_bf16_nhwc--no-conv-genstats" TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old)
{ echo; echo "A/B, ResNet-50 BF16 channels-last: today's kernels $new img/s, the kernels the H100 measured (TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old, built with --no-conv-genstats) $old img/s: $(ratio "$new" "$old")"; } >> "$report"
stamp "A/B: new $new, old $old img/s"
for ab in $abflags; do
  IFS=: read -r m p f <<< "$ab"
  with=$new; [ "$m:$p" = resnet50:bf16 ] || with=$(grep "| $m | ${p^^} | nhwc |" "$report" | cut -d'|' -f5 | tr -d ' ')
  without=$(bench "ab_$m$p$f" "$w/${m}_${p}_nhwc$f")
  walls=""   # the start-up's share: the whole run's wall time with and without
  wtag=${m}_${p}_nhwc; [ "$m:$p" = resnet50:bf16 ] && wtag=ab_new   # the run "with" came from
  [ "$f" = --no-graph-autotune ] &&
    walls=" (wall time, start-up included: $(cat "$w/ab_$m$p$f.wall" 2>/dev/null || echo ?) s untimed, $(cat "$w/$wtag.wall" 2>/dev/null || echo ?) s timed)"
  echo "A/B, $m ${p^^} channels-last built $f: $without img/s against $with with the fusion: $(ratio "$with" "$without")$walls" >> "$report"
  stamp "A/B $m ${p^^} $f: $without img/s (with: $with)"
done

# ---- 4. one step's kernel profile against the model -----------------------------------------
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
bin=$w/resnet50_bf16_nhwc
if [ -n "$ncu" ] && [ -x "$bin" ] && [ "$(left)" -gt 60 ]; then
  "$BUILD/trainc" show --gpu-cost --layout nhwc --device "$(case "$gpu" in *H200*) echo h200;; *A100*) echo a100;; *) echo h100;; esac)" \
    "$w/resnet50_bf16.spec" > "$w/model.txt" 2> "$w/model.err"
  if TRAINC_CUDA_PROFILE_STEP=3 timeout "$(limit 150)" "$ncu" --profile-from-start off --metrics gpu__time_duration.sum \
       --cache-control none --clock-control none --csv --print-units base "$bin" --benchmark 4 --no-graph \
       --out "$w/profile.run" > "$w/profile.csv" 2> "$w/profile.err" &&
     python3 bench/gpu_profile_vs_model.py "$w/model.txt" "$w/profile.csv" > "$OUT/profile.txt" 2>> "$OUT/profile.txt"; then
    stamp "profile vs model: $(grep '^step' "$OUT/profile.txt")"
  else
    stamp "profile vs model FAILED: $(tail -n 3 "$w/profile.err" "$OUT/profile.txt" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"; status=1
  fi
  { echo; echo "One step under Nsight Compute (serialized kernel time) against show --gpu-cost:"; echo;
    grep '^step' "$OUT/profile.txt" 2>/dev/null; echo; echo '```'; sed -n '/^by kernel/,/^$/p' "$OUT/profile.txt" 2>/dev/null; echo '```'; } >> "$report"
else
  stamp "profile: not run (ncu ${ncu:-absent}, $(left) s left)"; status=1
fi

# ---- 5. the rest of make test-gpu's single-GPU steps ------------------------------------------
if [ "$(left)" -gt 40 ]; then
  GPU_TEST_BIN=$gpu_bin TEST_GPU_ONLY='^(ops_mix|fused|CUDA|FP16|BF16|FP32|fmnist|compute-sanitizer)' \
    timeout "$(limit 600)" bash tests/gpu/run_gpu_tests.sh > "$OUT/tests.txt" 2>&1 || status=1
  stamp "test-gpu: $(grep -c '^PASS' "$OUT/tests.txt") passed, $(grep -c '^FAIL' "$OUT/tests.txt") failed (of the single-GPU steps; tests.txt names any not reached)"
else
  stamp "test-gpu: no time left for the single-GPU steps"; status=1
fi
{ echo; echo "test-gpu (single-GPU steps):"; echo; echo '```'; grep -E '^(PASS|FAIL)' "$OUT/tests.txt" 2>/dev/null; echo '```'; } >> "$report"
for cfg in $peers; do IFS=: read -r m p <<< "$cfg"; kill "$(cat "$w/torch_$m.$p.pid")" 2>/dev/null; done
exit $status
