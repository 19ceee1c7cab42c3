#!/usr/bin/env python3
"""Compares `trainc show --gpu-cost` (the model: one line per kernel or library call) with the
emulator's EMU_TRAFFIC count of one training step (the lines between the profiler's start and
stop marks), in launch order: the same kernel or call, the same bytes read, the same bytes
written. Prints every difference and exits 1 on any; prints the count matched otherwise.
usage: traffic_compare.py MODEL.txt TRAFFIC.txt"""
import re
import sys


def model(path):
    rows = []
    for line in open(path):
        f = line.split()
        if line.startswith("#") or len(f) != 9 or not re.fullmatch(r"-?\d+", f[0]):
            continue   # comments, totals and the summary line
        rows.append((f[3], float(f[5]), float(f[6]), f"op {f[0]} {f[1]} {f[2]}"))
    return rows


def counted(path):
    rows, inside = [], False
    for line in open(path):
        if line.startswith("# profiler start"):
            inside, rows = True, []
            continue
        if line.startswith("# profiler stop"):
            inside = False
            continue
        if not inside:
            continue
        f = line.split()
        name = f[1] if f[0] == "kernel" else f[0]
        rd = int(re.search(r"read=(\d+)", line).group(1))
        wr = int(re.search(r"write=(\d+)", line).group(1))
        rows.append((name, rd, wr, line.strip()))
    return rows


def main():
    m, c = model(sys.argv[1]), counted(sys.argv[2])
    bad = 0
    for i in range(max(len(m), len(c))):
        a = m[i] if i < len(m) else None
        b = c[i] if i < len(c) else None
        if a and b and a[0] == b[0] and a[1] == b[1] and a[2] == b[2]:
            continue
        bad += 1
        if bad <= 20:
            print(f"launch {i}: model {a[0] + ' read=%d write=%d (%s)' % (a[1], a[2], a[3]) if a else 'none'}")
            print(f"          counted {b[3] if b else 'none'}")
    if bad:
        print(f"{bad} of {max(len(m), len(c))} launches differ")
        return 1
    print(f"{len(c)} launches: the model's bytes read and written equal the emulator's count for each")
    return 0


sys.exit(main())
