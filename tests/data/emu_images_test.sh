#!/usr/bin/env bash
# imagenet-folder through the CUDA backend without a GPU (tests/emu/'s emulator, ASan/UBSan):
# a small BF16 ResNet on a tiny JPEG tree (make_tree.py), built with --layout nhwc, so the
# loader hands the device channels-last bytes, which the device normalizes in place. Its
# losses follow the CPU trainer's FP32 losses on the same samples within 5e-2 relative
# (tests/emu's bound for BF16), step by step. (The NCHW byte path is tests/emu/emu_test.sh's.)
set -eu
source tests/lib.sh
if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  echo "SKIP: the CUDA headers are not installed: the emulated CUDA backend did not run"; exit 0
fi
dir=$BUILD/test-data/emu_images
rm -rf "$dir" && mkdir -p "$dir"
nice make -s emu BUILD="$BUILD" > "$dir/make.log" 2>&1 || { echo "building the emulator failed:"; tail -20 "$dir/make.log"; exit 1; }
export TRAINC_CUDA_ENV=$(pwd)/$BUILD/emu/cuda.env ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
"$PY" tests/data/make_tree.py "$dir/tree" 2 1 16
spec() {  # precision block -> the spec on stdout
  cat <<SPEC
name: "emu_images"
seed: 3
net {
  input_shape: [3, 12, 12]
  classes: 10
  conv { name: "stem" out: 8 kernel: 3 pad: 1 bias: false }
  bn { name: "stem_bn" }
  relu { name: "stem_relu" }
  conv { name: "conv1" out: 8 kernel: 3 pad: 1 bias: false }
  bn { name: "bn1" }
  add { name: "add" inputs: ["bn1", "stem_relu"] }
  relu { name: "relu" }
  gap { name: "pool" }
  linear { name: "fc" out: 10 }
}
data {
  train {
    source: "imagenet-folder"
    batch_per_rank: 4
    augment { random_resized_crop { size: 12 scale: [0.5, 1.0] } flip: true }
    normalize { mean: [0.3, 0.25, 0.2] std: [0.35, 0.3, 0.25] }
  }
  val { source: "imagenet-folder" batch_per_rank: 5 resize: 12 center_crop: 12 normalize { mean: [0.3, 0.25, 0.2] std: [0.35, 0.3, 0.25] } }
  train_samples: 20
  decode_threads: 2
}
solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.02 } }
$1
SPEC
}
spec "" > "$dir/fp32.spec"
spec "precision { compute: BF16 }" > "$dir/bf16.spec"
"$BUILD/trainc" build "$dir/fp32.spec" -o "$dir/cpu" > "$dir/cpu.build.log"
"$BUILD/trainc" build "$dir/bf16.spec" -o "$dir/nhwc" --backend cuda --layout nhwc > "$dir/nhwc.build.log" 2>&1 ||
  { echo "trainc build --backend cuda --layout nhwc failed:"; tail -20 "$dir/nhwc.build.log"; exit 1; }
for b in cpu nhwc; do
  "$dir/$b" --data "$dir/tree" --out "$dir/$b.run" > "$dir/$b.log" 2>&1 || { echo "$b trainer failed:"; tail -20 "$dir/$b.log"; exit 1; }
done
for b in nhwc; do
  r=$("$PY" tests/gpu/compare_runs.py "$dir/$b.run/metrics.jsonl" "$dir/cpu.run/metrics.jsonl" 5e-2) ||
    { echo "imagenet-folder, cuda BF16 $b vs CPU FP32:"; echo "$r"; exit 1; }
  echo "imagenet-folder, emulated cuda BF16 --layout $b vs CPU FP32: $(echo "$r" | head -1)"
done
