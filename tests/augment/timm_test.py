# timm's RandAugment variant (runtime/data/augment_timm*.c) against an independent reference:
# the ops and level-to-argument functions of timm/data/auto_augment.py rewritten here on Pillow
# (timm itself is not installed), every op of both op sets at levels across [0, 10], both signs,
# bilinear and bicubic, on a Fashion-MNIST image (mode L) and an RGB image; then the loader with
# rand-m7-mstd0.5-inc1 on: the share of samples it leaves unchanged and the mean pixel change
# against timm's RandAugment.__call__ (Python's random) on the same crops, and the same bytes at
# any world size, prefetch thread and resume. Run by tests/augment/augment_test.sh.
# usage: timm_test.py AUGMENT_DUMP IDX_DIR WORKDIR
import gzip
import os
import random
import sys

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from checks import check, close_stat, finish, runner

tool, idx_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]
run = runner(tool)


# ---- the reference, from timm/data/auto_augment.py (Pillow >= 5.2 paths)
def affine(img, matrix, resample, fill):
    return img.transform(img.size, Image.AFFINE, matrix, resample=resample, fillcolor=fill)


def solarize_add(img, add, thresh=128):
    lut = [min(255, i + add) if i < thresh else i for i in range(256)]
    return img.point(lut * len(img.getbands()))


OPS = {   # name: (function of (img, arg, resample, fill), level_to_arg(level, increasing, negate))
    "AutoContrast": (lambda im, a, r, f: ImageOps.autocontrast(im), None),
    "Equalize": (lambda im, a, r, f: ImageOps.equalize(im), None),
    "Invert": (lambda im, a, r, f: ImageOps.invert(im), None),
    "Rotate": (lambda im, a, r, f: im.rotate(a, resample=r, fillcolor=f),
               lambda lv, inc, neg: (-1 if neg else 1) * ((lv / 10.) * 30.)),
    "Posterize": (lambda im, a, r, f: im if a >= 8 else ImageOps.posterize(im, a),
                  lambda lv, inc, neg: 4 - int((lv / 10.) * 4) if inc else int((lv / 10.) * 4)),
    "Solarize": (lambda im, a, r, f: ImageOps.solarize(im, a),
                 lambda lv, inc, neg: 256 - min(256, int((lv / 10.) * 256)) if inc else min(256, int((lv / 10.) * 256))),
    "SolarizeAdd": (lambda im, a, r, f: solarize_add(im, a), lambda lv, inc, neg: min(128, int((lv / 10.) * 110))),
}
for name, cls in [("Color", ImageEnhance.Color), ("Contrast", ImageEnhance.Contrast),
                  ("Brightness", ImageEnhance.Brightness), ("Sharpness", ImageEnhance.Sharpness)]:
    OPS[name] = ((lambda c: lambda im, a, r, f: c(im).enhance(a))(cls),
                 lambda lv, inc, neg: max(0.1, 1.0 + (-1 if neg else 1) * ((lv / 10.) * .9)) if inc
                 else (lv / 10.) * 1.8 + 0.1)
OPS["ShearX"] = (lambda im, a, r, f: affine(im, (1, a, 0, 0, 1, 0), r, f),
                 lambda lv, inc, neg: (-1 if neg else 1) * ((lv / 10.) * 0.3))
OPS["ShearY"] = (lambda im, a, r, f: affine(im, (1, 0, 0, a, 1, 0), r, f), OPS["ShearX"][1])
OPS["TranslateXRel"] = (lambda im, a, r, f: affine(im, (1, 0, a * im.size[0], 0, 1, 0), r, f),
                        lambda lv, inc, neg: (-1 if neg else 1) * ((lv / 10.) * 0.45))
OPS["TranslateYRel"] = (lambda im, a, r, f: affine(im, (1, 0, 0, 0, 1, a * im.size[1]), r, f),
                        OPS["TranslateXRel"][1])
NAMES = ["AutoContrast", "Equalize", "Invert", "Rotate", "Posterize", "Solarize", "SolarizeAdd", "Color", "Contrast",
         "Brightness", "Sharpness", "ShearX", "ShearY", "TranslateXRel", "TranslateYRel"]   # timm's list order
GEOMETRIC = {"Rotate", "ShearX", "ShearY", "TranslateXRel", "TranslateYRel"}
ENHANCE = {"Color", "Contrast", "Brightness", "Sharpness"}


def signed(name, inc):
    return name in GEOMETRIC or (inc and name in ENHANCE)


def to_pil(chw):
    return Image.fromarray(chw[0]) if chw.shape[0] == 1 else Image.fromarray(np.ascontiguousarray(chw.transpose(1, 2, 0)))


def from_pil(im, c):
    a = np.asarray(im)
    return a[None] if c == 1 else a.transpose(2, 0, 1)


def reference_op(chw, name, level, inc, neg, bicubic, fill):
    fn, level_fn = OPS[name]
    arg = level_fn(level, inc, neg) if level_fn else 0
    fill = fill[0] if chw.shape[0] == 1 else tuple(fill)
    return from_pil(fn(to_pil(chw), arg, Image.BICUBIC if bicubic else Image.BILINEAR, fill), chw.shape[0]), arg


# ---- test images: a Fashion-MNIST sample, and an RGB image with edges, gradients and noise
with gzip.open(f"{idx_dir}/train-images-idx3-ubyte.gz") as f:
    raw = np.frombuffer(f.read()[16:], np.uint8)
fm = raw[5 * 784:6 * 784].reshape(1, 28, 28).copy()
rng = np.random.default_rng(4)
yy, xx = np.mgrid[0:30, 0:40]
rgb = np.stack([(xx * 6) % 256, (yy * 8 + xx * 2) % 256, 128 + 60 * np.sin(xx / 4.0) * np.cos(yy / 5.0)])
rgb = np.clip(rgb + rng.integers(-20, 20, rgb.shape), 0, 255).astype(np.uint8)
rgb[:, 8:20, 10:25] = [[[200]], [[30]], [[90]]]

# ---- every op: the colour and LUT ops bit-exact; the resampling ones may differ by one level on
# a rare pixel (our double sums in another order than Pillow's) and never more.
LEVELS = [0, 1.3, 5, 7, 8.45, 10]
FILL = (124, 116, 104)
src, dst = f"{work}/timm_in.bin", f"{work}/timm_out.bin"
for img, label in [(fm, "1x28x28"), (rgb, "3x30x40")]:
    c, h, w = img.shape
    img.tofile(src)
    for k, name in enumerate(NAMES):
        for inc in (0, 1):
            if inc and name not in ENHANCE | {"Posterize", "Solarize"}:
                continue   # the same op in both sets
            worst, worst_what, arg_bad = (0, 0), "", ""
            for level in LEVELS:
                for neg in ((0, 1) if signed(name, inc) else (0,)):
                    for bicubic in ((0, 1) if name in GEOMETRIC else (0,)):
                        ours_arg = float(run("timm", k, inc, repr(level), neg, bicubic, "%d,%d,%d" % FILL, c, h, w, src, dst))
                        ours = np.fromfile(dst, np.uint8).reshape(c, h, w).astype(int)
                        ref, arg = reference_op(img, name, level, inc, neg, bicubic, FILL)
                        if abs(ours_arg - arg) > 1e-12:
                            arg_bad = f"level {level}: ours {ours_arg} timm {arg}"
                        diff = np.abs(ours - ref.astype(int))
                        score = ((diff > 0).mean(), diff.max())
                        if score > worst:
                            worst = score
                            worst_what = f"level {level} neg {neg} bicubic {bicubic}: first ours {ours.ravel()[:4]} " \
                                         f"reference {ref.ravel()[:4]}"
            limit = (0.01, 1) if name in GEOMETRIC else (0, 0)
            check(not arg_bad, f"{name}{'Increasing' if inc else ''} level-to-arg", arg_bad)
            check(worst[0] <= limit[0] and worst[1] <= limit[1], f"{name}{'Increasing' if inc else ''} on {label}",
                  f"{100 * worst[0]:.2f}% of pixels differ, largest difference {worst[1]} {worst_what}")

# ---- the loader with timm's policy (augment_dump's AUGMENT_POLICY=3: rand-m7-mstd0.5-inc1, fill
# round(255 * 0.286) = 73) against timm's RandAugment.__call__ on the same crops.
B, STEPS, MEAN, STD = 16, 12, 0.286, 0.353


def loader(world, threads, epoch0, epochs, policy, name):
    out = f"{work}/{name}"
    env = dict(os.environ, AUGMENT_POLICY=str(policy))
    run("loader", idx_dir, world, threads, epoch0, epochs, STEPS, B, 5, 0, 0, 0, 0, 1, out, env=env)
    x = np.fromfile(out, np.float32).reshape(-1, B, 784)
    return np.rint((x * np.float32(STD) + np.float32(MEAN)) * 255).astype(np.uint8)   # back to bytes


def timm_rand_augment(chw, r):
    for _ in range(2):
        name = NAMES[r.randrange(len(NAMES))]   # np.random.choice with replacement, uniform
        if r.random() > 0.5:
            continue
        level = max(0., min(r.gauss(7, 0.5), 10.))
        neg = signed(name, 1) and r.random() > 0.5
        chw, _ = reference_op(chw, name, level, 1, neg, r.random() < 0.5, (73,))
    return chw


plain = loader(1, 0, 0, 1, 0, "timm-plain").reshape(-1, 1, 28, 28)
full = loader(1, 0, 0, 2, 3, "timm-full")
ours = full[:STEPS].reshape(-1, 1, 28, 28).astype(int)
r = random.Random(0)
theirs = np.stack([timm_rand_augment(p, r) for p in plain for _ in range(4)]).astype(int)
rep = np.repeat(plain, 4, axis=0).astype(int)


close_stat("loader: share of samples left unchanged", (ours == plain).all(axis=(1, 2, 3)),
           (theirs == rep).all(axis=(1, 2, 3)))
close_stat("loader: mean absolute pixel change", np.abs(ours - plain).mean(axis=(1, 2, 3)),
           np.abs(theirs - rep).mean(axis=(1, 2, 3)))
same = all(np.array_equal(loader(wd, th, 0, 2, 3, f"timm-{wd}"), full) for wd, th in [(2, 1), (4, 0)])
check(same, "loader: identical batches at world 2 (prefetch) and 4")
check(np.array_equal(loader(2, 1, 1, 1, 3, "timm-r"), full[STEPS:]), "loader: resume at epoch 1")

finish("timm_test")
