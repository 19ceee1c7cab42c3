#!/usr/bin/env bash
# `trainc project`: golden output for two published runs on their systems; the per-layer
# roofline recomputed here from `trainc show --json` (independent arithmetic in Python) must
# match the compute time it prints; a benchmark-based projection must equal steps x batch /
# rate; bad input is one message and a non-zero exit. UPDATE=1 rewrites the goldens.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bad=0
for pair in "ibm_hal_resnet50_64gpu hal" "juwels_resnet50_cosine_1024gpu juwels-booster"; do
  set -- $pair
  "$TRAINC" project "specs/published/$1.spec" --system "$2" > "$tmp/out" 2>&1 || { bad=1; cat "$tmp/out"; }
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/out" "tests/golden/project/$1.txt"
  cmp -s "$tmp/out" "tests/golden/project/$1.txt" ||
    { bad=1; echo "FAIL $1: differs from tests/golden/project/$1.txt"; diff -u "tests/golden/project/$1.txt" "$tmp/out" | head -20; }
done

# The roofline, recomputed: V100 FP16 tensor 125e12, FP32 15.7e12, 900e9 B/s (AMP: half
# activations), batch 208 per rank.
"$TRAINC" show --json specs/published/ibm_hal_resnet50_64gpu.spec > "$tmp/show.json"
"$TRAINC" project specs/published/ibm_hal_resnet50_64gpu.spec --system hal > "$tmp/proj.txt"
"$PY" - "$tmp/show.json" "$tmp/proj.txt" <<'PY' || bad=1
import json, re, sys
j = json.load(open(sys.argv[1])); layers = {l["name"]: l for l in j["layers"]}
c, h, w = j["input_shape"]; batch = 208; flop_s = mem_s = 0.0
for l in j["layers"]:
    inp = sum(4.0 * c * h * w if i == "data" else layers[i]["activation_bytes"] for i in l["inputs"])
    flops = 6.0 * l["macs"] * batch
    byts = 3 * 0.5 * batch * (inp + l["activation_bytes"]) + 12.0 * l["params"]
    tf, tm = flops / (125e12 if l["macs"] else 15.7e12), byts / 900e9
    if tf >= tm: flop_s += tf
    else: mem_s += tm
want = 1e3 * (flop_s + mem_s + 20.0 * j["params"] / 900e9)
got = float(re.search(r"compute +([0-9.]+) ms", open(sys.argv[2]).read()).group(1))
print("roofline compute per step: trainc %.2f ms, recomputed %.2f ms" % (got, want))
assert abs(got - want) <= 0.01, "roofline differs"
PY

# From a benchmark: 1000 images/s at global batch 64 -> 937 steps x 0.064 s per epoch.
printf '{"event":"benchmark","steps":20,"batch":64,"ranks":1,"images_per_s":1000}\n' > "$tmp/bench.jsonl"
"$TRAINC" project specs/examples/fmnist_mlp.spec --benchmark "$tmp/bench.jsonl" > "$tmp/b.txt"
grep -q "epoch_s=59.968 " "$tmp/b.txt" || { bad=1; echo "FAIL benchmark projection:"; cat "$tmp/b.txt"; }

for args in "--system nosuch" "--benchmark $tmp/none.jsonl" ""; do
  if "$TRAINC" project specs/examples/fmnist_mlp.spec $args > "$tmp/o" 2> "$tmp/e"; then
    bad=1; echo "FAIL: 'project $args' was accepted"
  elif ! grep -q "error:" "$tmp/e"; then bad=1; echo "FAIL: 'project $args' said no error:"; cat "$tmp/e"; fi
done
[ "$bad" -eq 0 ] && echo "project: goldens, roofline and benchmark projection match"
[ "$bad" -eq 0 ]
