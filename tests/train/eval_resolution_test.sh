#!/usr/bin/env bash
# Train and eval resolutions (torchvision's train 176 / eval 224, in small): eval_res.spec
# trains at 24x24 and evaluates at data.val's crop, 32x32, through model_eval.c (a schedule
# lowered at 32x32). Its evaluation must equal an independent computation of the same
# weights at 32x32: eval_res_ref.spec, a trainer built for 32x32 inputs that starts from
# eval_res's checkpoint with every layer frozen (and BN momentum 0). It must differ from the
# evaluation at 24x24, and a net whose output depends on the input size (flatten + linear)
# is refused at check with one error. (The CUDA backend's eval resolution: tests/emu/evalres_emu_test.sh.)
set -eu
source tests/lib.sh
dir=$BUILD/test-train/eval-res
rm -rf "$dir" && mkdir -p "$dir"
"$PY" tests/data/make_tree.py "$dir/tree" 8 4 32 > /dev/null
export OMP_NUM_THREADS=1
run() {  # name spec [args]: build and train on the tree; the last eval record on stdout
  local name=$1 spec=$2; shift 2
  "$BUILD/trainc" build "$spec" -o "$dir/$name" > "$dir/$name.build" 2>&1 || { cat "$dir/$name.build"; exit 1; }
  "$dir/$name" --data "$dir/tree" --out "$dir/$name.run" --decode-threads 1 "$@" > "$dir/$name.out" 2>&1 ||
    { cat "$dir/$name.out"; exit 1; }
  "$PY" -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1]) if "\"eval\"" in l][-1]
print(repr(r["loss"]), r["top1"], r["top5"])' "$dir/$name.run/metrics.jsonl"
}
at32=$(run eval_res tests/train/specs/eval_res.spec)
grep -q "model_eval.c" <(ls "$dir/eval_res.src") || { echo "FAIL: no model_eval.c emitted"; exit 1; }
ref=$(run eval_res_ref tests/train/specs/eval_res_ref.spec --init-from "$dir/eval_res.run/checkpoints/ckpt-000000000020.bin")
echo "eval at 32x32 of the 24x24 trainer: $at32; the 32x32 trainer on its weights: $ref"
[ "$at32" = "$ref" ] || { echo "FAIL: the evaluation at the eval resolution differs from the independent one"; exit 1; }
sed -e 's/center_crop: 32/center_crop: 24/' -e 's/resize: 36/resize: 27/' -e 's/name: "eval_res"/name: "eval_res_24"/' \
  tests/train/specs/eval_res.spec > "$dir/eval_res_24.spec"
at24=$(run eval_res_24 "$dir/eval_res_24.spec")
echo "the same weights evaluated at 24x24: $at24"
[ "$at24" != "$at32" ] || { echo "FAIL: evaluating at 24x24 and 32x32 gave the same result"; exit 1; }
[ ! -f "$dir/eval_res_24.src/model_eval.c" ] || { echo "FAIL: model_eval.c emitted without an eval resolution"; exit 1; }

sed -e 's/gap { name: "pool" }/flatten { name: "pool" }/' tests/train/specs/eval_res.spec > "$dir/flat.spec"
if "$BUILD/trainc" check "$dir/flat.spec" > "$dir/flat.txt" 2>&1; then echo "FAIL: flatten + linear accepted"; exit 1; fi
grep -q "error: the net's output depends on the input size: at 32x32 (center_crop)" "$dir/flat.txt" ||
  { echo "FAIL: unexpected message:"; cat "$dir/flat.txt"; exit 1; }
[ "$(grep -c 'error:' "$dir/flat.txt")" = 1 ] || { echo "FAIL: more than one error"; cat "$dir/flat.txt"; exit 1; }
echo "eval resolution: ok"
