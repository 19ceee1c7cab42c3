# A design study for issue 31, not a path of the trainer: the numerics of a block output's
# batch-norm backward folded through the 1x1 conv that feeds it (ResNet's conv3 -> bn3 -> add
# -> ReLU), against today's path, both against float64, with BF16 roundings emulated.
#
# Today (bn_add_relu_backward_nhwc.cu): one pass reads dy, the ReLU bits and x (conv3's output)
# for sum g and sum g*xhat (g = dy where the ReLU passed), a second reads them again and writes
# dx3 = k (m g - sum g - xhat sum g*xhat) and g (the residual's gradient); conv3's weight and
# data gradients then read dx3.
# Folded: x = W h (h: conv3's input, a quarter of x's channels), so with G = sum_p g h^T (the
# weight gradient's GEMM run on g), H = sum_p h h^T (a Gram matrix) and S = sum_p h:
#   sum_p g x         = rowwise dot(W, G)                       (no pass over x)
#   dW                = diag(k m) G - (k a) S^T - diag(k b inv) (W H - mu S^T)
#   dh                = (diag(k m) W)^T g - M h + const,  M = W^T diag(k b inv) W
# so one pass reads dy and the bits and writes g and sum g, and neither x nor dx3 is read or
# written in the backward. This script says whether that keeps BF16 training's accuracy.
# usage: python3 bench/bn_fold_1x1_numerics.py   (numpy)
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from winograd_bf16_error import to_bf16  # noqa: E402  (round to BF16, as float64)


def rel(u, t):
    return np.linalg.norm(u - t) / np.linalg.norm(t)


def study(rng, pixels, ci, co, shift):
    h = to_bf16(np.maximum(rng.standard_normal((pixels, ci)), 0))            # conv3's input, after a ReLU
    w = to_bf16(rng.standard_normal((co, ci)) * np.sqrt(2 / ci))
    x = to_bf16(h @ w.T + shift)                                              # conv3's output, stored BF16
    mu = x.mean(0)
    inv = 1 / np.sqrt(x.var(0) + 1e-5)
    gamma = rng.uniform(0.5, 1.5, co)
    dy = to_bf16(rng.standard_normal((pixels, co)) * 0.01)
    g = np.where(rng.random((pixels, co)) < 0.6, dy, 0)
    m, a = pixels, g.sum(0)
    xhat = (x - mu) * inv
    b = (g * xhat).sum(0)
    k = gamma * inv / m
    dx3 = k * (m * g - a - xhat * b)
    dw_true, dh_true = dx3.T @ h, dx3 @ w
    # today: dx3 rounded to BF16, the convs' gradients summed in FP32 (float64 here) and stored BF16
    dx3_b = to_bf16(dx3)
    dw_now, dh_now = to_bf16(dx3_b.T @ h), to_bf16(dx3_b @ w)
    rows = []
    for gname, g_round in (("G in FP32", lambda v: np.float32(v).astype(np.float64)), ("G in BF16", to_bf16)):
        G = g_round(g.T @ h)
        H = np.float32(h.T @ h).astype(np.float64)
        S = np.float32(h.sum(0)).astype(np.float64)
        # from x = W h + shift before its rounding to BF16: the folded dgamma's error is mostly that
        b_fold = inv * ((w * G).sum(1) + (shift - mu) * a)
        c = k * b_fold * inv
        dw_fold = (k * m)[:, None] * G - (k * a)[:, None] * S[None, :] - c[:, None] * (w @ H + (shift - mu)[:, None] * S[None, :])
        w_scaled = to_bf16((k * m)[:, None] * w)                             # the data gradient's weights
        dh_part = to_bf16(g @ w_scaled)                                       # its output, stored BF16
        M = (w.T * c) @ w
        const = -(w.T @ (k * a)) - w.T @ (c * (shift - mu))
        dh_fold = to_bf16(dh_part - h @ M.T + const)                          # the correction GEMM, accumulating
        rows.append((gname, rel(dw_fold, dw_true), rel(dh_fold, dh_true), np.abs(b_fold - b).max() / np.abs(b).max()))
    return rel(dw_now, dw_true), rel(dh_now, dh_true), rows


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    print("relative error against float64 (Frobenius); `shift` added to x, whose standard deviation is about 1")
    print("shift  G          dW today  dW folded  dh today  dh folded  dgamma folded (max rel)")
    for shift in (0.0, 1.0, 3.0):
        dw_now, dh_now, rows = study(rng, 200_000, 64, 256, shift)
        for gname, dw_f, dh_f, dgamma_f in rows:
            print(f"{shift:5.1f}  {gname}  {dw_now:.2e}  {dw_f:.2e}   {dh_now:.2e}  {dh_f:.2e}   {dgamma_f:.2e}")
