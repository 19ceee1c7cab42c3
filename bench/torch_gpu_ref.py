#!/usr/bin/env python3
"""PyTorch reference for `make bench-gpu`: training throughput of a torchvision model on
synthetic data on the GPU, AMP (bf16 or fp16 autocast, GradScaler for fp16), channels_last,
SGD momentum; eager and torch.compile, printing one JSON line per mode and the best. The
models are torchvision's constructors as bench/specs/gpu_MODEL.spec builds them (ResNet-50,
AlexNet, ConvNeXt-Tiny, ViT-B/16, EfficientNet-B0; 1000 classes, 224x224).

With --ready-file R --go-file G (tests/gpu/device_check.sh), each mode compiles and warms up,
touches R, and waits for G before it times its steps: the compilation (CPU) overlaps the
caller's build, and the timing runs on a machine the caller keeps otherwise quiet.

usage: torch_gpu_ref.py MODEL PRECISION [--batch 256] [--steps 30] [--warmup 10] [--modes eager,compile]
                        [--ready-file R --go-file G [--go-timeout 900]]
"""
import argparse, json, os, sys, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["resnet50", "alexnet", "convnext_tiny", "vit_b_16", "efficientnet_b0"])
    ap.add_argument("precision", choices=["bf16", "fp16", "fp32", "tf32"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--ready-file")
    ap.add_argument("--go-file")
    ap.add_argument("--go-timeout", type=float, default=900)
    a = ap.parse_args()
    if bool(a.ready_file) != bool(a.go_file):
        sys.exit("error: --ready-file and --go-file go together")
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
            if a.go_file:
                open(a.ready_file, "a").close()
                deadline = time.monotonic() + a.go_timeout
                while not os.path.exists(a.go_file):
                    if time.monotonic() > deadline:
                        sys.exit(f"error: no go ({a.go_file}) within {a.go_timeout:.0f} s of being ready")
                    time.sleep(0.1)
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
