#!/usr/bin/env bash
# Every spec in specs/published/ builds as written (trainc build exits 0), and trains a few
# --benchmark steps (3 warm-up + 1) on a generated JPEG tree (tests/data/make_tree.py, 10 classes) read
# through its imagenet-folder pipeline. The run uses a spec that extends the published one
# and changes only what a CPU test can afford or the tree forces: the input size (32x32, and
# AlexNet keeps 224 because its adaptive pooling needs a 6x6 map), crop sizes to match,
# batch 2 per rank, 10 classes (the last linear layer), and one rank. Everything else
# (augmentation kinds and ranges, normalization, net body, solver, precision) is the paper's.
set -eu
BUILD=${BUILD:-build}
dir=$BUILD/test-data/published
rm -rf "$dir" && mkdir -p "$dir"
/usr/bin/python3 tests/data/make_tree.py "$dir/tree" 2 1 32 > /dev/null
here=$PWD
export BUILD dir here

one() {   # spec: build it as written, then the small variant, and run it
  set -eu
  spec=$1
  name=$(basename "$spec" .spec)
  "$BUILD/trainc" build "$spec" -o "$dir/$name.full" > "$dir/$name.full.log" 2>&1 ||
    { echo "trainc build $spec failed:"; cat "$dir/$name.full.log"; exit 1; }
  rm -rf "$dir/$name.full" "$dir/$name.full.src"   # large; built is what counts
  size=32; head=fc
  case $name in
    *alexnet*) size=224; head=classifier.6 ;;
    *convnext*) head=head.fc ;;
  esac
  cat > "$dir/$name.small.spec" <<SPEC
extends: "$here/$spec"
net { input_shape: [3, $size, $size] classes: 10 linear { name: "$head" out: 10 } }
data {
  train { batch_per_rank: 2 }
  val { batch_per_rank: 2 }
}
parallel { ranks: 1 }
SPEC
  # crop sizes follow the input: random_resized_crop / random_crop / center_crop when present
  python3 - "$dir/$name.small.spec" "$spec" "$size" <<'PY'
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
  "$BUILD/trainc" build "$dir/$name.small.spec" -o "$dir/$name" > "$dir/$name.log" 2>&1 ||
    { echo "trainc build of the small $name failed:"; cat "$dir/$name.small.spec" "$dir/$name.log"; exit 1; }
  OMP_NUM_THREADS=1 "$dir/$name" --data "$dir/tree" --out "$dir/$name.run" --benchmark 1 --decode-threads 1 \
    > "$dir/$name.out" 2>&1 || { echo "$name --benchmark 1 failed:"; cat "$dir/$name.out"; exit 1; }
  grep -q "^benchmark:" "$dir/$name.out" || { echo "$name printed no benchmark line"; cat "$dir/$name.out"; exit 1; }
  echo "$name: $(grep '^benchmark:' "$dir/$name.out")"
  rm -rf "$dir/$name" "$dir/$name.src"
}
export -f one
# Two at a time: builds wait on the C compiler's I/O as much as on a core.
ls specs/published/*.spec | xargs -P 2 -I{} bash -c 'one {}'
n=$(ls "$dir"/*.out | wc -l)
total=$(ls specs/published/*.spec | wc -l)
[ "$n" -eq "$total" ] || { echo "only $n of $total published specs ran"; exit 1; }
echo "$n published specs built as written and ran --benchmark 1 (3 warm-up steps + 1) on the JPEG tree"
