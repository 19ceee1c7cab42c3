#!/usr/bin/env python3
"""Compares the per-step training losses of two runs' metrics.jsonl files.
usage: compare_runs.py A B TOL [STEPS]  -- relative tolerance per step, first STEPS steps (all)."""
import json, sys

def losses(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("event") == "train":
            out[r["step"]] = r["loss"]
    return out

a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
steps = sorted(set(a) & set(b))
if len(sys.argv) > 4:
    steps = steps[: int(sys.argv[4])]
if not steps:
    sys.exit(f"no common train steps in {sys.argv[1]} and {sys.argv[2]}")
worst = max(steps, key=lambda s: abs(a[s] - b[s]) / max(abs(b[s]), 1e-12))
rel = abs(a[worst] - b[worst]) / max(abs(b[worst]), 1e-12)
print(f"{len(steps)} steps compared; largest relative loss difference {rel:.2e} at step {worst} "
      f"({a[worst]:.8f} vs {b[worst]:.8f}); tolerance {tol:g}")
for s in steps[:5]:
    print(f"  step {s}: {a[s]:.8f}  {b[s]:.8f}")
sys.exit(0 if rel <= tol else 1)
