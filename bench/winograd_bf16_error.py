# `make bench-wino-bf16`: how far a 3x3 convolution on BF16 operands lands from the FP64 result,
# computed directly (what oneDNN's BF16 convolutions and ours do: BF16 inputs, exact products,
# FP32-or-better sums) and by Winograd F(2x2,3x3), F(3x3,3x3) and F(4x4,3x3) with the
# transformed tiles rounded to BF16 (what a Winograd GEMM on vdpbf16ps would need), per channel
# count. Relative RMS error over all outputs, FP64 arithmetic otherwise, so only the roundings
# to BF16 show. Issue 20: the BF16 ResNet at 2x PyTorch needs more than the bf16 dot-product
# peak unless a fast algorithm cuts the multiplies; this says which ones keep BF16 accuracy.
# usage: python3 bench/winograd_bf16_error.py   (needs numpy; the bench's torch venv has it)
import numpy as np


def to_bf16(x):
    """Round to the nearest BF16 (ties to even), returned as float64."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def toom_cook(m, r, points):
    """F(m, r) from the interpolation points (and infinity): y = A^T [(G g) . (B^T d)]."""
    n = m + r - 1
    def rows(k):
        return np.array([[p ** j for j in range(k)] for p in points[:n - 1]] +
                        [[0] * (k - 1) + [1]], dtype=float)
    return {"BT": np.linalg.inv(rows(n)).T, "G": rows(r), "AT": rows(m).T, "m": m}


# Lavin & Gray's F(4x4,3x3) (the one the FP32 path uses; points 0, +-1, +-2, inf), and the
# smaller tiles by the same construction.
ALGOS = [("F(2x2,3x3)", toom_cook(2, 3, [0, 1, -1])),
         ("F(3x3,3x3)", toom_cook(3, 3, [0, 1, -1, 2])),
         ("F(4x4,3x3)", toom_cook(4, 3, [0, 1, -1, 2, -2]))]


def direct(x, w):
    k, h = w.shape[0], x.shape[1] - 2
    out = np.zeros((k, h, h))
    for i in range(3):
        for j in range(3):
            out += np.einsum("kc,chw->khw", w[:, :, i, j], x[:, i:i + h, j:j + h])
    return out


def winograd(x, w, t, round_tiles):
    m, n = t["m"], t["m"] + 2
    tiles = (x.shape[1] - 2) // m
    u = np.einsum("ai,kcij,bj->kcab", t["G"], w, t["G"])
    if round_tiles:
        u = to_bf16(u)
    out = np.zeros((w.shape[0], tiles * m, tiles * m))
    for ty in range(tiles):
        for tx in range(tiles):
            d = x[:, ty * m:ty * m + n, tx * m:tx * m + n]
            v = np.einsum("ai,cij,bj->cab", t["BT"], d, t["BT"])
            if round_tiles:
                v = to_bf16(v)
            prod = np.einsum("kcab,cab->kab", u, v)
            out[:, ty * m:ty * m + m, tx * m:tx * m + m] = np.einsum("ia,kab,jb->kij", t["AT"], prod, t["AT"])
    return out


def rel_rms(a, ref):
    ref = ref[:, :a.shape[1], :a.shape[2]]
    return np.sqrt(((a - ref) ** 2).mean() / (ref ** 2).mean())


def main():
    rng = np.random.default_rng(1)
    size = 14   # 12x12 outputs: whole tiles of 2, 3 and 4
    print("relative RMS error vs FP64 of a 3x3 convolution (ReLU'd N(0,1) input, N(0, 1/9c) weights, %dx%d outputs)"
          % (size - 2, size - 2))
    print("%-8s %-18s %-28s %s" % ("channels", "direct, BF16 in", "Winograd, tiles in BF16", "Winograd, BF16 in, tiles exact"))
    for c in (32, 64, 128):
        x = np.maximum(rng.standard_normal((c, size, size)), 0)
        w = rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)
        ref, xb, wb = direct(x, w), to_bf16(x), to_bf16(w)
        base = rel_rms(direct(xb, wb), ref)
        rounded = "  ".join("%s %.1e (%.1fx)" % (name[2:5], rel_rms(winograd(xb, wb, t, True), ref),
                                                   rel_rms(winograd(xb, wb, t, True), ref) / base)
                            for name, t in ALGOS)
        exact = "  ".join("%s %.1e" % (name[2:5], rel_rms(winograd(xb, wb, t, False), ref)) for name, t in ALGOS)
        print("%-8d %-18s %s   %s" % (c, "%.1e" % base, rounded, exact))


if __name__ == "__main__":
    main()
