#!/usr/bin/env bash
# Starting from torchvision's weights: torchvision writes a ResNet-18's state_dict (conv1 for one
# channel, random BN statistics so that they matter) as a .safetensors file, and the trainer of
# tests/interop/specs/resnet18_gray.spec (`init { }`: no init.spec, the file is a state_dict)
# starts from it with --init-from: its first-step loss on the 8 Fashion-MNIST samples of its
# one batch equals torchvision's in training mode on the same samples. With init.fresh the new
# classifier starts anew from a 1000-class state_dict and init.freeze keeps conv1 as loaded
# (read back through trainc export); ConvNeXt-Tiny's torchvision keys map onto its spec; a
# state_dict of another architecture, a missing key and a
# file that is no safetensors are one message each.
set -eu
source tests/lib.sh
py="$PY"
dir=$BUILD/test-interop/torch_init
rm -rf "$dir" && mkdir -p "$dir"
export OMP_NUM_THREADS=1

$py - "$dir" <<'PY'
import gzip, sys
import numpy as np
import torch, torchvision
sys.path.insert(0, "tests/interop")
from torch_check import write_safetensors
out = sys.argv[1]
torch.manual_seed(0)
def gray_resnet18(classes):
    m = torchvision.models.resnet18(num_classes=classes)
    m.conv1 = torch.nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    for mod in m.modules():   # statistics and affine values away from their defaults
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2); mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5); mod.bias.data.uniform_(-0.2, 0.2)
    return m
m = gray_resnet18(10)
write_safetensors(out + "/tv.safetensors", m.state_dict())
write_safetensors(out + "/tv1000.safetensors", gray_resnet18(1000).state_dict())
write_safetensors(out + "/r50.safetensors", torchvision.models.resnet50(num_classes=10).state_dict())
sd = m.state_dict(); del sd["layer3.1.conv2.weight"]
write_safetensors(out + "/missing.safetensors", sd)
# the spec's one batch: train_samples 8 of 60000, evenly spaced (i * 60000 / 8)
d = "/usr/share/datasets/fashion-mnist"
x = np.frombuffer(gzip.open(d + "/train-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(-1, 1, 28, 28)
y = np.frombuffer(gzip.open(d + "/train-labels-idx1-ubyte.gz").read()[8:], np.uint8)
pick = [i * 60000 // 8 for i in range(8)]
xs = (torch.from_numpy(x[pick].astype(np.float32)) / 255 - 0.2860) / 0.3530
m.train()
loss = torch.nn.functional.cross_entropy(m(xs), torch.from_numpy(y[pick].astype(np.int64)), label_smoothing=0.1)
open(out + "/torch_loss.txt", "w").write(repr(loss.item()))
PY

"$TRAINC" build tests/interop/specs/resnet18_gray.spec -o "$dir/r18" > /dev/null
"$dir/r18" --init-from "$dir/tv.safetensors" --out "$dir/run" > "$dir/run.txt"
grep "values from" "$dir/run.txt"
$py - "$dir" <<'PY'
import json, sys
out = sys.argv[1]
first = [r for r in map(json.loads, open(out + "/run/metrics.jsonl")) if r["event"] == "train"][0]
ref = float(open(out + "/torch_loss.txt").read())
print("first-step loss from torchvision's weights: ours %.7f, torchvision %.7f" % (first["loss"], ref))
assert first["step"] == 1 and abs(first["loss"] - ref) <= 1e-5 * ref, "first-step losses differ"
PY

# init.fresh + init.freeze from the 1000-class state_dict: fc anew, conv1 kept as loaded.
sed -e 's/^init { }$/init { fresh: ["fc"] freeze: ["conv1"] }/' -e 's|"../../../specs|"'"$(pwd)"'/specs|' \
    tests/interop/specs/resnet18_gray.spec > "$dir/ft.spec"
grep -q 'freeze: \["conv1"\]' "$dir/ft.spec"
"$TRAINC" build "$dir/ft.spec" -o "$dir/ft" > /dev/null
"$dir/ft" --init-from "$dir/tv1000.safetensors" --out "$dir/run-ft" > "$dir/ft.txt"
grep -q "1 layer fresh, 1 tensor frozen" "$dir/ft.txt" || { echo "FAIL: fresh/frozen counts" >&2; cat "$dir/ft.txt" >&2; exit 1; }
"$TRAINC" export "$dir/run-ft/checkpoints/ckpt-000000000001.bin" --spec "$dir/ft.spec" -o "$dir/ft.safetensors" > /dev/null
$py - "$dir" <<'PY'
import sys
import torch
sys.path.insert(0, "tests/interop")
from torch_check import read_safetensors
out = sys.argv[1]
src, _ = read_safetensors(out + "/tv1000.safetensors")
ft, _ = read_safetensors(out + "/ft.safetensors")
assert torch.equal(src["conv1.weight"], ft["conv1.weight"]), "frozen conv1 changed"
assert not torch.equal(src["layer1.0.conv1.weight"], ft["layer1.0.conv1.weight"]), "layer1 did not train"
assert ft["fc.weight"].shape == (10, 512)
print("fresh fc (10 classes) from a 1000-class state_dict; frozen conv1 equals torchvision's after a step")
PY

# ConvNeXt-Tiny from torchvision's state_dict (features.S.I.block.K keys, Linear weights into
# 1x1 convs, layer scale [C, 1, 1]): one step at LR 1e-30 leaves the weights as loaded, and
# the export of that checkpoint gives torchvision's tensors back (within 1e-25).
printf '%s\n' "extends: \"$(pwd)/tests/interop/specs/convnext_small.spec\"" \
  "solver { adamw { weight_decay: 0 } lr { base: 1e-30 } }" "init { }" > "$dir/cnx.spec"
$py - "$dir" <<'PY'
import sys
import torch, torchvision
sys.path.insert(0, "tests/interop")
from torch_check import write_safetensors
torch.manual_seed(1)
m = torchvision.models.convnext_tiny(num_classes=10)
for name, p in m.named_parameters():
    if name.endswith("layer_scale"): p.data.uniform_(0.1, 1.0)   # away from the 1e-6 start
write_safetensors(sys.argv[1] + "/cnx_tv.safetensors", m.state_dict())
PY
"$TRAINC" build "$dir/cnx.spec" -o "$dir/cnx" > /dev/null
"$dir/cnx" --init-from "$dir/cnx_tv.safetensors" --out "$dir/run-cnx" > /dev/null
"$TRAINC" export "$dir/run-cnx/checkpoints/ckpt-000000000001.bin" --spec "$dir/cnx.spec" -o "$dir/cnx_back.safetensors" > /dev/null
$py - "$dir" <<'PY'
import sys
import torch
sys.path.insert(0, "tests/interop")
from torch_check import read_safetensors
tv, _ = read_safetensors(sys.argv[1] + "/cnx_tv.safetensors")
back, _ = read_safetensors(sys.argv[1] + "/cnx_back.safetensors")
assert set(tv) == set(back), set(tv) ^ set(back)
# zero biases move by the step's 1e-30 (AdamW's first step is lr x sign(g)); all else is exact
bad = [k for k in tv if not torch.allclose(tv[k], back[k], rtol=0, atol=1e-25)]
assert not bad, "changed: %s" % bad[:5]
print("ConvNeXt-Tiny: torchvision's %d tensors in, the same %d out (init, one step at LR 1e-30, export)" % (len(tv), len(back)))
PY

fails() {   # fails NAME EXPECTED-TEXT COMMAND...
  local name=$1 want=$2; shift 2
  if "$@" > "$dir/$name.out" 2> "$dir/$name.err"; then echo "FAIL $name: accepted" >&2; exit 1; fi
  grep -qF -- "$want" "$dir/$name.err" || { echo "FAIL $name: no '$want' in:" >&2; cat "$dir/$name.err" >&2; exit 1; }
  [ "$(grep -c 'error:' "$dir/$name.err")" = 1 ] || { echo "FAIL $name: not one error line" >&2; cat "$dir/$name.err" >&2; exit 1; }
  echo "ok $name: $(grep -m1 'error:' "$dir/$name.err")"
}
fails other_arch "tensor 'fc.weight' is [10, 2048] in $dir/r50.safetensors but [10, 512] here" \
  "$dir/r18" --init-from "$dir/r50.safetensors" --out "$dir/run-x"
fails missing_key "has no tensor 'layer3.1.conv2.weight'" "$dir/r18" --init-from "$dir/missing.safetensors" --out "$dir/run-y"
fails classifier "tensor 'fc.weight' is [1000, 512]" "$dir/r18" --init-from "$dir/tv1000.safetensors" --out "$dir/run-z"
fails not_safetensors "is not a safetensors file" "$dir/r18" --init-from "$dir/torch_loss.txt" --out "$dir/run-w"
fails no_file "no-such.safetensors" "$dir/r18" --init-from "$dir/no-such.safetensors" --out "$dir/run-v"
echo "PASS"
