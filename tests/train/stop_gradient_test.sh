#!/usr/bin/env bash
# stop_gradient in training (Caffe's propagate_down: false): tests/gradcheck/gradcheck_views.spec
# trained one epoch at two learning rates from the same initialization, on the CPU and (where
# the CUDA headers are) on the CUDA backend under the emulator, NCHW and channels-last in BF16
# (tests/train/specs/stop_gradient_nhwc.spec: the same stops, no reshape with positions). d1 and dbn reach the loss only
# through a stop, so their parameters must end exactly as they started: bit-equal in the two
# runs; every other layer's must differ between them (they train). The gradient itself is
# checked in double by tests/gradcheck/model_gradcheck_test.sh.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
dir=$BUILD/test-train/stop_gradient
fresh_dir "$dir"
frozen="d1.weight d1.bias dbn.weight dbn.bias"

# RUN_A RUN_B MODEL_C: the frozen tensors bit-equal in both runs' last checkpoints, the others not
compare() {
  "$PY" - "$@" "$frozen" <<'PY'
import glob, re, struct, sys
a, b, model_c, frozen = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
def params(d):
    raw = open(sorted(glob.glob(d + "/checkpoints/ckpt-*.bin"))[-1], "rb").read()
    n, off = struct.unpack_from("<I", raw, 12)[0], 112
    for _ in range(n):
        ln = struct.unpack_from("<I", raw, off)[0]; off += 4
        name = raw[off:off + ln].decode(); off += ln
        size = struct.unpack_from("<Q", raw, off)[0]; off += 12
        if name == "params": return raw[off:off + size]
        off += size
    sys.exit(d + ": no params section")
tensors = re.findall(r'\{ "([^"]+)", (\d+), (\d+),', open(model_c).read())
pa, pb, bad = params(a), params(b), []
for name, o, c in tensors:
    o, c = int(o) * 4, int(c) * 4
    same = pa[o:o + c] == pb[o:o + c]
    if same != (name in frozen): bad.append(f"{name} {'equal' if same else 'differs'}")
missing = [f for f in frozen if f not in [t[0] for t in tensors]]
print(f"{len(tensors)} tensors; stopped ones ({' '.join(frozen)}) unchanged, the others trained" if not bad and not missing
      else f"{', '.join(bad + ['no tensor ' + m for m in missing])}")
sys.exit(1 if bad or missing else 0)
PY
}

run_pair() {  # tag spec [trainc build flags]
  local tag=$1 spec=$2; shift 2
  for lr in 0.1 0.05; do
    sed "s/lr { base: 0.1 }/lr { base: $lr }/" "$spec" > "$dir/$tag.$lr.spec"
    "$TRAINC" build "$dir/$tag.$lr.spec" -o "$dir/$tag.$lr" "$@" > "$dir/$tag.$lr.build" 2>&1 ||
      { tail -5 "$dir/$tag.$lr.build"; fail "$tag: trainc build"; return; }
    "$dir/$tag.$lr" --out "$dir/$tag.$lr.run" > "$dir/$tag.$lr.log" 2>&1 || { tail -5 "$dir/$tag.$lr.log"; fail "$tag: the run"; return; }
  done
  local r
  r=$(compare "$dir/$tag.0.1.run" "$dir/$tag.0.05.run" "$dir/$tag.0.1.src/model.c") && echo "$tag: $r" || fail "$tag: $r"
}

run_pair cpu tests/gradcheck/gradcheck_views.spec
if [ -f /usr/local/cuda/include/cuda_runtime.h ] || [ -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  cpu_status=$status
  source tests/emu/emu_prelude.sh   # (lib.sh again: keep the CPU's status)
  status=$cpu_status
  emu_prelude test-emu-stop-gradient
  run_pair cuda tests/gradcheck/gradcheck_views.spec --backend cuda
  run_pair cuda-nhwc tests/train/specs/stop_gradient_nhwc.spec --backend cuda --layout nhwc
else
  echo "SKIP (cuda): the CUDA headers are not installed"
fi
exit $status
