#!/usr/bin/env python3
"""`make bench-data`, DALI's side: its CPU pipeline (no GPU: device_id=None) doing the same work
as bench/jpeg_rate.c on the same JPEGs held in memory: decoders.image_random_crop (libjpeg-turbo
with RandomResizedCrop's area [0.08, 1], ratio [3/4, 4/3] and 10 attempts, decoding only the
window as ours does), resize to 224x224 (linear), crop_mirror_normalize (flip p = 0.5, ImageNet
mean/std, FP32 CHW). With 1 DALI thread: images per CPU second of the whole process; with
PROCS threads: wall clock. DALI and its dependencies come from PYTHONPATH (PyPI, into build/).
Usage: data_dali.py DIR PROCS SECONDS"""
import glob, os, sys, time
import numpy as np
import nvidia.dali as dali
from nvidia.dali import fn, pipeline_def, types

BATCH = 32

def rate(blobs, threads, seconds):
    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, seed=1, prefetch_queue_depth=2)
    def pipe():
        jpegs = fn.external_source(source=lambda info: [blobs[(info.iteration * BATCH + k) % len(blobs)]
                                                        for k in range(BATCH)], batch_info=True, dtype=types.UINT8)
        img = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                            random_area=[0.08, 1.0], random_aspect_ratio=[0.75, 4.0 / 3.0],
                                            num_attempts=10)
        img = fn.resize(img, resize_x=224, resize_y=224, interp_type=types.INTERP_LINEAR, antialias=True)
        return fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="CHW", mirror=fn.random.coin_flip(),
                                        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                        std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
    p = pipe()
    p.build()
    p.run()   # warm-up
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        p.run()
        n += BATCH
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)

def main():
    d, procs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    blobs = [np.frombuffer(open(f, "rb").read(), np.uint8) for f in sorted(glob.glob(os.path.join(d, "*.jpg")))]
    name = f"DALI {dali.__version__} (CPU pipeline)"
    print(f"{name}: {len(blobs)} JPEGs in memory")
    wall, cpu = rate(blobs, 1, seconds)
    print(f"{name} procs 1: {wall:.1f} img/s wall, {cpu:.1f} img/s per CPU second")
    if procs > 1:
        wall, _ = rate(blobs, procs, seconds)
        print(f"{name} procs {procs}: {wall:.1f} img/s wall")

main()
