#!/usr/bin/env bash
# --eval, --predict and trainc export on the CUDA backend, under the emulator (tests/emu/): a
# device trainer's `--eval` of its last checkpoint gives its last evaluation (model and EMA,
# top-1 exactly); `trainc export` finds the CUDA parameter layout by the checkpoint's size,
# and the torch module loading it (strict=True) gives the device trainer's --predict logits.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-interop
cat > "$out/tiny.spec" <<SPEC
extends: "$(pwd)/tests/train/specs/ema_tiny.spec"
data { train { source: "synthetic" samples: 256 batch_per_rank: 8 }
       val { source: "synthetic" batch_per_rank: 8 } val_samples: 16 }
solver { iterations: 6 eval_every_iterations: 6 log_every: 3 checkpoint { every_iterations: 6 } }
parallel { ranks: 1 }
SPEC
"$BUILD/trainc" build "$out/tiny.spec" -o "$out/emu" --backend cuda > "$out/emu.build" 2>&1 ||
  { echo "FAIL: --backend cuda build"; tail -20 "$out/emu.build"; exit 1; }
"$out/emu" --out "$out/run" > "$out/train.log" 2>&1 || { echo "FAIL: the emulated run"; tail -25 "$out/train.log"; exit 1; }
ckpt=$out/run/checkpoints/ckpt-000000000006.bin
"$out/emu" --eval "$ckpt" > "$out/eval.log" 2>&1 || { echo "FAIL: --eval"; tail -25 "$out/eval.log"; exit 1; }
"$PY" - "$out" <<'PY' || exit 1
import os, sys
import numpy as np
from PIL import Image
os.makedirs(sys.argv[1] + "/img", exist_ok=True)
rng = np.random.default_rng(7)
for i in range(5): Image.fromarray(rng.integers(0, 256, (28, 28), dtype=np.uint8)).save("%s/img/%d.png" % (sys.argv[1], i))
PY
"$out/emu" --predict "$ckpt" "$out/img" --out "$out/pred" > "$out/predict.log" 2>&1 ||
  { echo "FAIL: --predict"; tail -25 "$out/predict.log"; exit 1; }
"$BUILD/trainc" export "$ckpt" --spec "$out/tiny.spec" -o "$out/tiny.safetensors" || exit 1
"$PY" - "$out" <<'PY' || exit 1
import json, sys
import numpy as np
import torch
out = sys.argv[1]
last = {r["event"]: r for r in map(json.loads, open(out + "/run/metrics.jsonl")) if r["event"] in ("eval", "eval_ema")}
mine = {r["event"]: r for r in map(json.loads, open(out + "/run/eval.jsonl"))}
for ev in ("eval", "eval_ema"):
    assert mine[ev]["top1"] == last[ev]["top1"] and abs(mine[ev]["loss"] - last[ev]["loss"]) <= 1e-6 * abs(last[ev]["loss"]), (ev, mine[ev], last[ev])
    print("device --eval %s: top-1 %.4f loss %.6f = the run's last (%.4f, %.6f)" % (ev, mine[ev]["top1"], mine[ev]["loss"], last[ev]["top1"], last[ev]["loss"]))
sys.path.insert(0, "tests/interop")
import torch_check as tc
class Tiny(torch.nn.Module):   # tests/train/specs/ema_tiny.spec
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 10)
    def forward(self, x):
        return self.fc(torch.relu(self.bn1(self.conv1(x))).mean((2, 3)))
m = Tiny()
tc.load(m, out + "/tiny.safetensors")
tc.compare_predictions(m, out + "/pred/predictions.jsonl", [0.2860], [0.3530], True)
PY
echo "eval, predict and export of the emulated CUDA trainer: ok"
