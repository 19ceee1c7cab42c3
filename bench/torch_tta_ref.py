#!/usr/bin/env python3
# PyTorch reference for the time-to-accuracy benchmark (bench/time_to_acc.sh): the
# Fashion-MNIST example specs/examples/fmnist_lenet.spec with the same net, batch, SGD
# (Nesterov, weight decay), one-cycle LR per step, label smoothing and epochs, FP32 with TF32
# off (as the spec's precision), evaluating on the test split after every epoch. Prints one
# JSON line: the training seconds until test top-1 first reached the target (evaluations
# included, as our trainer's eval records count them), the final accuracy and the total.
# The batches sit on the device from the start, shuffled there per epoch: any difference in
# data handling favors torch.
# usage: torch_tta_ref.py [--data DIR] [--device cuda|cpu] [--epochs 5] [--target 0.92]
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_cpu_ref import NETS, read_idx  # noqa: E402  (the nets of bench-cpu)

MEAN, STD = 0.2860, 0.3530   # the spec's normalize {}
MAX_LR, PCT_START = 0.1, 0.3  # the spec's one_cycle {} (div_factor 25, final_div_factor 1e4: the defaults)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("FMNIST_DIR", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--target", type=float, default=0.92)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True

    def load(split):
        x = read_idx(f"{a.data}/{split}-images-idx3-ubyte.gz")
        y = read_idx(f"{a.data}/{split}-labels-idx1-ubyte.gz").long()
        return ((x.float() / 255 - MEAN) / STD).unsqueeze(1).to(dev), y.to(dev)

    x_train, y_train = load("train")
    x_test, y_test = load("t10k")
    make, sgd, smoothing = NETS["fmnist_lenet"]
    model = make().to(dev)
    steps_per_epoch = len(x_train) // a.batch   # the trainer drops the last partial batch too
    opt = torch.optim.SGD(model.parameters(), lr=MAX_LR, **sgd)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=MAX_LR, total_steps=a.epochs * steps_per_epoch,
                                                pct_start=PCT_START, anneal_strategy="cos",
                                                cycle_momentum=False, div_factor=25, final_div_factor=1e4)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=smoothing)
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def evaluate():
        model.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(x_test), 1000):
                correct += (model(x_test[i:i + 1000]).argmax(1) == y_test[i:i + 1000]).sum().item()
        model.train()
        return correct / len(x_test)

    sync()
    t0 = time.perf_counter()
    reached, evals = None, []
    for epoch in range(a.epochs):
        order = torch.randperm(len(x_train), device=dev, generator=gen)
        for s in range(steps_per_epoch):
            idx = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x_train[idx]), y_train[idx]).backward()
            opt.step()
            sched.step()
        top1 = evaluate()
        sync()
        wall = time.perf_counter() - t0
        evals.append({"epoch": epoch + 1, "top1": top1, "wall_s": round(wall, 3)})
        if reached is None and top1 >= a.target:
            reached = evals[-1]
    print(json.dumps({"event": "time_to_accuracy", "target": a.target, "device": torch.cuda.get_device_name(dev)
                      if dev.type == "cuda" else "cpu", "torch": torch.__version__,
                      "reached": reached, "final_top1": evals[-1]["top1"], "wall_s": evals[-1]["wall_s"],
                      "evals": evals}))
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
