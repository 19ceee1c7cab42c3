#!/usr/bin/python3
# PyTorch reference for `make bench-cpu`: the same nets as specs/examples/ (fmnist_lenet,
# fmnist_mlp, fmnist_resnet, fmnist_vit), the same batch, loss (label smoothing) and optimizer, timed
# over STEPS training steps on real Fashion-MNIST batches held in memory (pre-normalized, no
# augmentation: any difference in data handling favors torch). --mode picks eager (NCHW),
# channels_last (NHWC tensors, oneDNN's preferred layout) or compile (torch.compile, 2.x);
# --bf16 runs forward and loss under CPU autocast to bfloat16 (FP32 weights and optimizer).
# usage: torch_cpu_ref.py NET --batch B --steps N --threads T [--mode M] [--bf16] [--data DIR] [--params]
import argparse
import gzip
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, 10))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


class Basic(nn.Module):
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.down = None
        if stride != 1 or cin != planes:
            self.down = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


def resnet():
    # specs/examples/fmnist_resnet.spec: stem 32, stages 32/64/128 of 2 basic blocks each.
    layers = [nn.Conv2d(1, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()]
    cin = 32
    for planes, stride in ((32, 1), (64, 2), (128, 2)):
        for i in range(2):
            layers.append(Basic(cin, planes, stride if i == 0 else 1))
            cin = planes
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)]
    return nn.Sequential(*layers)


class EncoderLayer(nn.Module):
    # torchvision's EncoderBlock: pre-norm self-attention and MLP, each with a residual add
    def __init__(self, hidden, heads, mlp):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(hidden, mlp), nn.GELU(), nn.Linear(mlp, hidden))

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.self_attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class ViT(nn.Module):
    # specs/examples/fmnist_vit.spec: 4x4 patches of 28x28x1 to 64 features, class token,
    # position embedding, 4 encoder layers (4 heads, MLP 128), final norm, head on the class token.
    def __init__(self, image=28, patch=4, hidden=64, layers=4, heads=4, mlp=128, classes=10):
        super().__init__()
        self.conv_proj = nn.Conv2d(1, hidden, patch, patch)
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.pos_embedding = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, hidden) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(hidden, heads, mlp) for _ in range(layers)])
        self.ln = nn.LayerNorm(hidden, eps=1e-6)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)   # [N, T, C]
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        return self.head(self.ln(self.layers(x))[:, 0])


def sgd(**kw):
    return lambda params: torch.optim.SGD(params, lr=0.05, **kw)


# Per net: the model, the spec's optimizer (solver.sgd / solver.adamw settings) and label smoothing.
NETS = {
    "fmnist_lenet": (lenet, sgd(momentum=0.9, nesterov=True, weight_decay=5e-4), 0.1),
    "fmnist_mlp": (mlp, sgd(momentum=0.9), 0.0),
    "fmnist_resnet": (resnet, sgd(momentum=0.9, nesterov=True, weight_decay=5e-4), 0.1),
    "fmnist_vit": (ViT, lambda params: torch.optim.AdamW(params, lr=0.002, weight_decay=0.05), 0.1),
}


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net", choices=sorted(NETS))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--mode", choices=("eager", "channels_last", "compile"), default="eager")
    ap.add_argument("--bf16", action="store_true", help="autocast to bfloat16 (CPU)")
    ap.add_argument("--params", action="store_true", help="print the parameter count and exit")
    a = ap.parse_args()
    make, optimizer, smoothing = NETS[a.net]
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    model = make()
    if a.params:
        print(sum(p.numel() for p in model.parameters()))
        return
    images = read_idx(f"{a.data}/train-images-idx3-ubyte.gz")
    labels = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz").long()
    n_batches = len(images) // a.batch
    x_all = ((images[:n_batches * a.batch].float() / 255 - 0.2860) / 0.3530).unsqueeze(1)
    y_all = labels[:n_batches * a.batch]
    opt = optimizer(model.parameters())
    loss_fn = nn.CrossEntropyLoss(label_smoothing=smoothing)
    model.train()
    if a.mode == "channels_last":
        model = model.to(memory_format=torch.channels_last)
        x_all = x_all.contiguous(memory_format=torch.channels_last)
    run = torch.compile(model) if a.mode == "compile" else model

    def step(i):
        b = i % n_batches
        x, y = x_all[b * a.batch:(b + 1) * a.batch], y_all[b * a.batch:(b + 1) * a.batch]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss = loss_fn(run(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(a.warmup):
        step(i)
    t0 = time.perf_counter()
    for i in range(a.steps):
        step(a.warmup + i)
    secs = time.perf_counter() - t0
    print(f"torch: {a.steps} steps of batch {a.batch} in {secs:.3f} s: "
          f"{a.steps * a.batch / secs:.1f} images/s (threads {torch.get_num_threads()}, torch {torch.__version__}, "
          f"{a.mode}{', bf16 autocast' if a.bf16 else ''})")


if __name__ == "__main__":
    sys.exit(main())
