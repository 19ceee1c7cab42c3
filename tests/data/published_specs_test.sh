#!/usr/bin/env bash
# Every spec in specs/published/ builds as written (trainc build exits 0), and trains a few
# --benchmark steps (3 warm-up + 1) on a generated JPEG tree (tests/data/make_tree.py, 10 classes) read
# through its imagenet-folder pipeline. The run uses a spec that extends the published one
# and changes only what a CPU test can afford or the tree forces: the input size (32x32, and
# AlexNet and VGG-16 keep 224 because their adaptive pooling needs a 6x6 or 7x7 map), crop sizes to match,
# batch 2 per rank, 10 classes (the last linear layer), and one rank. Everything else
# (augmentation kinds and ranges, normalization, net body, solver, precision) is the paper's.
set -eu
source tests/lib.sh
dir=$BUILD/test-data/published
rm -rf "$dir" && mkdir -p "$dir"
"$PY" tests/data/make_tree.py "$dir/tree" 2 1 32 > /dev/null
here=$PWD
# FP16 is a GPU precision: the CPU backend refuses it at build time, so a spec that asks for it
# is built as written with --backend cuda (nvcc compiles it; nothing runs), and its small CPU
# variant trains in FP32, the one precision change the test makes. A spec with an init block
# (IntelCaffe part 2 continues part 1) starts from a checkpoint its small parent writes.
cuda_env=
if [ -n "$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)" ]; then
  # Its own cuda.env (tests run side by side: tests/cuda/cuda_build_test.sh's may be being
  # rewritten); the default sm_80 + sm_90 runtime it points to is built once, by whichever
  # test comes first (tests/cuda/), and the FP16 trainers' kernels are compiled for sm_90.
  cuda_env=$PWD/$dir/cuda.env
  make -s cuda CUDA_ARCHS="80 90" CUDA_KERNEL_ARCHS=90 CUDA_ENV="$cuda_env" > "$dir/make-cuda.log" 2>&1 ||
    { echo "make cuda failed:"; tail -20 "$dir/make-cuda.log"; exit 1; }
fi
export BUILD dir here cuda_env

one() {   # spec: build it as written, then the small variant, and run it
  set -eu
  spec=$1
  name=$(basename "$spec" .spec)
  local backend=cpu extra=""
  if "$BUILD/trainc" print "$spec" | grep -q "compute: FP16"; then
    backend=cuda; extra="precision { compute: FP32 loss_scale: NONE }"
  fi
  if [ $backend = cuda ] && [ -z "$cuda_env" ]; then
    echo "$name: FP16, no nvcc here: its CUDA build as written was not checked"
  else
    TRAINC_CUDA_ENV=$cuda_env "$BUILD/trainc" build "$spec" --backend $backend -o "$dir/$name.full" \
      > "$dir/$name.full.log" 2>&1 || { echo "trainc build $spec (--backend $backend) failed:"; cat "$dir/$name.full.log"; exit 1; }
  fi
  rm -rf "$dir/$name.full" "$dir/$name.full.src"   # large; built is what counts
  size=32; head=fc; vars=""; aux=""
  case $name in
    bvlc_alexnet) size=227; head=fc8 ;;   # Caffe imports keep Caffe's names
    bvlc_googlenet) size=224; head=loss3/classifier   # pool5 is 7x7: the full input
      # the auxiliary loss heads read 10 classes too
      aux='linear { name: "loss1/classifier" out: 10 } linear { name: "loss2/classifier" out: 10 }' ;;
    he_resnet50_caffe) size=224; head=fc1000 ;;
    *alexnet*|*vgg*) size=224; head=classifier.6 ;;   # adaptive pooling to 6x6 / 7x7 needs 224
    *convnext*) head=head.fc ;;
    *vit_b_16*|deit*) head=heads.head; vars="vars { image: $size }" ;;   # the position embedding follows the size
    *swin_t*) size=224; head=head ;;   # 7x7 windows need 224 (a 56x56 map after the 4x4 patches)
    # MobileNetV2 at 32x32 ends on 1x1 maps whose batch norm over 2 samples blows up at its
    # lr: torchvision's own mobilenet_v2 gives a NaN loss at step 3 there; 64 keeps 2x2
    torchvision_mobilenet_v2) size=64; head=classifier.1 ;;
    tf_efficientnet_b0) head=classifier.1 ;;
  esac
  cat > "$dir/$name.small.spec" <<SPEC
extends: "$here/$spec"
$vars
net { input_shape: [3, $size, $size] classes: 10 linear { name: "$head" out: 10 } $aux }
data {
  train_samples: 20   # the tree's sizes: a spec's ImageNet counts are refused on it
  val_samples: 10
  train { batch_per_rank: 2 }
  val { batch_per_rank: 2 }
}
parallel { ranks: 1 }
$extra
SPEC
  # crop sizes follow the input: random_resized_crop / random_crop / center_crop when present
  "$PY" - "$dir/$name.small.spec" "$spec" "$size" <<'PY'
import subprocess, sys
path, spec, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = subprocess.run(["build/trainc", "print", spec], capture_output=True, text=True).stdout
train, val = [], []
if "random_resized_crop" in text: train.append(f"augment {{ random_resized_crop {{ size: {size} }} }}")
elif "random_crop" in text: train.append(f"augment {{ random_crop {{ size: {size} }} }}")
if "center_crop" in text: val.append(f"resize: {size * 8 // 7} center_crop: {size}")
s = open(path).read()
s = s.replace("train { batch_per_rank: 2 }", "train { batch_per_rank: 2 " + " ".join(train) + " }")
s = s.replace("val { batch_per_rank: 2 }", "val { batch_per_rank: 2 " + " ".join(val) + " }")
open(path, "w").write(s)
PY
  local parent init_args=()
  parent=$("$BUILD/trainc" print "$spec" | awk '/^init \{/ { on = 1 } on && $1 == "spec:" { gsub(/"/, "", $2); print $2; exit }')
  if [ -n "$parent" ]; then   # the small parent trains two steps; its checkpoint is the start
    parent=$(basename "$parent" .spec)
    [ -f "$dir/$parent.small.spec" ] || { echo "$name: its init parent $parent has no small variant"; exit 1; }
    echo "init { spec: \"$here/$dir/$parent.parent.spec\" }" >> "$dir/$name.small.spec"
    # Two steps (one of warmup) are enough to write a checkpoint with the parent's tensors.
    printf 'extends: "%s"\nsolver { iterations: 2 lr { warmup { iterations: 1 } } }\n' \
      "$here/$dir/$parent.small.spec" > "$dir/$parent.parent.spec"
    "$BUILD/trainc" build "$dir/$parent.parent.spec" -o "$dir/$parent.parent" > "$dir/$parent.parent.log" 2>&1 ||
      { echo "trainc build of the small $parent failed:"; cat "$dir/$parent.parent.log"; exit 1; }
    OMP_NUM_THREADS=1 "$dir/$parent.parent" --data "$dir/tree" --out "$dir/$parent.parent.run" \
      --decode-threads 1 > "$dir/$parent.parent.train.log" 2>&1 ||
      { echo "$parent (init parent of $name), two steps, failed:"; tail -20 "$dir/$parent.parent.train.log"; exit 1; }
    local ckpt
    ckpt=$(ls -t "$dir/$parent.parent.run"/checkpoints/ckpt-*.bin 2>/dev/null | head -1)
    [ -n "$ckpt" ] || { echo "$parent wrote no checkpoint in $dir/$parent.parent.run"; exit 1; }
    init_args=(--init-from "$ckpt")
    rm -rf "$dir/$parent.parent" "$dir/$parent.parent.src"
  fi
  "$BUILD/trainc" build "$dir/$name.small.spec" -o "$dir/$name" > "$dir/$name.log" 2>&1 ||
    { echo "trainc build of the small $name failed:"; cat "$dir/$name.small.spec" "$dir/$name.log"; exit 1; }
  OMP_NUM_THREADS=1 "$dir/$name" --data "$dir/tree" --out "$dir/$name.run" --benchmark 1 --decode-threads 1 \
    "${init_args[@]}" > "$dir/$name.out" 2>&1 || { echo "$name --benchmark 1 failed:"; cat "$dir/$name.out"; exit 1; }
  [ ${#init_args[@]} -eq 0 ] || grep -q "values from ${init_args[1]}" "$dir/$name.out" ||
    { echo "$name did not say it started from ${init_args[1]}"; cat "$dir/$name.out"; exit 1; }
  grep -q "^benchmark:" "$dir/$name.out" || { echo "$name printed no benchmark line"; cat "$dir/$name.out"; exit 1; }
  echo "$name: $(grep '^benchmark:' "$dir/$name.out")"
  rm -rf "$dir/$name" "$dir/$name.src"
}
export -f one
# Two at a time: builds wait on the C compiler's I/O as much as on a core.
# Specs with an init block last: they start from their parent's small variant.
with_init=$(grep -l '^init *{' specs/published/*.spec || true)
only=${PUBLISHED_ONLY:-.}   # a regex, to rerun some specs while debugging
ls specs/published/*.spec | grep -vxF "$with_init" | grep -E "$only" | xargs -P 2 -I{} bash -c 'one {}'
for spec in $with_init; do echo "$spec" | grep -qE "$only" && one "$spec"; done
n=$(ls "$dir"/*.out | wc -l)
total=$(ls specs/published/*.spec | wc -l)
[ "$only" != . ] || [ "$n" -eq "$total" ] || { echo "only $n of $total published specs ran"; exit 1; }
echo "$n published specs built as written and ran --benchmark 1 (3 warm-up steps + 1) on the JPEG tree"
