#!/usr/bin/env python3
"""Two trainer runs bit for bit: the same per-step losses (metrics.jsonl) and the same
parameters in each run's last checkpoint (its "params" section).
usage: same_run.py WHAT RUN_A RUN_B  -- prints one line; exits 1 if they differ."""
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

what, a, b = sys.argv[1:4]
la, lb = losses(a), losses(b)
fa, fb = array.array("f", params(a)), array.array("f", params(b))
diff = [i for i in range(min(len(fa), len(fb))) if fa[i] != fb[i]]
print(f"{what}: {len(la)} losses ({la[-1] if la else None} vs {lb[-1] if lb else None}), "
      f"{len(fa)} parameters, {len(diff)} differ" + (f" (first at {diff[0]}: {fa[diff[0]]:.9g} vs {fb[diff[0]]:.9g})" if diff else ""))
sys.exit(0 if la and la == lb and len(fa) == len(fb) and not diff else 1)
