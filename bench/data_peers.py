#!/usr/bin/env python3
"""`make bench-data`, the peers' side: the same work as bench/jpeg_rate.c (decode, random-
resized crop 224, horizontal flip, ToTensor + Normalize to FP32 CHW) on the same JPEGs held
in memory, with Pillow + torchvision transforms, in 1 process (per core: images per CPU second of
the process, which other load on a shared machine does not dilute) and in N processes
(total, wall clock); and with every other peer importable from PYTHONPATH (Pillow-SIMD is Pillow's
drop-in: run with its site directory first). Usage: data_peers.py DIR PROCS SECONDS"""
import glob, io, multiprocessing as mp, os, sys, time
import torch
from PIL import Image
import PIL
from torchvision import transforms as T

torch.set_num_threads(1)
TF = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

def worker(args):
    files, seconds, seed = args
    blobs = [open(f, "rb").read() for f in files]
    torch.manual_seed(seed)
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        for k in range(16):
            TF(Image.open(io.BytesIO(blobs[(n * 7 + seed * 13) % len(blobs)])).convert("RGB"))
            n += 1
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)

def main():
    d, procs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    files = sorted(glob.glob(os.path.join(d, "*.jpg")))
    name = f"Pillow {PIL.__version__} + torchvision"
    print(f"{name}: {len(files)} JPEGs in memory")
    wall, cpu = worker((files, seconds, 0))
    print(f"{name} procs 1: {wall:.1f} img/s wall, {cpu:.1f} img/s per CPU second")
    if procs > 1:
        with mp.Pool(procs) as pool:
            rates = pool.map(worker, [(files, seconds, s) for s in range(procs)])
        print(f"{name} procs {procs}: {sum(r[0] for r in rates):.1f} img/s wall")

main()
