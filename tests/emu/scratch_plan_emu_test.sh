#!/usr/bin/env bash
# The scratch the CUDA ops size at their first step is in the device memory plan: a net whose
# widest per-channel sums (a linear with 8192 biased outputs, then a batch norm over them)
# need partial sums and channel totals of 128 KiB each, far beyond what the small buffers the
# plan leaves to the reserve take. Under the emulator the trainers (FP32 NCHW, and a BF16
# channels-last conv net, whose partials are counted at 512 splits) allocate no
# more after their start-up check than it counted, and `trainc show --device-memory` says
# the same plan (emu_within_plan, tests/emu/emu_prelude.sh).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-scratch-plan
status=0

spec() {  # file, layers
  cat > "$1" <<SPEC
name: "scratch_plan"
seed: 5
net {
  $2
  bn { name: "bn" }
  relu { name: "relu" }
  linear { name: "fc" out: 10 }
}
data {
  train { source: "synthetic" samples: 16 batch_per_rank: 8 }
  val { source: "synthetic" batch_per_rank: 8 }
  val_samples: 8
}
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.01 } log_every: 1 }
SPEC
}
spec "$out/wide.spec" 'input_shape: [1, 4, 4] classes: 10 flatten { name: "flat" } linear { name: "wide" out: 8192 }'
spec "$out/narrow.spec" 'input_shape: [3, 8, 8] classes: 10 conv { name: "conv" out: 256 kernel: 3 pad: 1 }'
sed -i -e 's/^  relu { name: "relu" }$/&\n  gap { name: "gap" }/' -e 's/^solver/precision { compute: BF16 }\nsolver/' "$out/narrow.spec"

run() {  # what, tag, spec, [show/build layout flags...]
  local what=$1 tag=$2 spec=$3; shift 3
  "$BUILD/trainc" build "$spec" -o "$out/$tag" --backend cuda "$@" > "$out/$tag.build" 2>&1 ||
    { echo "FAIL: $what: trainc build"; tail -20 "$out/$tag.build"; status=1; return; }
  "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 || { echo "FAIL: $what: the run"; tail -20 "$out/$tag.log"; status=1; return; }
  emu_within_plan "$what" "$out/$tag.log" "$spec" "$*" || status=1
}
run "wide FP32 NCHW device memory" wide "$out/wide.spec"
run "narrow BF16 channels-last device memory" narrow "$out/narrow.spec" --layout nhwc
[ $status = 0 ] && echo "op scratch within the device memory plan: ok"
exit $status
