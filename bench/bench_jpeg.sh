#!/usr/bin/env bash
# `make bench-jpeg`: bench/specs/fmnist_jpeg.spec (a small CNN, random-resized crop + flip,
# validation resize + center crop) trained on all of Fashion-MNIST made into an ImageNet-style
# JPEG tree (60,000 train / 10,000 val JPEGs, RGB, upscaled), read through the packed shards.
# Prints the final test top-1 (the bar: 90%) and the wall time.
set -eu
BUILD=${BUILD:-build}
dir=$BUILD/bench/jpeg
tree=$BUILD/bench/fmnist-jpeg
mkdir -p "$dir"
[ -d "$tree/val" ] || /usr/bin/python3 tests/data/make_tree.py "$tree" 6000 1000 32
[ -f "$dir/packed/val.index" ] || "$BUILD/trainc" pack "$tree" -o "$dir/packed" | tail -2
"$BUILD/trainc" build bench/specs/fmnist_jpeg.spec -o "$dir/fmnist_jpeg" > /dev/null
rm -rf "$dir/run"
"$dir/fmnist_jpeg" --data "$dir/packed" --out "$dir/run" | tail -3
python3 - "$dir/run/metrics.jsonl" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
print(f"bench-jpeg: test top-1 {100 * s['top1']:.2f}% (bar 90%) in {s['wall_s']:.0f} s")
sys.exit(0 if s["top1"] >= 0.90 else 1)
PY
