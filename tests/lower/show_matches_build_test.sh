#!/usr/bin/env bash
# `trainc show --json --backend B` describes what `trainc build --backend B` emits: for every
# example and published spec and both backends, the "trainer" member's arena bytes, naive
# sum, parameter count and layout size and gradient buckets must equal the numbers in the
# emitted model.c, plan.txt and buckets.txt (and for the ResNet example in BF16, channels-last
# too). Both come from one lowering call (lower.h);
# this test keeps it that way. A spec in FP16, which the CPU backend refuses, is compared on
# CUDA only, and its CPU build must be refused. (A spec evaluating at another resolution is
# compared on both: the training schedule; its evaluation one is checked by the emulator.)
set -u
source tests/lib.sh
out=$BUILD/test-lower/show-build
rm -rf "$out" && mkdir -p "$out"
status=0
n=0
# 16-bit activations, NCHW and channels-last: the ResNet example in BF16
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/resnet_bf16.spec"
for spec in specs/examples/*.spec specs/published/*.spec "$out/resnet_bf16.spec"; do
  name=$(basename "$spec" .spec)
  built=$spec
  variants="cpu cuda"
  [ "$name" = resnet_bf16 ] && variants="cuda cuda-nhwc"
  if "$BUILD/trainc" print "$spec" | grep -q "compute: FP16"; then
    variants=cuda
    if "$BUILD/trainc" build "$spec" --backend cpu --emit-only --emit-dir "$out/$name.cpu" > "$out/$name.cpu.log" 2>&1 ||
       ! grep -q "FP16 } is not implemented by the CPU backend" "$out/$name.cpu.log"; then
      echo "FAIL: $spec (FP16): the CPU build was not refused as expected:"; cat "$out/$name.cpu.log"; status=1
    fi
  fi
  for variant in $variants; do
    backend=${variant%-nhwc}
    opts=(--backend "$backend"); [ "$variant" = cuda-nhwc ] && opts+=(--layout nhwc)
    dir=$out/$name.$variant
    if ! "$BUILD/trainc" show --json "${opts[@]}" "$spec" > "$dir.json" 2> "$dir.show.err"; then
      echo "FAIL: trainc show --json ${opts[*]} $spec:"; cat "$dir.show.err"; status=1; continue
    fi
    if ! "$BUILD/trainc" build "$built" "${opts[@]}" --emit-only --emit-dir "$dir" > "$dir.log" 2>&1; then
      echo "FAIL: trainc build --emit-only ${opts[*]} $built:"; cat "$dir.log"; status=1; continue
    fi
    "$PY" - "$dir.json" "$dir" "$variant" "$spec" <<'PY' || status=1
import json, re, sys
show_path, src, backend, spec = sys.argv[1:]
t = json.load(open(show_path))["trainer"]
model = open(f"{src}/model.c").read()
plan = open(f"{src}/plan.txt").read()
buckets = open(f"{src}/buckets.txt").read()
def one(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m: sys.exit(f"FAIL: {spec} ({backend}): no {what} in the emitted sources")
    return int(m.group(1))
arena = one(r"^#define ARENA_BYTES (\d+)L$", model, "ARENA_BYTES") if backend.startswith("cuda") else \
        one(r"\.arena_bytes = (\d+),", model, ".arena_bytes")
emitted = {
    "arena_bytes": arena,
    "arena_naive_bytes": one(r"\.arena_naive_bytes = (\d+)", model, ".arena_naive_bytes"),
    "n_params": one(r"\.n_params = (\d+),", model, ".n_params"),
    "param_count": one(r"\.param_count = (\d+)", model, ".param_count"),
    "n_buffers": one(r"\.n_buffers = (\d+),", model, ".n_buffers"),
    "plan peak": one(r"^planned peak: (\d+) bytes", plan, "planned peak"),
}
table = re.search(r"static const rt_grad_bucket buckets\[\] = \{\n(.*?)\};", model, re.S).group(1)
emitted["buckets"] = [[int(a), int(b)] for a, b in re.findall(r"\{ (\d+), (\d+) \},", table) if (a, b) != ("0", "0") or t["buckets"] == [[0, 0]]]
emitted["buckets.txt"] = [[int(a), int(b)] for a, b in re.findall(r"^\d+\s+(\d+)\s+(\d+)\s", buckets, re.M)]
shown = {k: t[k] for k in ("arena_bytes", "arena_naive_bytes", "n_params", "param_count", "n_buffers")}
shown["plan peak"] = t["arena_bytes"]
shown["buckets"] = shown["buckets.txt"] = t["buckets"]
bad = [f"{k}: show says {shown[k]}, build emitted {emitted[k]}" for k in shown if shown[k] != emitted[k]]
if bad: sys.exit(f"FAIL: {spec} ({backend}):\n  " + "\n  ".join(x[:300] for x in bad))
PY
    n=$((n + 1))
  done
done
[ $status = 0 ] && echo "ok: show --json equals build's emitted arena, params and buckets for $n spec/backend pairs"
exit $status
