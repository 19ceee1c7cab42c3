#!/usr/bin/env python3
"""Two trainer runs bit for bit: the same per-step losses (metrics.jsonl) and the same
parameters in each run's last checkpoint (its "params" section). With --tol L P: each loss
within L relative to the other's, each parameter within P of the largest |parameter| (runs
that differ by rounding alone, e.g. a sum in another order). With --from RUN_0 too (after
--tol): the parameters' updates from RUN_0's (the same initial parameters, trained with a
negligible rate) instead, each within P of the largest |update| of RUN_B (a few steps'
gradients compared, which the parameters themselves would bury).
usage: same_run.py [--tol L P [--from RUN_0]] WHAT RUN_A RUN_B  -- prints one line; exits 1 if they differ."""
import array, glob, json, struct, sys

def losses(d):
    return [json.loads(l)["loss"] for l in open(d + "/metrics.jsonl") if '"loss"' in l]

def params(d):
    path = sorted(glob.glob(d + "/checkpoints/ckpt-*.bin"))[-1]
    raw = open(path, "rb").read()
    n, off = struct.unpack_from("<I", raw, 12)[0], 112
    for _ in range(n):
        ln = struct.unpack_from("<I", raw, off)[0]; off += 4
        name = raw[off:off + ln].decode(); off += ln
        size = struct.unpack_from("<Q", raw, off)[0]; off += 12
        if name == "params": return raw[off:off + size]
        off += size
    sys.exit(f"{path}: no params section")

args = sys.argv[1:]
ltol = ptol = None
if args and args[0] == "--tol":
    ltol, ptol, args = float(args[1]), float(args[2]), args[3:]
base = None
if args and args[0] == "--from":
    base, args = args[1], args[2:]
what, a, b = args[:3]
la, lb = losses(a), losses(b)
fa, fb = array.array("f", params(a)), array.array("f", params(b))
if ltol is None:
    diff = [i for i in range(min(len(fa), len(fb))) if fa[i] != fb[i]]
    print(f"{what}: {len(la)} losses ({la[-1] if la else None} vs {lb[-1] if lb else None}), "
          f"{len(fa)} parameters, {len(diff)} differ" + (f" (first at {diff[0]}: {fa[diff[0]]:.9g} vs {fb[diff[0]]:.9g})" if diff else ""))
    sys.exit(0 if la and la == lb and len(fa) == len(fb) and not diff else 1)
of = "the largest"
if base is not None:
    f0 = array.array("f", params(base))
    fa = array.array("f", (x - z for x, z in zip(fa, f0)))
    fb = array.array("f", (x - z for x, z in zip(fb, f0)))
    of = "the largest update (from " + base.rstrip("/").split("/")[-1] + ")"
lrel = max((abs(x - y) / max(abs(y), 1e-12) for x, y in zip(la, lb)), default=0.0)
big = max((abs(x) for x in fb), default=0.0) or 1.0
prel = max((abs(x - y) for x, y in zip(fa, fb)), default=0.0) / big
nbits = sum(1 for x, y in zip(fa, fb) if x != y)
print(f"{what}: {len(la)} losses ({la[-1] if la else None} vs {lb[-1] if lb else None}), largest difference "
      f"{lrel:.2e} relative (tol {ltol:g}); {len(fa)} parameters, {nbits} not bit-identical, largest difference "
      f"{prel:.2e} of {of} (tol {ptol:g})")
sys.exit(0 if la and len(la) == len(lb) and len(fa) == len(fb) and lrel <= ltol and prel <= ptol else 1)
