# Mixup/cutmix, random erasing, repeated augmentation and the dense-target losses against
# torch, torchvision and first principles; run by tests/augment/augment_test.sh.
# usage: reference_test.py AUGMENT_DUMP IDX_DIR WORKDIR
import math
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as T

tool, idx_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (": " + detail if detail else ""))
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([tool] + [str(a) for a in args], check=True, capture_output=True, text=True).stdout


def close_stat(what, ours, theirs, tol_se=5.0):
    """Means of two samples agree within tol_se standard errors of their difference."""
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    se = math.sqrt(ours.var() / len(ours) + theirs.var() / len(theirs)) + 1e-12
    diff = ours.mean() - theirs.mean()
    check(abs(diff) < tol_se * se, what, f"ours {ours.mean():.5g} reference {theirs.mean():.5g} ({diff / se:+.2f} SE)")


# ---- 1. the loss against dense targets: torch's cross_entropy (probability targets with
# label_smoothing, torchvision's recipe) and timm's BinaryCrossEntropy, autograd gradients.
def loss_case(n, k, mixed, bce, eps, thr):
    path = f"{work}/loss.bin"
    run("loss", n, k, mixed, bce, eps, thr, path)
    raw = open(path, "rb").read()
    z = np.frombuffer(raw, np.float32, n * k, 0).reshape(n, k)
    t = np.frombuffer(raw, np.int32, 3 * n, 4 * n * k)
    loss = np.frombuffer(raw, np.float64, 1, 4 * n * k + 12 * n)[0]
    d = np.frombuffer(raw, np.float32, n * k, 4 * n * k + 12 * n + 8).reshape(n, k)
    ya, yb = torch.tensor(t[:n].astype(np.int64)), torch.tensor(t[n:2 * n].astype(np.int64))
    w = torch.tensor(t[2 * n:].view(np.float32).astype(np.float64))[:, None]
    zt = torch.tensor(z.astype(np.float64), requires_grad=True)
    if bce:   # timm: smoothed one-hots (off = eps/K, on = 1 - eps + off), mixed, thresholded
        off, on = eps / k, 1 - eps + eps / k
        onehot = lambda y: torch.full((n, k), off, dtype=torch.float64).scatter_(1, y[:, None], on)
        target = onehot(ya) * w + onehot(yb) * (1 - w) if mixed else onehot(ya)
        if thr > 0:
            target = target.gt(thr).to(torch.float64)
        ref = F.binary_cross_entropy_with_logits(zt, target)
    else:     # torchvision: mixed one-hots, then CrossEntropyLoss(label_smoothing)
        oh = lambda y: F.one_hot(y, k).to(torch.float64)
        target = oh(ya) * w + oh(yb) * (1 - w) if mixed else oh(ya)
        ref = F.cross_entropy(zt, target, label_smoothing=eps)
    ref.backward()
    g = zt.grad.numpy()
    what = f"{'BCE' if bce else 'CE'} mixed={mixed} eps={eps} thr={thr} n={n} k={k}"
    check(abs(loss - ref.item()) < 2e-5 * max(1, abs(ref.item())), what + " loss",
          f"ours {loss:.8g} torch {ref.item():.8g}")
    err = np.abs(d - g).max()
    check(err < 1e-6 + 2e-5 * np.abs(g).max(), what + " dlogits",
          f"largest difference {err:.3g}; first ours {d.ravel()[:3]} torch {g.ravel()[:3]}")


for case in [(16, 10, 0, 0, 0.0, 0), (16, 10, 1, 0, 0.1, 0), (8, 1000, 1, 0, 0.1, 0), (16, 10, 0, 1, 0.0, 0),
             (16, 10, 1, 1, 0.1, 0), (8, 1000, 1, 1, 0.1, 0), (16, 10, 1, 1, 0.1, 0.2)]:
    loss_case(*case)

# ---- 2. random erasing's box against torchvision's RandomErasing.get_params (p = 1):
# the distributions of height, width, position and "no fit" agree.
torch.manual_seed(0)
N = 4000
for h, w, scale, ratio in [(28, 28, (0.02, 0.33), (0.3, 3.3)), (32, 20, (0.1, 0.6), (0.5, 2.0))]:
    ours = np.array([list(map(int, l.split())) for l in run("erase", h, w, 1, *scale, *ratio, N).splitlines()])
    img = torch.zeros(1, h, w)
    theirs = []
    for _ in range(N):
        i, j, eh, ew, v = T.RandomErasing.get_params(img, scale=scale, ratio=ratio, value=[0])
        theirs.append([int(v is not img), i, j, eh, ew])
    theirs = np.array(theirs)
    hit_o, hit_t = ours[:, 0] == 1, theirs[:, 0] == 1
    close_stat(f"erase {h}x{w} hit rate", hit_o, hit_t)
    for col, name in [(3, "height"), (4, "width"), (1, "top"), (2, "left")]:
        close_stat(f"erase {h}x{w} {name}", ours[hit_o, col], theirs[hit_t, col])
    close_stat(f"erase {h}x{w} area", ours[hit_o, 3] * ours[hit_o, 4], theirs[hit_t, 3] * theirs[hit_t, 4])
    check(((ours[hit_o, 1] + ours[hit_o, 3] <= h) & (ours[hit_o, 2] + ours[hit_o, 4] <= w)).all(),
          f"erase {h}x{w} boxes inside the image")
half = np.array([int(l.split()[0]) for l in run("erase", 28, 28, 0.1, 0.02, 0.33, 0.3, 3.3, N).splitlines()])
close_stat("erase p=0.1 hit rate", half, np.random.default_rng(0).random(N) < 0.1)

# ---- 3. mixup's lambda ~ Beta(alpha, alpha) (torch's Beta), cutmix's corrected lambda
# against torchvision's references/classification RandomCutmix, and the batch choices.
rows = np.array([list(map(float, l.split())) for l in run("mix", 28, 28, 0.2, 0, 1, 0.5, N).splitlines()])
beta = torch.distributions.Beta(torch.tensor(0.2), torch.tensor(0.2)).sample((N,)).numpy()
close_stat("mixup lambda mean", rows[:, 2], beta)
close_stat("mixup lambda spread |lam - 1/2|", np.abs(rows[:, 2] - 0.5), np.abs(beta - 0.5))
check((rows[:, 0] == 1).all() and (rows[:, 1] == 0).all(), "mixup alone mixes every batch (mix_prob 1)")


def torchvision_cutmix_lambda(alpha, H, W):
    lam = float(torch._sample_dirichlet(torch.tensor([alpha, alpha]))[0])
    r_x, r_y = torch.randint(W, (1,)), torch.randint(H, (1,))
    r = 0.5 * math.sqrt(1.0 - lam)
    r_w_half, r_h_half = int(r * W), int(r * H)
    x1, y1 = int(torch.clamp(r_x - r_w_half, min=0)), int(torch.clamp(r_y - r_h_half, min=0))
    x2, y2 = int(torch.clamp(r_x + r_w_half, max=W)), int(torch.clamp(r_y + r_h_half, max=H))
    return 1.0 - (x2 - x1) * (y2 - y1) / (W * H)


rows = np.array([list(map(float, l.split())) for l in run("mix", 28, 20, 0, 1.0, 1, 0.5, N).splitlines()])
tv = np.array([torchvision_cutmix_lambda(1.0, 28, 20) for _ in range(N)])
close_stat("cutmix corrected lambda mean", rows[:, 2], tv)
close_stat("cutmix corrected lambda square", rows[:, 2] ** 2, tv ** 2)
area = (rows[:, 5] - rows[:, 3]) * (rows[:, 6] - rows[:, 4])
check(np.allclose(rows[:, 2], 1 - area / (28 * 20)), "cutmix lambda is 1 - the box's real area share")
rows = np.array([list(map(float, l.split())) for l in run("mix", 28, 28, 0.8, 1.0, 0.6, 0.3, N).splitlines()])
rng = np.random.default_rng(1)
close_stat("mix_prob 0.6: batches mixed", rows[:, 0], rng.random(N) < 0.6)
close_stat("mix_switch_prob 0.3: mixed batches with cutmix", rows[rows[:, 0] == 1, 1], rng.random(N) < 0.3)
check((rows[rows[:, 0] == 0, 2] == 1).all(), "an unmixed batch has lambda 1")

# ---- 4. the loader: semantics against its own plain batches, and determinism.
B, STEPS, HW = 16, 4, 28 * 28


def loader(world, threads, epoch0, epochs, mixup, cutmix, erase_p, erase_random, repeats, name):
    out = f"{work}/{name}"
    run("loader", idx_dir, world, threads, epoch0, epochs, STEPS, B, 5, mixup, cutmix, erase_p, erase_random,
        repeats, out)
    x = np.fromfile(out, np.float32).reshape(-1, B, HW)
    t = np.fromfile(out + ".targets", np.int32)
    words = len(t) // (x.shape[0] * B)
    t = t.reshape(x.shape[0], words, B)
    return x, t, np.fromfile(out + ".order", np.uint32)


plain, pt, _ = loader(1, 0, 0, 1, 0, 0, 0, 0, 1, "plain")
for world, threads in [(1, 1), (2, 0), (4, 1)]:
    x, t, _ = loader(world, threads, 0, 1, 0, 0, 0, 0, 1, f"plain{world}")
    check(np.array_equal(x, plain) and np.array_equal(t, pt), f"plain batches: world {world} threads {threads}")

mx, mt, _ = loader(1, 0, 0, 1, 0.4, 0, 0, 0, 1, "mixup")
lam = mt[:, 2, :].view(np.float32)
partner = np.roll(plain, 1, axis=1)
want = lam[:, :, None] * plain + (1 - lam[:, :, None]) * partner
err = np.abs(mx - want).max()
check(err < 1e-5, "mixup: x = lam * x + (1 - lam) * previous sample in the global batch", f"largest difference {err:.3g}")
check(np.array_equal(mt[:, 0], pt[:, 0]) and np.array_equal(mt[:, 1], np.roll(pt[:, 0], 1, axis=1)),
      "mixup: labels and partner labels")
check((lam == lam[:, :1]).all() and len(np.unique(lam)) == STEPS, "mixup: one lambda per global batch")

cx, ct, _ = loader(1, 0, 0, 1, 0, 1.0, 0, 0, 1, "cutmix")
ok = True
for s in range(STEPS):
    own = (cx[s] == plain[s]).reshape(B, 28, 28)
    other = (cx[s] == partner[s]).reshape(B, 28, 28)
    from_partner = other & ~own
    ok &= bool((own | other).all())
    for j in range(B):
        lam_j = ct[s, 2, j:j + 1].view(np.float32)[0]
        ys, xs = np.nonzero(from_partner[j])
        if len(ys):   # the pasted pixels that differ lie in one box of area (1 - lam) * H * W
            box = (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1)
            ok &= box <= round((1 - lam_j) * HW) + 1e-3
check(ok, "cutmix: every pixel is the sample's or its partner's, the partner's inside a box of area (1 - lam) H W")

ex, et, _ = loader(1, 0, 0, 1, 0, 0, 1.0, 0, 1, "erase")
changed = (ex != plain).reshape(-1, 28, 28)
ok, erased = True, 0
for img, ch in zip(ex.reshape(-1, 28, 28), changed):
    ys, xs = np.nonzero(ch)
    if len(ys):
        erased += 1
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        ok &= bool((img[y0:y1, x0:x1] == np.float32(0.5)).all()) and (y1 - y0) * (x1 - x0) <= 0.33 * HW + 28
check(ok and erased > 0.8 * STEPS * B, "erasing: each changed region is one rectangle of the value 0.5",
      f"{erased} of {STEPS * B} samples erased")

# Everything at once: the same bytes at any world size and thread count, and from a resume.
full, ft, _ = loader(1, 0, 0, 2, 0.2, 1.0, 0.5, 1, 3, "all")
for world, threads in [(2, 1), (4, 0)]:
    x, t, _ = loader(world, threads, 0, 2, 0.2, 1.0, 0.5, 1, 3, f"all{world}")
    err = np.abs(x - full).max()
    check(np.array_equal(x, full) and np.array_equal(t, ft), f"all on: world {world} threads {threads} identical",
          f"largest difference {err:.3g}")
rx, rt, _ = loader(2, 1, 1, 1, 0.2, 1.0, 0.5, 1, 3, "resume")
check(np.array_equal(rx, full[STEPS:]) and np.array_equal(rt, ft[STEPS:]), "all on: epoch 1 after a seek (resume)")

# Repeated augmentation: runs of 3 copies, the same order at every world size, copies differ.
_, _, order = loader(1, 0, 0, 1, 0, 0, 0, 0, 3, "ra")
_, _, order4 = loader(4, 0, 0, 1, 0, 0, 0, 0, 3, "ra4")
n = len(order)
check(np.array_equal(order, order4), "repeats: the same epoch order at world 4")
runs = order[: n // 3 * 3].reshape(-1, 3)
check((runs == runs[:, :1]).all() and len(np.unique(runs[:, 0])) == len(runs),
      "repeats: each sample 3 times in a row, distinct samples")
rx, _, _ = loader(1, 0, 0, 1, 0, 0, 0, 0, 3, "ra")
copies = rx.reshape(-1, HW)[:48].reshape(-1, 3, HW)
check(sum(not np.array_equal(c[0], c[1]) for c in copies) >= len(copies) // 2,
      "repeats: the copies of a sample are augmented differently")

print("reference_test:", "FAILED " + ", ".join(failures) if failures else "all passed")
sys.exit(1 if failures else 0)
