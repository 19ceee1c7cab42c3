#!/usr/bin/env python3
"""Sums an `ncu --csv --metrics gpu__time_duration.sum` report by kernel name: total ms, calls
and share of the step, largest first (bench/gpu_kernel_profile.sh).

usage: gpu_kernel_summary.py REPORT.csv [--top 25]"""
import csv, sys
from collections import defaultdict

def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 25
    lines = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"error: {path}: no ncu CSV table (did the profiled step run?)")
    total, calls = defaultdict(float), defaultdict(int)
    for r in csv.DictReader(lines[start:]):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = r["Kernel Name"][:110]
        total[name] += float(r["Metric Value"].replace(",", "")) / 1e6   # ns -> ms
        calls[name] += 1
    step = sum(total.values())
    print(f"{sum(calls.values())} kernels, {step:.2f} ms of kernel time in the profiled step")
    for name, ms in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{ms:9.3f} ms {100 * ms / step:5.1f}% {calls[name]:5d}x  {name}")

if __name__ == "__main__":
    main()
