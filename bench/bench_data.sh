#!/usr/bin/env bash
# `make bench-data`: the image loader's per-sample work against Pillow + torchvision (and
# Pillow-SIMD where $PILLOW_SIMD_PATH names a site directory holding it, and DALI's CPU
# pipeline where $DALI_PATH names one holding nvidia-dali and its dependencies) on the same
# photographs; prints img/s per core and total, the ratio, and the cores that feed one H100
# at 7,000 img/s (MLPerf's rate per GPU).
set -eu
BUILD=${BUILD:-build}
photos=$BUILD/bench/photos
cores=$(nproc)
secs=${BENCH_SECONDS:-5}
[ -d "$photos" ] || /usr/bin/python3 bench/make_photos.py "$photos" 200
ours=$("$BUILD/bench/jpeg_rate" "$photos" "$cores" "$secs")
echo "$ours"
peer=$(/usr/bin/python3 bench/data_peers.py "$photos" "$cores" "$secs")
echo "$peer"
simd=""
if [ -n "${PILLOW_SIMD_PATH:-}" ]; then
  simd=$(PYTHONPATH=$PILLOW_SIMD_PATH /usr/bin/python3 bench/data_peers.py "$photos" "$cores" "$secs" | sed 's/^Pillow /Pillow-SIMD /')
  echo "$simd"
fi
dali=""
if [ -n "${DALI_PATH:-}" ]; then
  lib=$(cd "$DALI_PATH/nvidia/nvimgcodec" && pwd)   # libnvimgcodec.so.0, which DALI dlopens
  dali=$(PYTHONPATH=$DALI_PATH LD_LIBRARY_PATH=$lib /usr/bin/python3 bench/data_dali.py "$photos" "$cores" "$secs")
  echo "$dali"
fi
python3 - "$ours" "$peer" "$simd" "$cores" "$dali" <<'PY'
import re, sys
ours, peer, simd, cores, dali = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
one = float(re.search(r"threads 1: [\d.]+ img/s wall, ([\d.]+) img/s per CPU", ours).group(1))
tot = float(re.search(rf"threads {cores}: ([\d.]+) img/s wall", ours).group(1)) if cores > 1 else one
print(f"per core (images per CPU second): ours {one:.0f}")
for name, text in (("Pillow + torchvision", peer), ("Pillow-SIMD + torchvision", simd), ("DALI CPU pipeline", dali)):
    m = re.search(r"procs 1: [\d.]+ img/s wall, ([\d.]+) img/s per CPU", text)
    if m:
        print(f"  {name} {float(m.group(1)):.0f}: ours is {one / float(m.group(1)):.2f}x")
print(f"total on {cores} cores (wall clock, shared machine): ours {tot:.0f} img/s")
print(f"cores to feed one H100 at 7,000 img/s: {7000 / one:.1f} (at this machine's per-core rate)")
PY
