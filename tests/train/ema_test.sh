#!/usr/bin/env bash
# solver.ema (torchvision's recipe) on the CPU trainer:
#  1. the EMA in the last checkpoint equals an independent recomputation, in float64 from the
#     model's parameters and BN statistics in the checkpoint of every step, of torchvision's
#     rule (update after batch i when i % every == 0; the first update copies);
#  2. the eval reports the model and the EMA ("eval" and "eval_ema" records, an "EMA" line);
#  3. a run resumed from a checkpoint mid-way ends with the uninterrupted run's params and EMA
#     hashes and evaluations;
#  4. with two MPI ranks the EMA is the same on both (the trainer compares them at the end) and
#     again equals the recomputation from rank 0's checkpoints;
#  5. --backend cuda refuses solver.ema at build.
# (A checkpoint without the EMA cannot match: solver.ema is part of the spec hash resume checks.)
set -eu
BUILD=${BUILD:-build}
dir=$BUILD/test-train/ema
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build tests/train/specs/ema_tiny.spec -o "$dir/ema_tiny" >/dev/null
export OMP_NUM_THREADS=1

recompute() {  # checkpoint dir, every -> compares the recomputed EMA with the last checkpoint's
  python3 - "$1" "$2" 0.7 <<'PY'
import array, glob, struct, sys
def sections(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<I", b, 12)[0]
    step = struct.unpack_from("<q", b, 16)[0]
    off, out = 112, {}
    for _ in range(n):
        ln = struct.unpack_from("<I", b, off)[0]; off += 4
        name = b[off:off + ln].decode(); off += ln
        size = struct.unpack_from("<Q", b, off)[0]; off += 12
        out[name] = b[off:off + size]; off += size
    return step, out
ckpts = sorted(glob.glob(sys.argv[1] + "/ckpt-*.bin"))
every, decay = int(sys.argv[2]), float(sys.argv[3])
by_step = {}
for p in ckpts:
    step, s = sections(p)
    by_step[step] = s
last = max(by_step)
assert sorted(by_step) == list(range(1, last + 1)), f"missing checkpoints: {sorted(by_step)}"
f32 = lambda s, k: list(array.array("f", s[k]))
ema, count = None, 0
for step in range(1, last + 1):   # the checkpoint after global step index step - 1
    i = step - 1
    if i % every: continue
    cur = f32(by_step[step], "params") + f32(by_step[step], "buffers")
    ema = list(cur) if count == 0 else [decay * e + (1 - decay) * c for e, c in zip(ema, cur)]
    count += 1
got = f32(by_step[last], "ema_params") + f32(by_step[last], "ema_buffers")
n = struct.unpack("<q", by_step[last]["ema_count"])[0]
diff = max(abs(g - e) / max(1e-3, abs(e)) for g, e in zip(got, ema))
print(f"EMA after {last} steps: {count} updates, largest relative difference {diff:.3g}; first values "
      f"{got[:3]} vs {ema[:3]}")
assert n == count, f"ema_count {n}, expected {count}"
assert diff < 1e-5, "the EMA differs from torchvision's rule"
PY
}

# 1, 2: one uninterrupted run
"$dir/ema_tiny" --out "$dir/full" > "$dir/full.txt"
recompute "$dir/full/checkpoints" 4
grep -q "EMA of the weights: test loss" "$dir/full.txt" || { echo "FAIL: no EMA evaluation line"; cat "$dir/full.txt"; exit 1; }
[ "$(grep -c '"event":"eval_ema"' "$dir/full/metrics.jsonl")" = 2 ] || { echo "FAIL: expected 2 eval_ema records"; exit 1; }

# 3: resumed from step 11 (between EMA updates, after 3 of them)
"$dir/ema_tiny" --out "$dir/resumed" --resume "$dir/full/checkpoints/ckpt-000000000011.bin" > "$dir/resumed.txt"
final() { grep -E "^final" "$1" | sed -E 's/wall time [^ ]+//'; }
if [ "$(final "$dir/full.txt")" != "$(final "$dir/resumed.txt")" ]; then
  echo "FAIL: the resumed run ends differently:"; final "$dir/full.txt"; final "$dir/resumed.txt"; exit 1
fi
python3 - "$dir/full/metrics.jsonl" "$dir/resumed/metrics.jsonl" <<'PY'
import json, sys
ev = lambda p: [(r["step"], r["top1"], r["loss"]) for r in map(json.loads, open(p)) if r["event"] == "eval_ema"]
a, b = ev(sys.argv[1]), ev(sys.argv[2])
assert a[-1] == b[-1], f"EMA evaluation after resume differs: {a} vs {b}"
PY
echo "resume: $(final "$dir/resumed.txt" | tail -1)"

# 4: two ranks
if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np 2 "$dir/ema_tiny" --out "$dir/two" > "$dir/two.txt" 2>&1 ||
    { echo "FAIL: two ranks"; tail -5 "$dir/two.txt"; exit 1; }
  grep -q "final EMA weights: params .* the same on 2 ranks" "$dir/two.txt" ||
    { echo "FAIL: no cross-rank EMA check"; tail -3 "$dir/two.txt"; exit 1; }
  recompute "$dir/two/checkpoints" 4
fi

# 5: the CUDA backend refuses it at build
if "$BUILD/trainc" build tests/train/specs/ema_tiny.spec --backend cuda --emit-only --emit-dir "$dir/cuda" > "$dir/cuda.txt" 2>&1; then
  echo "FAIL: --backend cuda accepted solver.ema"; exit 1
fi
grep -q "solver.ema is not implemented by the CUDA backend" "$dir/cuda.txt" || { cat "$dir/cuda.txt"; exit 1; }
echo "ema: ok"
