#!/usr/bin/env bash
# trainc export --format onnx: the inference graph (opset 13) of every op kind, through
# onnx.proto compiled by protobuf-c. tests/gpu/specs/ops_mix.spec (conv, bn, add, lrn, maxpool,
# depthwise conv, ln, gelu, layer_scale, stochastic depth, concat, avgpool, gap, linear,
# dropout, fused ReLUs), the LeNet example and ConvNeXt-Tiny at 32x32 each train a few steps;
# each export passes Debian python3-onnx's onnx.checker (full check) and, evaluated node by
# node with torch (tests/interop/onnx_check.py), gives the trainer's --predict logits.
# A checkpoint of another spec and a within-channel LRN are refused with one message.
set -eu
source tests/lib.sh
py="$PY"
dir=$BUILD/test-interop/onnx_export
rm -rf "$dir" && mkdir -p "$dir/img28" "$dir/img32" "$dir/img16"
export OMP_NUM_THREADS=1
$py - "$dir" <<'PY'
import sys
import numpy as np
from PIL import Image
rng = np.random.default_rng(11)
for i in range(4):
    Image.fromarray(rng.integers(0, 256, (28, 28), dtype=np.uint8)).save("%s/img28/%d.png" % (sys.argv[1], i))
    Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save("%s/img32/%d.png" % (sys.argv[1], i))
    Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save("%s/img16/%d.png" % (sys.argv[1], i))
PY

# check NAME SPEC STEPS IMAGES MEAN STD: train STEPS steps, export, compare
check() {
  local name=$1 spec=$2 steps=$3 images=$4 mean=$5 std=$6
  local base=$(pwd)/$spec
  if grep -q '^  epochs:' "$spec"; then   # the run measured in iterations instead
    sed "s/^  epochs: [0-9]*$/  iterations: $steps/" "$spec" > "$dir/$name.base.spec"
    base=$(pwd)/$dir/$name.base.spec
  fi
  printf '%s\n' "extends: \"$base\"" "solver { log_every: 1 checkpoint { every_iterations: $steps } }" \
    "data { val_samples: 64 }" > "$dir/$name.spec"
  "$TRAINC" build "$dir/$name.spec" -o "$dir/$name" > /dev/null
  "$dir/$name" --out "$dir/run-$name" > /dev/null
  local ckpt
  ckpt=$(ls "$dir/run-$name/checkpoints"/ckpt-*.bin | tail -1)
  "$TRAINC" export "$ckpt" --spec "$dir/$name.spec" --format onnx -o "$dir/$name.onnx"
  "$dir/$name" --predict "$ckpt" "$images" --out "$dir/pred-$name" > /dev/null
  $py tests/interop/onnx_check.py "$dir/$name.onnx" "$dir/pred-$name/predictions.jsonl" "$mean" "$std"
}
check ops_mix tests/gpu/specs/ops_mix.spec 3 "$dir/img16" 0,0,0 1,1,1
check lenet specs/examples/fmnist_lenet.spec 5 "$dir/img28" 0.2860 0.3530
check convnext tests/interop/specs/convnext_small.spec 1 "$dir/img32" 0.485,0.456,0.406 0.229,0.224,0.225

fails() {   # fails NAME EXPECTED-TEXT COMMAND...
  local name=$1 want=$2; shift 2
  if "$@" > "$dir/$name.out" 2> "$dir/$name.err"; then echo "FAIL $name: accepted" >&2; exit 1; fi
  grep -qF -- "$want" "$dir/$name.err" || { echo "FAIL $name: no '$want' in:" >&2; cat "$dir/$name.err" >&2; exit 1; }
  echo "ok $name: $(grep -m1 'error:' "$dir/$name.err")"
}
fails foreign "was written by spec hash" "$TRAINC" export "$(ls "$dir/run-lenet/checkpoints"/ckpt-*.bin | tail -1)" \
  --spec "$dir/ops_mix.spec" --format onnx -o "$dir/x.onnx"
sed 's/lrn { name: "lrn" size: 5 }/lrn { name: "lrn" size: 3 region: WITHIN_CHANNEL }/' tests/gpu/specs/ops_mix.spec > "$dir/within.spec"
grep -q WITHIN_CHANNEL "$dir/within.spec"
sed -i 's/^  epochs: 1$/  iterations: 1\n  checkpoint { every_iterations: 1 }/' "$dir/within.spec"
"$TRAINC" build "$dir/within.spec" -o "$dir/within" > /dev/null
"$dir/within" --out "$dir/run-within" > /dev/null
fails within_lrn "is WITHIN_CHANNEL, which ONNX's LRN does not compute" "$TRAINC" export \
  "$dir/run-within/checkpoints/ckpt-000000000001.bin" --spec "$dir/within.spec" --format onnx -o "$dir/w.onnx"
echo "PASS"
