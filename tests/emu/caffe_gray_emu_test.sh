#!/usr/bin/env bash
# Caffe's gray ImageData (is_color: false: gray: true, OpenCV's decode and resize) through the
# emulated CUDA backend: the loader hands the device one byte plane per sample, which it
# normalizes with the one mean_value and scale, so the CUDA trainer's per-step losses are the
# CPU trainer's.
set -u
source "$(dirname "$0")/emu_prelude.sh"
emu_prelude test-emu-caffe-gray
"$PY" tests/caffe/write_gray_images.py "$out" || die "writing the images"
sed "s|ROOT|$out/img/|; s|TRAIN_LIST|$out/train.txt|; s|VAL_LIST|$out/val.txt|" tests/caffe/image_gray.prototxt >"$out/net.prototxt"
"$BUILD/trainc" import caffe "$out/net.prototxt" -o "$out/net.spec" >"$out/import.txt" 2>&1 || { cat "$out/import.txt"; die "import"; }
grep -qF 'gray: true' "$out/net.spec" || fail "the import has no gray: true"
cat >"$out/gray.spec" <<SPEC
extends: "net.spec"
data { train_samples: 32 decode_threads: 2 max_decode_failures: 0 }
solver { epochs: 2 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.02 } }
SPEC
emu_run cpu gray
emu_run cuda gray --backend cuda
emu_compare "gray ImageData (1 channel), CUDA vs CPU" cuda cpu 1e-5
[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "Caffe's gray ImageData on the emulated CUDA backend: the CPU's losses"
