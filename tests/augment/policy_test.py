# TrivialAugmentWide, RandAugment and AutoAugment against torchvision 0.14 (tensor semantics):
# every op at magnitudes across its bins and both signs, on a Fashion-MNIST image (1 channel)
# and an RGB image, compared with torchvision.transforms.autoaugment._apply_op; the magnitude
# tables; AutoAugment's three policy sets draw by draw (the sub-policy, the ops it applies, their
# magnitudes and the image, against torchvision's own tables and ops, and how often each entry
# applies against its probability); the loader's determinism with a policy on. Run by
# tests/augment/augment_test.sh.
# usage: policy_test.py AUGMENT_DUMP IDX_DIR WORKDIR JPEG_TREE
import gzip
import os
import subprocess
import sys

import numpy as np
import torch
from torchvision.transforms import InterpolationMode
from torchvision.transforms.autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide, _apply_op

tool, idx_dir, work, tree = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
failures = []
OPS = ["Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast",
       "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"]
GEOMETRIC = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate"}


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (": " + detail if detail else ""))
    if not ok:
        failures.append(what)


def run(*args, env=None):
    return subprocess.run([tool] + [str(a) for a in args], check=True, capture_output=True, text=True,
                          env=env).stdout


# Test images: a Fashion-MNIST sample, and an RGB image with edges, gradients and noise.
with gzip.open(f"{idx_dir}/train-images-idx3-ubyte.gz") as f:
    fm = np.frombuffer(f.read()[16:], np.uint8)[3 * 784:4 * 784].reshape(1, 28, 28).copy()
rng = np.random.default_rng(3)
yy, xx = np.mgrid[0:30, 0:40]
rgb = np.stack([(xx * 6) % 256, (yy * 8 + xx * 2) % 256, 128 + 60 * np.sin(xx / 4.0) * np.cos(yy / 5.0)])
rgb = np.clip(rgb + rng.integers(-20, 20, rgb.shape), 0, 255).astype(np.uint8)
rgb[:, 8:20, 10:25] = [[[200]], [[30]], [[90]]]

# ---- the magnitude tables: torch.linspace in float32, whose SIMD path (8 or 16 lanes,
# by CPU) rounds some bins one ulp away from the scalar formula we use: within 1 ulp, and
# equal where it matters, int() of the translations and posterize bits.
for policy, cls, name in [(1, TrivialAugmentWide(), "TrivialAugmentWide"), (2, RandAugment(), "RandAugment")]:
    space = cls._augmentation_space(31) if policy == 1 else cls._augmentation_space(31, (30, 40))
    ours = [list(map(float, l.split())) for l in run("table", policy, 31, 30, 40).splitlines()]
    bad = []
    for k, op in enumerate(OPS):
        mags, _ = space[op]
        ref = [float(v) for v in mags.tolist()] if mags.ndim > 0 else [0.0] * 31
        ulps = [abs(int(np.float32(a).view(np.int32)) - int(np.float32(b).view(np.int32))) for a, b in zip(ours[k], ref)]
        if max(ulps) > 1 or any(int(a) != int(b) for a, b in zip(ours[k], ref)):
            bad.append(f"{op}: ours {ours[k][:4]} torchvision {ref[:4]}")
    check(not bad, f"{name} magnitude bins equal torchvision's (1 ulp)", "; ".join(bad[:2]))

# ---- every op against torchvision's _apply_op, the geometric ones by nearest neighbour and
# bilinear (torchvision's classification recipe passes bilinear)
tv_space = TrivialAugmentWide()._augmentation_space(31)
for img, label in [(fm, "1x28x28"), (rgb, "3x30x40")]:
    c, h, w = img.shape
    src = f"{work}/op_in.bin"
    img.tofile(src)
    for k, op in enumerate(OPS):
        mags, signed = tv_space[op]
        values = [float(mags[i]) for i in (1, 7, 15, 23, 30)] if mags.ndim > 0 else [0.0]
        for bilinear in ([0, 1] if op in GEOMETRIC else [0]):
            mode = InterpolationMode.BILINEAR if bilinear else InterpolationMode.NEAREST
            worst, worst_what = (0, 0.0), ""
            for mag in values + ([-v for v in values] if signed else []):
                run("op", k, repr(mag), bilinear, c, h, w, src, f"{work}/op_out.bin")
                ours = np.fromfile(f"{work}/op_out.bin", np.uint8).reshape(c, h, w).astype(int)
                ref = _apply_op(torch.from_numpy(img.copy()), op, mag, mode, None).numpy().astype(int)
                diff = np.abs(ours - ref)
                share = (diff > 0).mean()
                if (share, diff.max()) > worst:
                    worst, worst_what = (share, diff.max()), f"magnitude {mag:g}: first ours {ours.ravel()[:4]} " \
                                                            f"torchvision {ref.ravel()[:4]}"
            # nearest: float32 grids may put a rare sample on the other side of a half-pixel;
            # bilinear and colour ops: float32 sums may round a rare value the other way by one
            limit_share, limit_max = (0.01, 255) if op in GEOMETRIC and not bilinear else (0.01, 1)
            check(worst[0] <= limit_share and worst[1] <= limit_max,
                  f"{op}{' bilinear' if bilinear else ''} on {label}",
                  f"at most {100 * worst[0]:.2f}% of pixels differ, largest difference {worst[1]} ({worst_what})")

# ---- Invert (AutoAugment's only op beyond the 14): op 14
for img, label in [(fm, "1x28x28"), (rgb, "3x30x40")]:
    c, h, w = img.shape
    img.tofile(f"{work}/op_in.bin")
    run("op", 14, "0", 0, c, h, w, f"{work}/op_in.bin", f"{work}/op_out.bin")
    ours = np.fromfile(f"{work}/op_out.bin", np.uint8).reshape(c, h, w)
    ref = _apply_op(torch.from_numpy(img.copy()), "Invert", 0.0, InterpolationMode.NEAREST, None).numpy()
    check(np.array_equal(ours, ref), f"Invert on {label}")

# ---- AutoAugment, draw by draw: our trace names the sub-policy and each op it applied with its
# magnitude; each must be torchvision's entry of that sub-policy at its bin of 10 (a signed op
# either sign), and the image torchvision's ops applied in turn; over the draws every
# sub-policy is chosen and each entry applies about as often as its probability says.
OP_NAMES = OPS + ["Invert"]
for set_id, tv_policy in enumerate([AutoAugmentPolicy.IMAGENET, AutoAugmentPolicy.CIFAR10, AutoAugmentPolicy.SVHN]):
    aa = AutoAugment(tv_policy)
    c, h, w = rgb.shape
    space = aa._augmentation_space(10, (h, w))
    rgb.tofile(f"{work}/aa_in.bin")
    bad, worst, worst_colour, chosen, applied, draws = [], 0.0, (0.0, 0), [0] * 25, {}, 400
    for key in range(draws):
        lines = run("auto", set_id, 1000 + key, 0, c, h, w, f"{work}/aa_in.bin", f"{work}/aa_out.bin").splitlines()
        pid = int(lines[0].split()[1])
        chosen[pid] += 1
        ref = torch.from_numpy(rgb.copy())
        for line in lines[1:]:
            _, k, op, mag = line.split()
            k, name, mag = int(k), OP_NAMES[int(op)], float(mag)
            want, p, bin_ = aa.policies[pid][k]
            applied[(pid, k)] = applied.get((pid, k), 0) + 1
            mags, signed = space[want]
            tv_mag = float(mags[bin_]) if bin_ is not None else 0.0
            if name != want or not (np.float32(abs(mag)) == np.float32(abs(tv_mag)) or
                                    abs(int(np.float32(abs(mag)).view(np.int32)) - int(np.float32(abs(tv_mag)).view(np.int32))) <= 1) \
                    or (mag < 0 and not signed):
                bad.append(f"draw {key}: sub-policy {pid} entry {k}: ours {name} {mag:g}, torchvision {want} {tv_mag:g}")
            ref = _apply_op(ref, want, mag, InterpolationMode.NEAREST, None)
        ours = np.fromfile(f"{work}/aa_out.bin", np.uint8).reshape(c, h, w)
        diff = np.abs(ours.astype(int) - ref.numpy().astype(int))
        if any(OP_NAMES[int(l.split()[2])] in GEOMETRIC for l in lines[1:]):
            worst = max(worst, float((diff > 0).mean()))
        else:
            worst_colour = max(worst_colour, (float((diff > 0).mean()), int(diff.max())))
    check(not bad, f"AutoAugment {tv_policy.value}: each op applied is torchvision's entry at its bin", "; ".join(bad[:2]))
    # nearest warps: ties. Shear 0.2 (bin 6) puts a fifth of the samples exactly on a half pixel,
    # where torch's float32 bmm and ours may round apart; colour ops: float32 sums, one level
    check(worst <= 0.02 and worst_colour[0] <= 0.01 and worst_colour[1] <= 1,
          f"AutoAugment {tv_policy.value}: images equal torchvision's ops in turn",
          f"with a warp at most {100 * worst:.2f}% of pixels differ in a draw; without, {100 * worst_colour[0]:.2f}% "
          f"by at most {worst_colour[1]}")
    check(min(chosen) > 0, f"AutoAugment {tv_policy.value}: all 25 sub-policies drawn", f"least drawn {min(chosen)} of {draws}")
    expect = sum(chosen[pid] * aa.policies[pid][k][1] for pid in range(25) for k in range(2))
    got = sum(applied.values())
    never = [(pid, k) for (pid, k) in applied if aa.policies[pid][k][1] == 0.0]
    always = [(pid, k) for pid in range(25) for k in range(2) if aa.policies[pid][k][1] == 1.0 and chosen[pid] and
              applied.get((pid, k), 0) != chosen[pid]]
    check(abs(got - expect) <= 0.1 * expect and not never and not always,
          f"AutoAugment {tv_policy.value}: entries apply as often as their probabilities",
          f"{got} applied, {expect:.0f} expected; probability-0 entries applied {never[:2]}, probability-1 skipped {always[:2]}")

# ---- the loader with a policy: the same bytes at any world size, thread count and resume
B, STEPS = 16, 3


def loader(world, threads, epoch0, epochs, policy, name):
    out = f"{work}/{name}"
    env = dict(os.environ, AUGMENT_POLICY=str(policy))
    run("loader", idx_dir, world, threads, epoch0, epochs, STEPS, B, 5, 0, 0, 0, 0, 1, out, env=env)
    return np.fromfile(out, np.float32).reshape(-1, B, 784)


plain = loader(1, 0, 0, 1, 0, "pol-plain")
for policy, name in [(1, "TrivialAugmentWide"), (2, "RandAugment"), (4, "AutoAugment")]:
    full = loader(1, 0, 0, 2, policy, f"pol{policy}")
    changed = (np.abs(full[:STEPS] - plain).max(axis=2) > 0).mean()
    check(changed > 0.5, f"{name} changes most samples", f"{100 * changed:.0f}% changed")
    same = all(np.array_equal(loader(wd, th, 0, 2, policy, f"pol{policy}-{wd}"), full) for wd, th in [(2, 1), (4, 0)])
    check(same, f"{name}: identical batches at world 2 (prefetch) and 4")
    check(np.array_equal(loader(2, 1, 1, 1, policy, f"pol{policy}-r"), full[STEPS:]), f"{name}: resume at epoch 1")

# ---- a JPEG tree (decode, random-resized crop, flip) with everything on: the same bytes for
# any rank count and decode thread count
def tree_loader(world, threads, name):
    out = f"{work}/{name}"
    env = dict(os.environ, AUGMENT_POLICY="2")
    run("loader", "images:" + tree, world, threads, 0, 1, 2, 8, 5, 0.2, 1.0, 0.5, 1, 2, out, env=env)
    return np.fromfile(out, np.float32), np.fromfile(out + ".targets", np.int32)


ref_x, ref_t = tree_loader(1, 1, "tree1")
for world, threads in [(2, 3), (4, 2)]:
    x, t = tree_loader(world, threads, f"tree{world}")
    check(len(x) == 2 * 8 * 3 * 32 * 32 and np.array_equal(x, ref_x) and np.array_equal(t, ref_t),
          f"JPEG tree, RandAugment + mixup/cutmix + erasing + repeats: world {world}, {threads} decode threads")

print("policy_test:", "FAILED " + ", ".join(failures) if failures else "all passed")
sys.exit(1 if failures else 0)
