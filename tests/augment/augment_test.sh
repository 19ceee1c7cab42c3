#!/usr/bin/env bash
# Mixup/cutmix, random erasing, repeated augmentation, the dense-target losses (softmax CE and
# timm's BCE on smoothed, mixed targets), TrivialAugmentWide and RandAugment against torch and
# torchvision, timm's RandAugment variant against a Pillow rewrite of timm's ops, and the
# loader's determinism with them on (world sizes, prefetch thread, resume):
# tests/augment/reference_test.py, policy_test.py and timm_test.py driving the sanitized
# build/tests/augment/augment_dump on a 320-sample Fashion-MNIST subset.
set -eu
source tests/lib.sh
tool=$BUILD/tests/augment/augment_dump
[ -x "$tool" ] || { echo "missing $tool: run make augment-tools" >&2; exit 1; }
# Debian's python3-torch and python3-torchvision live in the system interpreter.
py="$PY"
"$py" -c 'import torch, torchvision, numpy, PIL' 2>/dev/null ||
  { echo "FAIL: $py cannot import torch, torchvision, numpy and PIL (apt-get install python3-torchvision python3-pil)" >&2; exit 1; }
dir=$BUILD/test-augment
rm -rf "$dir" && mkdir -p "$dir"
"$PY" tests/train/make_idx.py /usr/share/datasets/fashion-mnist "$dir/data" 320 100
export ASAN_OPTIONS=detect_leaks=1 OMP_NUM_THREADS=1
"$py" tests/augment/reference_test.py "$tool" "$dir/data/good" "$dir"
"$py" tests/data/make_tree.py "$dir/tree" 2 1 32 > /dev/null
"$py" tests/augment/policy_test.py "$tool" "$dir/data/good" "$dir" "$dir/tree/train"
"$py" tests/augment/timm_test.py "$tool" "$dir/data/good" "$dir"
