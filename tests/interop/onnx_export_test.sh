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
# Auxiliary loss heads are training-only: the graph holds the main head's ops and none of theirs.
check aux tests/interop/specs/aux_heads_small.spec 2 "$dir/img16" 0,0,0 1,1,1
$py - "$dir/aux.onnx" <<'PY'
import sys, onnx
g = onnx.load(sys.argv[1]).graph
layers = set(n.name.split("/")[0] for n in g.node) | set(t.name.split("/")[0].split(".")[0] for t in g.initializer)
aux = sorted(n for n in layers if n.startswith("aux"))
assert not aux and {"c3", "fc"} <= layers, ("auxiliary layers in the export", aux, sorted(layers))
print("ok aux: %d nodes, %d initializers, none of the auxiliary heads'" % (len(g.node), len(g.initializer)))
PY

# A write that fails part-way (here the file-size limit: 1 block) leaves an existing file as it
# was and no temporary behind it: exports go through FILE.tmp.<pid> and a rename.
printf 'an earlier export\n' > "$dir/keep.onnx"
if (trap '' XFSZ; ulimit -f 1; exec "$TRAINC" export "$(ls "$dir/run-convnext/checkpoints"/ckpt-*.bin | tail -1)" \
      --spec "$dir/convnext.spec" --format onnx -o "$dir/keep.onnx") > /dev/null 2> "$dir/keep.err"; then
  echo "FAIL keep: a 1-block file-size limit did not stop the export" >&2; exit 1
fi
grep -q "is unchanged" "$dir/keep.err" || { echo "FAIL keep: no 'is unchanged' in:" >&2; cat "$dir/keep.err" >&2; exit 1; }
[ "$(cat "$dir/keep.onnx")" = "an earlier export" ] || { echo "FAIL keep: the existing file was changed" >&2; exit 1; }
! ls "$dir"/keep.onnx.tmp.* > /dev/null 2>&1 || { echo "FAIL keep: a temporary was left" >&2; exit 1; }
echo "ok keep: $(grep -m1 'error:' "$dir/keep.err")"

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
