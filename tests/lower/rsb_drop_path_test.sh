#!/usr/bin/env bash
# Stochastic depth of "ResNet strikes back": specs/published/rsb_resnet50_a1.spec sets
# resnet50.spec's model variable drop_path to 0.05 (a spec that extends a model sets it), and
# it must lower as timm's ResNet does it (timm/models/resnet.py: rate drop_path_rate * k /
# (n_blocks - 1) on block k, a DropPath only where that rate is > 0, applied to the residual
# branch after bn3 and before the add): no layer in block 0, one stochastic_depth layer after
# bn3 in each of the other 15 bottlenecks, read by that block's add, the last at 0.05. A2
# inherits it, A3 and resnet50 itself have none; a spec extending A1, or resnet18 (after bn2
# of its basic blocks), sets another rate. The rates are checked in the resolved spec
# against the formula computed here, and in the emitted CPU and CUDA trainers (the calls of
# the drop-path kernels, forward and backward). Compiling both backends' trainers of A1 is
# tests/data/published_specs_test.sh's part (A1 is FP16: nvcc builds it as written, and its
# FP32 variant trains on the CPU).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
out=$BUILD/test-rsb-drop-path
rm -rf "$out" && mkdir -p "$out"
status=0

for v in a1 a2 a3; do "$TRAINC" print specs/published/rsb_resnet50_$v.spec > "$out/$v.txt" || exit 1; done
"$TRAINC" print specs/models/resnet50.spec > "$out/resnet50.txt" || exit 1
# A spec that extends the published one (or resnet18, whose basic block has it too) sets it again.
printf 'extends: "%s"\nvars { drop_path: 0.1 }\n' "$PWD/specs/published/rsb_resnet50_a1.spec" > "$out/a1_dp01.spec"
printf 'extends: "%s"\nvars { drop_path: 0.1 }\n' "$PWD/specs/models/resnet18.spec" > "$out/r18_dp01.spec"
for v in a1_dp01 r18_dp01; do "$TRAINC" print "$out/$v.spec" > "$out/$v.txt" || exit 1; done
# The CPU has no FP16: its trainer is A1's in FP32, the one change (as the published-spec test).
printf 'extends: "%s"\nprecision { compute: FP32 loss_scale: NONE }\n' \
  "$PWD/specs/published/rsb_resnet50_a1.spec" > "$out/a1_fp32.spec"
for backend in cpu cuda; do
  spec=specs/published/rsb_resnet50_a1.spec; [ $backend = cpu ] && spec=$out/a1_fp32.spec
  "$TRAINC" build "$spec" --backend $backend --emit-only \
    --emit-dir "$out/a1.$backend" > "$out/a1.$backend.log" 2>&1 ||
    { echo "FAIL: trainc build --emit-only --backend $backend of A1:"; cat "$out/a1.$backend.log"; exit 1; }
done

"$PY" - "$out" <<'PY' || status=1
import re, sys
out = sys.argv[1]

def layers(path):
    """(kind, name, p, inputs) of each layer of a `trainc print` net, in order."""
    text = open(path).read()
    net = text[text.index("\nnet {"):]
    net = net[:net.index("\n}\n") + 1]
    found = []
    for m in re.finditer(r"\n  (\w+) \{\n(.*?)\n  \}", net, re.S):
        body = m.group(2)
        name = re.search(r'name: "([^"]+)"', body).group(1)
        p = re.search(r"\bp: ([0-9.e+-]+)", body)
        ins = re.search(r"inputs: \[(.*?)\]", body)
        found.append((m.group(1), name, float(p.group(1)) if p else None,
                      re.findall(r'"([^"]+)"', ins.group(1)) if ins else None))
    return found

def ramp(stages, rate):
    """timm's rule, independently: rate * k / (n - 1) on block k of n."""
    blocks = [f"layer{s + 1}.{i}" for s, n in enumerate(stages) for i in range(n)]
    return blocks, {b: rate * k / (len(blocks) - 1) for k, b in enumerate(blocks)}

blocks, want = ramp([3, 4, 6, 3], 0.05)
bad = []

for variant, blocks, want, last in (("a1", blocks, want, "bn3"), ("a2", blocks, want, "bn3"),
                                    ("a1_dp01",) + ramp([3, 4, 6, 3], 0.1) + ("bn3",),
                                    ("r18_dp01",) + ramp([2, 2, 2, 2], 0.1) + ("bn2",)):
    net = layers(f"{out}/{variant}.txt")
    names = [l[1] for l in net]
    got = {l[1][:-len(".drop_path")]: l for l in net if l[0] == "stochastic_depth"}
    for b in blocks:
        if want[b] == 0:
            if b in got: bad.append(f"{variant}: {b} has a drop-path layer at rate 0")
            continue
        if b not in got: bad.append(f"{variant}: {b} has no drop-path layer (want p {want[b]:.6g})"); continue
        p = got[b][2]
        if abs(p - want[b]) > 1e-12: bad.append(f"{variant}: {b}.drop_path p {p!r}, want {want[b]!r}")
        i = names.index(f"{b}.drop_path")
        if names[i - 1] != f"{b}.{last}":
            bad.append(f"{variant}: {b}.drop_path follows {names[i - 1]}, not {b}.{last}")
        add = net[names.index(f"{b}.add")]
        if not add[3] or add[3][0] != f"{b}.drop_path": bad.append(f"{variant}: {b}.add reads {add[3]}")
    print(f"{variant}: {len(got)} drop-path layers, rates " +
          ", ".join(f"{got[b][2]:.4g}" for b in blocks if b in got))
for variant in ("a3", "resnet50"):
    n = sum(l[0] == "stochastic_depth" for l in layers(f"{out}/{variant}.txt"))
    print(f"{variant}: {n} drop-path layers")
    if n: bad.append(f"{variant}: {n} drop-path layers, want none")

# the emitted trainers of A1: forward and backward kernel calls with the same rates
blocks, want = ramp([3, 4, 6, 3], 0.05)
for backend, prefix in (("cpu", ""), ("cuda", "cuda_")):
    src = open(f"{out}/a1.{backend}/model.c").read()
    for kind in ("forward", "backward"):
        call = f"{prefix}drop_path_{kind}"
        rates = {}
        for m in re.finditer(r"\b%s\((\w+), \w+, BATCH, \d+, ([0-9.e+-]+)f," % call, src):
            block = re.sub(r"_(drop_path_out|bn3_dout)$", "", m.group(1))
            rates[block] = float(m.group(2))
        expect = {b.replace(".", "_"): r for b, r in want.items() if r > 0}
        if set(rates) != set(expect):
            bad.append(f"{backend} {kind}: drop-path calls in {sorted(rates)}, want {sorted(expect)}")
            continue
        worst = max(abs(rates[b] - expect[b]) / expect[b] for b in expect)
        print(f"{backend} {kind}: {len(rates)} calls, largest relative rate error {worst:.2g}")
        if worst > 1e-8: bad.append(f"{backend} {kind}: a rate is off by {worst:.2g} (relative)")

for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $status = 0 ] && echo "A1/A2 lower with timm's drop-path ramp (0 .. 0.05 over 16 blocks) on both backends; A3 and resnet50 have none"
exit $status
