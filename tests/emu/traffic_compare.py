#!/usr/bin/env python3
"""Compares `trainc show --gpu-cost` (the model: one line per kernel or library call) with the
emulator's EMU_TRAFFIC count of one training step (the lines between the profiler's start and
stop marks), in launch order: the same kernel or call, the same bytes read, the same bytes
written. Prints every difference and exits 1 on any; prints the count matched otherwise.
--at-most K1,K2: kernels whose reads depend on the data (the old channels-last batch-norm
backward reads dy only where the ReLU passed it) must read at most the predicted bytes.
usage: traffic_compare.py [--at-most K1,K2] MODEL.txt TRAFFIC.txt"""
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
    args = sys.argv[1:]
    at_most = set()
    if args and args[0] == "--at-most":
        at_most, args = set(args[1].split(",")), args[2:]
    m, c = model(args[0]), counted(args[1])
    bad = bounded = 0
    for i in range(max(len(m), len(c))):
        a = m[i] if i < len(m) else None
        b = c[i] if i < len(c) else None
        if a and b and a[0] == b[0] and a[1] == b[1] and a[2] == b[2]:
            continue
        if a and b and a[0] == b[0] and a[0] in at_most and b[1] <= a[1] and a[2] == b[2]:
            bounded += 1
            continue
        bad += 1
        if bad <= 20:
            print(f"launch {i}: model {a[0] + ' read=%d write=%d (%s)' % (a[1], a[2], a[3]) if a else 'none'}")
            print(f"          counted {b[3] if b else 'none'}")
    if bad:
        print(f"{bad} of {max(len(m), len(c))} launches differ")
        return 1
    if bounded:
        print(f"{len(c)} launches: the model's bytes equal the emulator's count for each, "
              f"{bounded} data-dependent reads within the model's")
    else:
        print(f"{len(c)} launches: the model's bytes read and written equal the emulator's count for each")
    return 0


sys.exit(main())
