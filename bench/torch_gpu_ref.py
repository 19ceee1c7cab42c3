#!/usr/bin/env python3
"""PyTorch reference for `make bench-gpu`: training throughput of a torchvision model on
synthetic data on the GPU, AMP (bf16 or fp16 autocast, GradScaler for fp16), channels_last,
SGD momentum; eager and torch.compile, printing one JSON line per mode and the best.

usage: torch_gpu_ref.py MODEL PRECISION [--batch 256] [--steps 30] [--warmup 10] [--modes eager,compile]
"""
import argparse, json, sys, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["resnet50", "alexnet", "convnext_tiny"])
    ap.add_argument("precision", choices=["bf16", "fp16", "fp32", "tf32"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--modes", default="eager,compile")
    a = ap.parse_args()
    import torch, torchvision
    if not torch.cuda.is_available():
        sys.exit("error: torch sees no CUDA device; bench-gpu needs a GPU")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    best = None
    for mode in a.modes.split(","):
        torch.manual_seed(0)
        model = getattr(torchvision.models, a.model)(num_classes=1000).cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")
        x = torch.randn(a.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (a.batch,), device="cuda")
        loss_fn = torch.nn.CrossEntropyLoss()
        fwd = torch.compile(model) if mode == "compile" else model

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                loss = loss_fn(fwd(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

        try:
            for _ in range(a.warmup):
                step()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
            ips = a.steps * a.batch / (time.perf_counter() - t0)
        except Exception as e:   # a mode that fails (e.g. no compiler toolchain) is reported, not fatal
            print(json.dumps({"model": a.model, "precision": a.precision, "mode": mode, "error": str(e)[:200]}))
            continue
        print(json.dumps({"model": a.model, "precision": a.precision, "mode": mode, "img_per_s": round(ips, 1)}),
              flush=True)
        if best is None or ips > best[1]:
            best = (mode, ips)
        del model, opt, fwd
        torch.cuda.empty_cache()
    if best is None:
        sys.exit("error: no PyTorch mode ran")
    print(json.dumps({"model": a.model, "precision": a.precision, "best_mode": best[0], "best_img_per_s": round(best[1], 1),
                      "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}))

if __name__ == "__main__":
    main()
