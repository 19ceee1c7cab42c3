#!/usr/bin/env bash
# trainc export --format torch for torchvision's ConvNeXt-Tiny (our block names under
# torchvision's keys features.S.I.block.K / classifier.K, 1x1 convs as Linear weights, layer
# scale as [C, 1, 1]) at 32x32, and for the example nets fmnist_mlp and fmnist_resnet (a few
# steps each): each export loads into the torch module with strict=True and gives our
# --predict logits on the same PNG files (tests/interop/torch_check.py).
set -eu
source tests/lib.sh
py="$PY"
dir=$BUILD/test-interop/torch_models
rm -rf "$dir" && mkdir -p "$dir/img_gray" "$dir/img_rgb"
export OMP_NUM_THREADS=1
$py - "$dir" <<'PY'
import sys
import numpy as np
from PIL import Image
rng = np.random.default_rng(5)
for i in range(6):
    Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save("%s/img_rgb/%d.png" % (sys.argv[1], i))
    Image.fromarray(rng.integers(0, 256, (28, 28), dtype=np.uint8)).save("%s/img_gray/%d.png" % (sys.argv[1], i))
PY

# torchvision's ConvNeXt-Tiny: our block names under torchvision's keys.
"$TRAINC" build tests/interop/specs/convnext_small.spec -o "$dir/cnx" > /dev/null
"$dir/cnx" --out "$dir/cnxrun" > /dev/null
"$TRAINC" export "$dir/cnxrun/checkpoints/ckpt-000000000001.bin" --spec tests/interop/specs/convnext_small.spec \
  -o "$dir/cnx.safetensors"
"$dir/cnx" --predict "$dir/cnxrun/checkpoints/ckpt-000000000001.bin" "$dir/img_rgb" --out "$dir/cnxpred" > /dev/null
$py tests/interop/torch_check.py convnext_tiny "$dir/cnx.safetensors" "$dir/cnxpred/predictions.jsonl"

# The other examples, a few steps each, against equivalent torch modules.
for ex in mlp:fmnist_mlp resnet:fmnist_resnet; do
  kind=${ex%%:*} name=${ex#*:}
  sed -e 's/^  epochs: [0-9]*$/  iterations: 8\n  checkpoint { every_iterations: 8 }/' \
      -e 's/^  val {$/  val_samples: 500\n  val {/' "specs/examples/$name.spec" > "$dir/$name.spec"
  grep -q "iterations: 8" "$dir/$name.spec" || { echo "FAIL: could not derive $name's spec" >&2; exit 1; }
  "$TRAINC" build "$dir/$name.spec" -o "$dir/$name" > /dev/null
  "$dir/$name" --out "$dir/run-$name" > /dev/null
  "$TRAINC" export "$dir/run-$name/checkpoints/ckpt-000000000008.bin" --spec "$dir/$name.spec" -o "$dir/$name.safetensors"
  "$dir/$name" --predict "$dir/run-$name/checkpoints/ckpt-000000000008.bin" "$dir/img_gray" --out "$dir/pred-$name" > /dev/null
  $py tests/interop/torch_check.py "$([ $kind = mlp ] && echo mlp || echo example_resnet)" "$dir/$name.safetensors" \
    "$dir/pred-$name/predictions.jsonl"
done
echo "PASS"
