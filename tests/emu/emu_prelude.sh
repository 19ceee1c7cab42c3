# Sourced by the emulated CUDA backend's trainer tests (tests/emu/*_test.sh): `emu_prelude DIR`
# empties DIR (under $BUILD) into $out, exits 0 with SKIP when the CUDA headers are missing,
# sets the sanitizers' options and TRAINC_CUDA_ENV (trainc build --backend cuda through the
# emulator), and builds it (make emu), exiting 1 if that fails. The cuDNN search's workspace
# is allocated at its cap (default 1 GiB) and the emulator writes every byte of a new
# allocation: 16 MiB keeps that quick, as in emu_test.sh. EMU_ALLOC_REPORT=1: each trainer
# prints the device memory it allocated after its start-up memory check, which
# `emu_within_plan WHAT LOG SPEC` compares with the plan the check counted. `emu_run TAG SPEC
# [flags]` builds $out/SPEC.spec into $out/TAG and runs it (CPU unless --backend cuda);
# `emu_compare WHAT TAG REF TOL` holds TAG's losses to REF's (tests/gpu/compare_runs.py).
source tests/lib.sh
emu_prelude() {
  out=$BUILD/$1
  rm -rf "$out" && mkdir -p "$out"
  if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
    echo "SKIP: the CUDA headers are not installed: the emulated CUDA backend did not run"
    exit 0
  fi
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=1
  # (EMU_MUTANT_CUDA_ENV: tests/emu/mutants.sh's trainer mutants, a toolchain with one runtime file mutated)
  export TRAINC_CUDA_ENV=${EMU_MUTANT_CUDA_ENV:-$(pwd)/$BUILD/emu/cuda.env} TRAINC_CUDNN_WORKSPACE_MB=16 EMU_ALLOC_REPORT=1
  nice make -s emu BUILD="$BUILD" > "$out/make.log" 2>&1 || { echo "FAIL: make emu"; tail -20 "$out/make.log"; exit 1; }
}

# The bytes a trainer allocated after its start-up memory check (the emulator's peak growth
# after the first cudaMemGetInfo, EMU_ALLOC_REPORT) within the plan the check counted and the
# trainer printed in LOG, give or take its rounding and 64 KiB for the small buffers the plan
# leaves to the reserve (normalization table, optimizer tables, scalars; the ops' partial
# sums and per-sample losses are in the plan, rt_devmem_op_scratch); and that plan is
# what `trainc show --device-memory` says SPEC's batch needs (both count the cuDNN workspace
# at its cap). Prints the result; returns 1, saying FAIL, otherwise.
emu_within_plan() {  # what, trainer log, spec [show's layout option, e.g. "--layout nhwc"]
  local plan grow shown
  plan=$(grep -oE '[0-9.]+ MiB of device memory' "$2" | head -1 | cut -d' ' -f1)
  grow=$(grep -oE '[0-9]+ more at the peak after it' "$2" | head -1 | cut -d' ' -f1)
  [ -n "$plan" ] && [ -n "$grow" ] || { echo "FAIL: $1: no memory plan or emulator report in $2"; return 1; }
  if ! awk -v p="$plan" -v g="$grow" 'BEGIN { exit !(g <= (p + 0.05) * 1048576 + 65536) }'; then
    echo "FAIL: $1: $grow bytes allocated after the start-up memory check, more than the $plan MiB it counted"
    return 1
  fi
  echo "$1: $grow bytes allocated after the start-up memory check, $plan MiB counted"
  shown=$("$BUILD/trainc" show --device-memory 16 ${4:-} "$3" | sed -n 's/^  spec batch .* needs \([0-9.]*\) MiB.*/\1/p')
  [ "$shown" = "$plan" ] ||
    { echo "FAIL: $1: the trainer counted $plan MiB, trainc show --device-memory says ${shown:-nothing}${shown:+ MiB}"; return 1; }
}

emu_run() {  # tag spec [trainc flags...]: builds and runs $out/TAG (CPU unless --backend cuda)
  local tag=$1 spec=$2; shift 2
  "$BUILD/trainc" build "$out/$spec.spec" -o "$out/$tag" "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  EMU_SCHEDULE=1 "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 || { fail "$tag: the run"; tail -25 "$out/$tag.log"; return 1; }
}
emu_compare() {  # what, run tag, reference run tag, tolerance
  local r
  r=$("$PY" tests/gpu/compare_runs.py "$out/$2.run/metrics.jsonl" "$out/$3.run/metrics.jsonl" "$4" 2>&1) &&
    echo "$1: $(echo "$r" | head -1)" || { fail "$1:"; echo "$r"; }
}
# `emu_convnext_specs [SPEC TEXT]`: $out/convnext.spec (FP32) and $out/convnext_bf16.spec, the
# ConvNeXt mini net of the traffic test (tests/emu/traffic/convnext_mini.spec) with its layer
# scale at 0.5, not ConvNeXt's 1e-6, so that the branches move the loss; SPEC TEXT (e.g. a
# vars block) added; 4-sample batches of synthetic data, one epoch of SGD with momentum.
emu_convnext_specs() {
  sed 's/init: 1e-6/init: 0.5/' specs/models/convnext_tiny.spec > "$out/convnext_tiny_ls.spec"
  sed "s|\.\./\.\./\.\./specs/models/convnext_tiny.spec|$(pwd)/$out/convnext_tiny_ls.spec|" tests/emu/traffic/convnext_mini.spec \
    > "$out/convnext_mini.spec"
  grep -q 'init: 0.5' "$out/convnext_tiny_ls.spec" && grep -q convnext_tiny_ls "$out/convnext_mini.spec" ||
    { echo "FAIL: could not derive the test's ConvNeXt spec"; exit 1; }
  printf 'extends: "%s/%s/convnext_mini.spec"\n%s\n%s\n%s\n' "$(pwd)" "$out" "${1:-}" \
    'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
    'solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }' > "$out/convnext.spec"
  sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/convnext.spec" > "$out/convnext_bf16.spec"
}
