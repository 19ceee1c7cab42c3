#!/usr/bin/env bash
# After training: BIN --eval, BIN --predict and trainc export --format torch, against PyTorch.
# A LeNet (the example) trains 40 steps; `--eval` of its last checkpoint must give the run's
# last evaluation (top-1 exactly, the same loss), on 1 and on 2 MPI ranks; bad checkpoints are
# one error and a non-zero exit. Its export loads into the equivalent torch module with
# strict=True and gives our --predict logits on PNG files and the --eval top-1 and loss on the
# test split. torchvision's resnet18(num_classes=10) loads the export of
# specs/models/resnet18.spec at 32x32 (3 steps: BN statistics moved) with strict=True and
# gives our logits on RGB PNGs; its .pt export (torch.save's zip of pickles) is what
# torch.load reads as the same state_dict (ConvNeXt and the other examples: torch_models_test.sh).
set -eu
source tests/lib.sh
py="$PY"
dir=$BUILD/test-interop/torch_export
rm -rf "$dir" && mkdir -p "$dir/img_gray" "$dir/img_rgb"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

sed -e 's/^  epochs: 5$/  iterations: 40\n  checkpoint { every_iterations: 40 }/' -e 's/^  log_every: 100$/  log_every: 20/' \
    -e 's/^  val {$/  val_samples: 2000\n  val {/' specs/examples/fmnist_lenet.spec > "$dir/lenet.spec"
grep -q "val_samples: 2000" "$dir/lenet.spec" || { echo "FAIL: could not derive the LeNet spec" >&2; exit 1; }
"$TRAINC" build "$dir/lenet.spec" -o "$dir/lenet" > /dev/null
"$dir/lenet" --out "$dir/run" > "$dir/train.txt"
ckpt=$dir/run/checkpoints/ckpt-000000000040.bin

# --eval: the record next to the run, equal to the training run's last evaluation.
"$dir/lenet" --eval "$ckpt" | tee "$dir/eval.txt"
"$TRAINC" export "$ckpt" --spec "$dir/lenet.spec" -o "$dir/lenet.safetensors"
"$dir/lenet" --eval "$ckpt" --data /usr/share/datasets/fashion-mnist --out "$dir/eval_data" > /dev/null
if command -v mpirun > /dev/null; then
  mpirun --oversubscribe --bind-to none -np 2 "$dir/lenet" --eval "$ckpt" --out "$dir/eval2" > "$dir/eval2.txt"
fi
$py - "$dir/run/metrics.jsonl" "$dir/run/eval.jsonl" "$dir/eval_data/eval.jsonl" "$dir/eval2/eval.jsonl" <<'PY'
import json, os, sys
last = [json.loads(l) for l in open(sys.argv[1]) if '"eval"' in l][-1]
for path in sys.argv[2:]:
    if not os.path.exists(path):
        print("(no mpirun: %s not written)" % path); continue
    rec = [json.loads(l) for l in open(path)][-1]
    assert rec["event"] == "eval" and rec["step"] == last["step"] == 40, rec
    assert rec["top1"] == last["top1"] and rec["top5"] == last["top5"], (rec, last)
    assert abs(rec["loss"] - last["loss"]) <= 1e-6 * last["loss"], (rec, last)
    assert len(rec["spec_hash"]) == 64 and rec["checkpoint"].endswith("ckpt-000000000040.bin")
    print("--eval on %d rank%s: top-1 %.4f loss %.6f = training's last evaluation (top-1 %.4f loss %.6f)"
          % (rec["ranks"], "" if rec["ranks"] == 1 else "s", rec["top1"], rec["loss"], last["top1"], last["loss"]))
PY

# Bad checkpoints: one error line, non-zero exit, nothing evaluated.
fails() {   # fails NAME EXPECTED-TEXT COMMAND...
  local name=$1 want=$2; shift 2
  if "$@" > "$dir/$name.out" 2> "$dir/$name.err"; then echo "FAIL $name: accepted" >&2; exit 1; fi
  grep -qF -- "$want" "$dir/$name.err" || { echo "FAIL $name: no '$want' in:" >&2; cat "$dir/$name.err" >&2; exit 1; }
  [ "$(grep -c 'error:' "$dir/$name.err")" = 1 ] || { echo "FAIL $name: not one error line" >&2; cat "$dir/$name.err" >&2; exit 1; }
  echo "ok $name: $(grep -m1 'error:' "$dir/$name.err")"
}
head -c 100000 "$ckpt" > "$dir/truncated.bin"
cp "$ckpt" "$dir/corrupt.bin" && printf 'XXXX' | dd of="$dir/corrupt.bin" bs=1 seek=5000 conv=notrunc 2> /dev/null
fails eval_missing "cannot open checkpoint" "$dir/lenet" --eval "$dir/none.bin"
fails eval_truncated "is truncated" "$dir/lenet" --eval "$dir/truncated.bin"
fails eval_corrupt "corrupt" "$dir/lenet" --eval "$dir/corrupt.bin"
fails eval_with_resume "--eval trains nothing: --resume is a training option" "$dir/lenet" --eval "$ckpt" --resume "$ckpt"
fails predict_nothing "needs image files or folders" "$dir/lenet" --predict "$ckpt"
fails export_foreign "was written by spec hash" "$TRAINC" export "$ckpt" --spec specs/examples/fmnist_lenet.spec -o "$dir/x.safetensors"
fails export_onnx_pt "an ONNX model goes to FILE.onnx" "$TRAINC" export "$ckpt" --spec "$dir/lenet.spec" --format onnx -o "$dir/x.pt"

# --predict on test-split images as PNG files (and a file that is no image: named, exit 1).
$py - "$dir" <<'PY'
import gzip, sys
import numpy as np
from PIL import Image
d = "/usr/share/datasets/fashion-mnist"
x = np.frombuffer(gzip.open(d + "/t10k-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(-1, 28, 28)
for i in range(12): Image.fromarray(x[i * 97]).save("%s/img_gray/%02d.png" % (sys.argv[1], i))
rng = np.random.default_rng(3)
for i in range(6): Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save("%s/img_rgb/%d.png" % (sys.argv[1], i))
PY
printf 'not an image' > "$dir/img_gray/notes.txt"
"$dir/lenet" --predict "$ckpt" "$dir/img_gray" --out "$dir/pred" --top-k 3 > "$dir/predict.txt"
grep -q "1 file in the folders skipped" "$dir/predict.txt"
[ "$(wc -l < "$dir/pred/predictions.jsonl")" = 12 ] || { echo "FAIL: not 12 predictions" >&2; exit 1; }
fails predict_not_image "not a JPEG or PNG image" "$dir/lenet" --predict "$ckpt" "$dir/img_gray/notes.txt"

$py tests/interop/torch_check.py lenet "$dir/lenet.safetensors" "$dir/pred/predictions.jsonl" "$dir/run/eval.jsonl" 2000

# torchvision's ResNet-18.
"$TRAINC" build tests/interop/specs/resnet18_small.spec -o "$dir/r18" > /dev/null
"$dir/r18" --out "$dir/r18run" > /dev/null
r18ckpt=$dir/r18run/checkpoints/ckpt-000000000003.bin
"$TRAINC" export "$r18ckpt" --spec tests/interop/specs/resnet18_small.spec -o "$dir/r18.safetensors"
"$TRAINC" export "$r18ckpt" --spec tests/interop/specs/resnet18_small.spec -o "$dir/r18.pt"
$py - "$dir" <<'PY'
import sys
import torch, torchvision
sys.path.insert(0, "tests/interop")
from torch_check import read_safetensors
sd = torch.load(sys.argv[1] + "/r18.pt")   # torch.save's format: a zip of pickles
st, _ = read_safetensors(sys.argv[1] + "/r18.safetensors")
assert list(sd) == list(st) and all(torch.equal(sd[k], st[k]) and sd[k].dtype == st[k].dtype for k in st)
torchvision.models.resnet18(num_classes=10).load_state_dict(sd, strict=True)
print("torch.load of the .pt export: the safetensors export's %d tensors, loads with strict=True" % len(sd))
PY
"$dir/r18" --predict "$r18ckpt" "$dir/img_rgb" --out "$dir/r18pred" > /dev/null
$py tests/interop/torch_check.py resnet18 "$dir/r18.safetensors" "$dir/r18pred/predictions.jsonl"

echo "PASS"
