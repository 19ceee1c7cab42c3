#!/usr/bin/env python3
"""The EMA of the last checkpoint in a folder of per-step checkpoints against torchvision's rule
recomputed in float64 from the model's parameters and BN statistics of every step (the first
update copies, then ema = decay * ema + (1 - decay) * model after batch i when i % every == 0).
Runs within one epoch (i counts global steps). Usage: ema_recompute.py CHECKPOINT_DIR EVERY DECAY
(exits non-zero when they differ)"""
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
