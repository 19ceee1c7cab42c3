#!/usr/bin/env bash
# `make bench-data`: the image loader's per-sample work against Pillow + torchvision (and
# Pillow-SIMD where $PILLOW_SIMD_PATH names a site directory holding it) on the same
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
python3 - "$ours" "$peer" "$cores" <<'PY'
import re, sys
ours, peer, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
one = float(re.search(r"threads 1: ([\d.]+)", ours).group(1))
tot = float(re.search(rf"threads {cores}: ([\d.]+)", ours).group(1)) if cores > 1 else one
p1 = float(re.search(r"procs 1: ([\d.]+)", peer).group(1))
print(f"per core: ours {one:.0f} img/s, Pillow + torchvision {p1:.0f} img/s: {one / p1:.2f}x")
print(f"total on {cores} cores: ours {tot:.0f} img/s")
print(f"cores to feed one H100 at 7,000 img/s: {7000 / one:.0f} (at this machine's per-core rate)")
PY
