#!/usr/bin/env bash
# Where one training step's GPU time goes, kernel by kernel: builds each NET (a bench/specs
# gpu_NET.spec) at PRECISION and LAYOUT, runs it under Nsight Compute for the one step
# TRAINC_CUDA_PROFILE_STEP brackets (the cuDNN search at start-up stays out), and prints the
# kernels by total time (bench/gpu_kernel_summary.py). Needs a GPU and ncu.
#   bash bench/gpu_kernel_profile.sh convnext_tiny:bf16:nhwc resnet50:bf16:nchw
# Environment: BUILD (build), OUTDIR (where the CSVs go; default $BUILD/gpu-profile), STEP (3).
set -u
BUILD=${BUILD:-build}
OUTDIR=${OUTDIR:-$BUILD/gpu-profile}
STEP=${STEP:-3}
mkdir -p "$OUTDIR"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "error: ncu (Nsight Compute) not found" >&2; exit 1; }
status=0
for cfg in "$@"; do
  IFS=: read -r net prec layout <<< "$cfg"
  tag=${net}_${prec}_${layout:-nchw}
  printf 'extends: "%s/bench/specs/gpu_%s.spec"\nprecision { compute: %s }\n' "$(pwd)" "$net" "$(echo "$prec" | tr a-z A-Z)" \
    > "$OUTDIR/$tag.spec"
  "$BUILD/trainc" build "$OUTDIR/$tag.spec" --backend cuda --layout "${layout:-nchw}" -o "$OUTDIR/$tag" \
    > "$OUTDIR/$tag.build.log" 2>&1 || { echo "$tag: build failed"; tail -5 "$OUTDIR/$tag.build.log"; status=1; continue; }
  TRAINC_CUDA_PROFILE_STEP=$STEP "$ncu" --profile-from-start off --metrics gpu__time_duration.sum --cache-control none --clock-control none --csv \
    --print-units base "$OUTDIR/$tag" --benchmark $((STEP + 1)) --no-graph --out "$OUTDIR/$tag.run" \
    > "$OUTDIR/$tag.csv" 2> "$OUTDIR/$tag.err" || { echo "$tag: ncu failed"; tail -5 "$OUTDIR/$tag.err"; status=1; continue; }
  echo "== $tag"
  python3 bench/gpu_kernel_summary.py "$OUTDIR/$tag.csv" || status=1
done
exit $status
