#!/usr/bin/env bash
# Initialization from another spec's weights (init { spec checkpoint fresh freeze }).
# A LeNet trained 80 steps is the source; a second spec fine-tunes it with a fresh
# classifier (fc2) and conv1/conv2 frozen. It must train well above chance in 60 steps, and
# its final checkpoint must hold exactly the source's conv1/conv2 weights (read back from both
# files) and different fc1/fc2 ones. Every mismatch is one clear error, at check time for
# the spec and at start-up for the checkpoint; --resume stays strict. Last, `trainc plot`
# overlays the two runs.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/init_weights
rm -rf "$dir" && mkdir -p "$dir"
lenet() {   # lenet ITERATIONS EXTRA-TOP-LEVEL-TEXT: the LeNet example measured in iterations
  sed -e "s/^  epochs: 5$/  iterations: $1\n  checkpoint { every_iterations: $1 }/" -e 's/^  log_every: 100$/  log_every: 25/' \
    specs/examples/fmnist_lenet.spec
  printf '%s\n' "$2"
}
lenet 80 "" > "$dir/src.spec"
grep -q "iterations: 80" "$dir/src.spec" || { echo "could not derive the source spec" >&2; exit 1; }
"$TRAINC" build "$dir/src.spec" -o "$dir/src" > /dev/null
"$dir/src" --out "$dir/run-src" > /dev/null
src_ckpt=$dir/run-src/checkpoints/ckpt-000000000080.bin

init="init { spec: \"src.spec\" checkpoint: \"$src_ckpt\" fresh: [\"fc2\"] freeze: [\"conv1\", \"conv2\"] }"
lenet 60 "$init" > "$dir/ft.spec"
"$TRAINC" build "$dir/ft.spec" -o "$dir/ft" > /dev/null
"$dir/ft" --out "$dir/run-ft" > "$dir/ft.txt"
grep "values from" "$dir/ft.txt"

"$PY" - "$src_ckpt" "$dir/run-ft/checkpoints/ckpt-000000000060.bin" "$dir/run-ft/metrics.jsonl" "$dir/ft.src/model.c" <<'PY'
import json, re, struct, sys
def params(path):   # the checkpoint format of rt_checkpoint.h: 112-byte header, then sections
    b = open(path, "rb").read()
    n, off = struct.unpack_from("<I", b, 12)[0], 112
    for _ in range(n):
        ln = struct.unpack_from("<I", b, off)[0]; name = b[off + 4:off + 4 + ln].decode()
        size = struct.unpack_from("<Q", b, off + 4 + ln)[0]; start = off + 4 + ln + 12
        if name == "params": return b[start:start + size]
        off = start + size
    raise SystemExit("no params section in " + path)
src, ft = params(sys.argv[1]), params(sys.argv[2])
tensors = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(r'\{ "([\w.]+)", (\d+), (\d+), \d \}', open(sys.argv[4]).read())}
def same(name):
    o, c = tensors[name]
    return src[4 * o:4 * (o + c)] == ft[4 * o:4 * (o + c)]
for name in ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"]:
    assert same(name), name + " changed: frozen layers must keep the source's weights"
for name in ["fc1.weight", "fc2.weight"]:
    assert not same(name), name + " equals the source's: it should have trained (fc1) or started fresh (fc2)"
summary = [json.loads(l) for l in open(sys.argv[3]) if '"summary"' in l][-1]
print("fine-tuned 60 steps: test top-1 %.4f (chance 0.10); conv1/conv2 equal the source's, fc1/fc2 differ" % summary["top1"])
assert summary["top1"] > 0.6, "fine-tuning did not train"
PY

# Each mismatch: one message naming what, where and what to do; exit 1 (check) or non-zero.
fails() {   # fails NAME EXPECTED-TEXT COMMAND...
  local name=$1 want=$2; shift 2
  if "$@" > "$dir/$name.out" 2> "$dir/$name.err"; then echo "FAIL $name: accepted" >&2; exit 1; fi
  grep -qF -- "$want" "$dir/$name.err" || { echo "FAIL $name: no '$want' in:" >&2; cat "$dir/$name.err" >&2; exit 1; }
  echo "ok $name: $(grep -m1 'error' "$dir/$name.err")"
}
lenet 100 "init { spec: \"src.spec\" fresh: [\"fc2\"] }" | sed 's/out: 512/out: 256/' > "$dir/shape.spec"
fails shape "init: layer 'fc1' is linear 3136 -> 256, bias here but linear 3136 -> 512, bias in" "$TRAINC" check "$dir/shape.spec"
lenet 100 "init { spec: \"src.spec\" }" | sed 's/name: "fc2"/name: "head"/' > "$dir/renamed.spec"
fails renamed "init: layer 'head'" "$TRAINC" check "$dir/renamed.spec"
grep -q "list it in init.fresh" "$dir/renamed.err"
lenet 100 "init { spec: \"src.spec\" fresh: [\"nope\"] }" > "$dir/fresh.spec"
fails fresh_unknown "init.fresh: no layer named 'nope'" "$TRAINC" check "$dir/fresh.spec"
lenet 100 "init { spec: \"src.spec\" freeze: [\"relu1\"] }" > "$dir/freeze.spec"
fails freeze_no_params "init.freeze: layer 'relu1' has no parameters" "$TRAINC" check "$dir/freeze.spec"
lenet 100 "init { spec: \"missing.spec\" }" > "$dir/nosource.spec"
fails no_source "init.spec '$dir/missing.spec' does not check" "$TRAINC" check "$dir/nosource.spec"
fails foreign_ckpt "init: checkpoint $dir/run-ft/checkpoints/ckpt-000000000060.bin was written by spec hash" \
  "$dir/ft" --out "$dir/run-x" --init-from "$dir/run-ft/checkpoints/ckpt-000000000060.bin"
fails no_file "init: cannot open checkpoint" "$dir/ft" --out "$dir/run-y" --init-from "$dir/none.bin"
fails no_init_block "--init-from needs a trainer built from a spec with an init block" \
  "$dir/src" --out "$dir/run-z" --init-from "$src_ckpt"
fails resume_strict "was written by a different spec" "$dir/ft" --out "$dir/run-w" --resume "$src_ckpt"

# Both runs' curves in one chart (trainc plot), rendered by rsvg-convert to a PNG of the size
# the SVG declares, each run's color and the published-top-1 line drawn.
"$TRAINC" plot "$dir/run-src/metrics.jsonl" "$dir/run-ft/metrics.jsonl" --top1 0.9 -o "$dir/curves.svg"
rsvg-convert -o "$dir/curves.png" "$dir/curves.svg"
"$PY" tests/plot/png_check.py "$dir/curves.png" 860 890 "#1f77b4:200" "#d62728:200" "#000000:100"
fails plot_missing "cannot open metrics file" "$TRAINC" plot "$dir/none.jsonl" -o "$dir/none.svg"
