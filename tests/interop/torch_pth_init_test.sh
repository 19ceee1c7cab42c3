#!/usr/bin/env bash
# Starting from a torch.save file (.pth): torchvision writes a ResNet-18's state_dict (conv1
# for one channel, BN statistics away from their defaults) with torch.save, and the trainer of
# tests/interop/specs/resnet18_gray.spec reads it through runtime/core/torch_pt.c (the zip)
# and torch_pickle.c (the pickle) with --init-from: its first-step loss equals torchvision's
# on the same batch. Also read: pickle protocol 4, a training checkpoint's dict (the
# state_dict under "model", beside an optimizer's state, numbers and strings), and the spec's
# own init.checkpoint with init.fresh/freeze as for safetensors. Refused, one message each: a
# pickled model instead of a state_dict (the opcode named), the format before PyTorch 1.6, a
# non-contiguous tensor, a compressed zip, a cut file, another architecture's shapes.
set -eu
source "$(dirname "$0")/../lib.sh"
need_trainc
dir=$BUILD/test-interop/torch_pth
fresh_dir "$dir"
export OMP_NUM_THREADS=1

"$PY" - "$dir" <<'PY'
import gzip, sys, zipfile
import numpy as np
import torch, torchvision
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
torch.save(m.state_dict(), out + "/tv.pth")
torch.save(m.state_dict(), out + "/tv_p4.pt", pickle_protocol=4)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
torch.save({"model": m.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "best_acc1": 0.25,
            "args": {"arch": "resnet18", "lr": 0.1}}, out + "/checkpoint.pth")
torch.save(gray_resnet18(1000).state_dict(), out + "/tv1000.pth")
torch.save(torchvision.models.resnet50(num_classes=10).state_dict(), out + "/r50.pth")
torch.save(m, out + "/model.pth")   # the module, not its state_dict
torch.save(m.state_dict(), out + "/legacy.pth", _use_new_zipfile_serialization=False)
sd = m.state_dict(); sd["fc.weight"] = sd["fc.weight"].t().contiguous().t()
torch.save(sd, out + "/strided.pth")
with zipfile.ZipFile(out + "/tv.pth") as src, zipfile.ZipFile(out + "/deflated.pth", "w", zipfile.ZIP_DEFLATED) as dst:
    for info in src.infolist(): dst.writestr(info.filename, src.read(info.filename))
raw = open(out + "/tv.pth", "rb").read()
open(out + "/cut.pth", "wb").write(raw[: len(raw) // 2])
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
first_loss() {  # run dir, file read: the first step's loss against torchvision's
  "$PY" - "$1" "$dir/torch_loss.txt" "$2" <<'PY'
import json, sys
first = [r for r in map(json.loads, open(sys.argv[1] + "/metrics.jsonl")) if r["event"] == "train"][0]
ref = float(open(sys.argv[2]).read())
print("first-step loss from %s: ours %.7f, torchvision %.7f" % (sys.argv[3], first["loss"], ref))
assert first["step"] == 1 and abs(first["loss"] - ref) <= 1e-5 * ref, "first-step losses differ"
PY
}
for f in tv.pth tv_p4.pt checkpoint.pth; do
  "$dir/r18" --init-from "$dir/$f" --out "$dir/run-$f" > "$dir/run-$f.txt"
  grep -q "11184970 values from $dir/$f, 0 layers fresh" "$dir/run-$f.txt" || { cat "$dir/run-$f.txt"; die "$f: not every value loaded"; }
  first_loss "$dir/run-$f" "$f"
done

# The spec's init.checkpoint names the .pth (no --init-from); fc anew, conv1 frozen.
sed -e 's|^init { }$|init { checkpoint: "'"$dir"'/tv1000.pth" fresh: ["fc"] freeze: ["conv1"] }|' \
    -e 's|"../../../specs|"'"$(pwd)"'/specs|' tests/interop/specs/resnet18_gray.spec > "$dir/ft.spec"
grep -q 'tv1000.pth' "$dir/ft.spec" || die "the init block was not rewritten"
"$TRAINC" build "$dir/ft.spec" -o "$dir/ft" > /dev/null
"$dir/ft" --out "$dir/run-ft" > "$dir/ft.txt"
grep -q "values from $dir/tv1000.pth, 1 layer fresh, 1 tensor frozen" "$dir/ft.txt" ||
  { cat "$dir/ft.txt"; die "init.checkpoint: the fresh/frozen counts"; }
"$TRAINC" export "$dir/run-ft/checkpoints/ckpt-000000000001.bin" --spec "$dir/ft.spec" -o "$dir/ft.pt" > /dev/null
"$PY" - "$dir" <<'PY'
import sys, torch
out = sys.argv[1]
src, ft = torch.load(out + "/tv1000.pth"), torch.load(out + "/ft.pt")
assert torch.equal(src["conv1.weight"], ft["conv1.weight"]), "frozen conv1 changed"
assert not torch.equal(src["layer1.0.conv1.weight"], ft["layer1.0.conv1.weight"]), "layer1 did not train"
assert ft["fc.weight"].shape == (10, 512)
print("init.checkpoint .pth: fresh fc (10 classes) from a 1000-class state_dict; frozen conv1 as torchvision wrote it")
PY

fails() {   # fails NAME EXPECTED-TEXT COMMAND...
  local name=$1 want=$2; shift 2
  if "$@" > "$dir/$name.out" 2> "$dir/$name.err"; then fail "$name: accepted"; return; fi
  grep -qF -- "$want" "$dir/$name.err" || { cat "$dir/$name.err"; fail "$name: no '$want' in its message"; return; }
  [ "$(grep -c 'error:' "$dir/$name.err")" = 1 ] || { cat "$dir/$name.err"; fail "$name: not one error line"; return; }
  echo "ok $name: $(grep -m1 'error:' "$dir/$name.err")"
}
fails model "opcode 0x81 NEWOBJ at byte" "$dir/r18" --init-from "$dir/model.pth" --out "$dir/x1"
fails legacy "format before PyTorch 1.6" "$dir/r18" --init-from "$dir/legacy.pth" --out "$dir/x2"
fails strided "tensor 'fc.weight' is not contiguous" "$dir/r18" --init-from "$dir/strided.pth" --out "$dir/x3"
fails deflated "is compressed (method 8)" "$dir/r18" --init-from "$dir/deflated.pth" --out "$dir/x4"
fails cut "no zip end record" "$dir/r18" --init-from "$dir/cut.pth" --out "$dir/x5"
fails other_arch "tensor 'fc.weight' is [10, 2048] in $dir/r50.pth but [10, 512] here" \
  "$dir/r18" --init-from "$dir/r50.pth" --out "$dir/x6"
[ $status = 0 ] && echo "PASS"
exit $status
