#!/usr/bin/env python3
"""One training step's kernel profile (ncu --csv --metrics gpu__time_duration.sum, the step
TRAINC_CUDA_PROFILE_STEP brackets, bench/gpu_kernel_profile.sh) against the model of the
same step (`trainc show --gpu-cost`), op by op.

The two lists are aligned in launch order. Our kernels are named in both (the profile's name
loses its namespace, template arguments and parameters); a library call (cuDNN, cuBLASLt) is
one model line but one or more kernels of the library's own names in the profile, so every
profile kernel between two of ours goes to the library calls the model has between them.
Prints, per op and pass, the model's microseconds, the profile's, and their ratio; then the
same per kernel name or library class; then the step. The model counts a launch's cost
(2 us) that a serialized profile does not see: the ratio is profile / model as printed.
Exits 1 when the profile cannot be aligned: a kernel of ours that the model lists is missing
from the profile (or the other way round), so the model no longer describes what ran.

usage: gpu_profile_vs_model.py MODEL.txt PROFILE.csv [--top 30]"""
import csv
import re
import sys
from collections import OrderedDict, defaultdict


def model_rows(path):
    """(op, layer, pass, name, class, us) per line of `show --gpu-cost`, in launch order."""
    rows = []
    for line in open(path):
        f = line.split()
        if line.startswith("#") or len(f) != 9 or not re.fullmatch(r"-?\d+", f[0]):
            continue
        rows.append({"op": int(f[0]), "layer": f[1], "pass": f[2], "name": f[3], "class": f[4], "us": float(f[8])})
    if not rows:
        sys.exit(f"error: {path}: no kernel lines (is it `trainc show --gpu-cost` output?)")
    return rows


def base_name(kernel):
    """'void ns::vec_stats_retire_kernel<__nv_bfloat16, 8>(const T *, ...)' -> 'vec_stats_retire_kernel'"""
    s = kernel.strip()
    depth, out = 0, []
    for ch in s:   # drop template arguments, which may themselves hold parentheses
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).split("(")[0].strip()
    s = s.split()[-1] if s.split() else s   # drop the return type
    return s.split("::")[-1]


def profile_rows(path):
    """(name, us) per profiled kernel, in launch order (ncu's ID)."""
    lines = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"error: {path}: no ncu CSV table (did the profiled step run?)")
    rows = {}
    for r in csv.DictReader(lines[start:]):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        ns = float(r["Metric Value"].replace(",", ""))
        rows[int(r["ID"])] = (base_name(r["Kernel Name"]), ns / 1e3)
    if not rows:
        sys.exit(f"error: {path}: no gpu__time_duration.sum values")
    return [rows[i] for i in sorted(rows)]


def align(model, prof):
    """Gives each model row its measured us (library rows share their group's). Returns the
    list of problems; empty when every kernel of ours was found in order."""
    problems, p = [], 0
    ours = {m["name"] for m in model if m["class"] == "kernel"}
    pending = []   # library rows since the last kernel of ours

    def settle(upto):
        nonlocal p
        spill = prof[p:upto]
        if pending:
            total_model = sum(m["us"] for m in pending) or 1.0
            got = sum(us for _, us in spill)
            for m in pending:   # a group of calls shares its kernels' time in the model's proportion
                m["measured"] = got * m["us"] / total_model
                m["group"] = len(pending)
        elif spill:
            problems.append(f"{len(spill)} profiled kernel(s) the model does not list, before model line "
                            f"{len(model) if upto == len(prof) else upto}: " + ", ".join(n for n, _ in spill[:4]))
        pending.clear()
        p = upto

    for m in model:
        if m["class"] != "kernel":
            pending.append(m)
            continue
        j = next((k for k in range(p, len(prof)) if prof[k][0] == m["name"]), None)
        if j is None:
            problems.append(f"op {m['op']} {m['layer']} {m['pass']}: kernel {m['name']} is not in the profile "
                            f"after position {p}")
            m["measured"] = 0.0
            continue
        stray = [n for n, _ in prof[p:j] if n in ours]
        if stray:
            problems.append(f"op {m['op']} {m['layer']} {m['pass']}: the profile runs {stray[0]} before {m['name']}, "
                            "which the model does not")
        settle(j)
        m["measured"] = prof[j][1]
        p = j + 1
    settle(len(prof))
    return problems


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model, prof = model_rows(sys.argv[1]), profile_rows(sys.argv[2])
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 30
    problems = align(model, prof)
    per_op = OrderedDict()
    for m in model:
        key = (m["op"], m["layer"], m["pass"])
        a = per_op.setdefault(key, [0.0, 0.0])
        a[0] += m["us"]
        a[1] += m.get("measured", 0.0)
    per_kind = defaultdict(lambda: [0.0, 0.0, 0])
    for m in model:
        kind = m["name"] if m["class"] == "kernel" else f"[{m['class']}]"
        a = per_kind[kind]
        a[0] += m["us"]
        a[1] += m.get("measured", 0.0)
        a[2] += 1
    ratio = lambda got, want: f"{got / want:6.2f}" if want > 0 else "     -"
    print(f"{'op':>4} {'layer':28} {'pass':4} {'model us':>10} {'profile us':>10} {'ratio':>6}")
    for (op, layer, ps), (want, got) in per_op.items():
        print(f"{op:>4} {layer:28} {ps:4} {want:10.1f} {got:10.1f} {ratio(got, want)}")
    print(f"\nby kernel or library class (largest measured first; top {top}):")
    print(f"{'kernel or [class]':44} {'calls':>5} {'model ms':>9} {'profile ms':>10} {'ratio':>6}")
    for kind, (want, got, n) in sorted(per_kind.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{kind[:44]:44} {n:5d} {want / 1e3:9.3f} {got / 1e3:10.3f} {ratio(got, want)}")
    want = sum(m["us"] for m in model)
    got = sum(us for _, us in prof)
    lib_w = sum(m["us"] for m in model if m["class"] != "kernel")
    lib_g = sum(m.get("measured", 0.0) for m in model if m["class"] != "kernel")
    print(f"\nstep: model {want / 1e3:.2f} ms ({len(model)} launches), profile {got / 1e3:.2f} ms of kernel time "
          f"({len(prof)} kernels), ratio {got / want:.2f}; library calls model {lib_w / 1e3:.2f} ms, "
          f"profile {lib_g / 1e3:.2f} ms; our kernels model {(want - lib_w) / 1e3:.2f} ms, "
          f"profile {(got - lib_g) / 1e3:.2f} ms")
    if problems:
        print(f"\nerror: the profile does not follow the model ({len(problems)} problem(s)):", file=sys.stderr)
        for s in problems[:10]:
            print("  " + s, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
