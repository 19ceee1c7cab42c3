#!/usr/bin/env bash
# The CUDA backend executed without a GPU (part of `make test`; `make test-emu` alone): the
# emulator of tests/emu/ runs (1) its own self-test, (2) tests/gpu/test_ops_gpu unchanged in
# FP32, BF16 and FP16, (3) the example trainers built with --backend cuda from today's
# generated code for a few steps on synthetic data, against the CPU trainer: FP32 losses
# within 1e-4 relative, BF16/FP16 within 5e-2 (as make test-gpu), under two schedules
# (EMU_SCHEDULE=0 and 1: streams, blocks and threads in order and in reverse), and (4) two
# MPI ranks with gradient buckets and sync-BN over the emulated NCCL against the CPU trainer
# on two ranks (the emulated cuDNN search ranks algorithms differently on odd ranks, and the
# emulated NCCL stops ranks that ran different algorithms: every rank must adopt rank 0's).
# Every trainer searches cuDNN's algorithms without device memory of its own (the emulator
# stops cuDNN's legacy search, which allocates some), and (5) the ResNet's device memory
# after its start-up check, the search's workspace at its cap among it, stays within what
# the check counted. Everything runs under ASan and UBSan. A CUDA trainer refuses a bad
# TRAINC_* value read by its .cu code.
set -u
source tests/lib.sh
out=$BUILD/test-emu
rm -rf "$out" && mkdir -p "$out"
if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  echo "SKIP: the CUDA headers (cuda_runtime.h, cudnn.h) are not installed: the emulated CUDA backend did not run"
  exit 0
fi
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# The cuDNN search's workspace is allocated at its cap (default 1 GiB), and the emulator
# writes every byte of a new allocation: 16 MiB keeps that quick. EMU_ALLOC_REPORT: each
# process prints the device memory allocated after its start-up check (for 5.).
export TRAINC_CUDNN_WORKSPACE_MB=16 EMU_ALLOC_REPORT=1
. tests/emu/emu_prelude.sh   # emu_within_plan (this test sets itself up: it predates emu_prelude)
status=0
if ! nice make -s emu BUILD="$BUILD" > "$out/make.log" 2>&1; then
  fail "building the emulated CUDA backend failed:"; tail -30 "$out/make.log"; exit 1
fi
# The build's messages: this make's, and every object's as its compiler left them beside it
# (OBJ.msg, mk/emu.mk), since make test builds the emulator before this test runs.
grep -i "warning" "$out/make.log" && fail "warnings while building the emulated CUDA backend"
msgs=$(find "$BUILD/emu/lib" "$BUILD/emu/obj" "$BUILD/emu/test_ops_gpu.msg" -name '*.msg' 2>/dev/null)
[ -n "$msgs" ] || fail "no compiler messages (OBJ.msg) beside the emulator's objects in $BUILD/emu"
grep -i "warning" $msgs && fail "warnings while building the emulated CUDA backend (above: $BUILD/emu/**/*.msg)"

# 0. The cuDNN calls under cuDNN 9's deprecation warnings (the legacy convolution API is
# deprecated; the move is to the graph API): counted, printed, and not more than today's: 31
# in conv2d.cu's legacy API, 2 in cudnn_graph.cu (shared by the fused graphs), the graph's and the plan's handle
# attributes, which cuDNN 8 requires and 9 still accepts (the device-property descriptor
# replaces them there; until a lent GPU shows 9 runs the graph without them, both are set).
# The front end warns: -fsyntax-only counts them all without generating code (the build above
# compiled every file).
dep=0
for f in $(grep -l "cudnn" runtime/cuda/*.cu runtime/cuda/*/*.cu); do
  EMU_CXXFLAGS="-DCUDNN_WARN_DEPRECATED -fsyntax-only" tests/emu/emu-nvcc -Iruntime/include -DRT_HAVE_NCCL=1 -c "$f" \
    -o "$out/dep.o" > "$out/dep.log" 2>&1 || { fail "$f does not compile with CUDNN_WARN_DEPRECATED:"; tail "$out/dep.log"; }
  dep=$((dep + $(grep -c "warning: .*deprecated" "$out/dep.log")))
done
echo "cuDNN deprecation warnings (CUDNN_WARN_DEPRECATED): $dep (legacy convolution API and graph handles; budget 33)"
[ "$dep" -le 33 ] || fail "more uses of deprecated cuDNN API than the budget"

# 1. The emulator catches what it is for (tests/emu/emu_selftest.sh).
bash tests/emu/emu_selftest.sh "$out/self" || fail "emulator self-test"

# 2. Every op against the CPU op, all three precisions.
if EMU_SCHEDULE=1 "$BUILD/emu/test_ops_gpu" > "$out/ops.log" 2>&1; then
  echo "test_ops_gpu under the emulator (schedule 1): $(tail -1 "$out/ops.log")"
else
  fail "test_ops_gpu under the emulator:"; grep -v '^ok' "$out/ops.log" | tail -20
fi

# 3. The example trainers, a few steps each.
export TRAINC_CUDA_ENV=$(pwd)/$BUILD/emu/cuda.env
mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np 2 --oversubscribe)
# A few steps at batch 4 on synthetic data; the ResNet on 8x8 inputs with a small peak LR, so
# that BN on 4 samples does not turn rounding differences into a different trajectory.
short_spec() {  # tag, example name, extra spec text[, samples] -> $out/<tag>.spec
  local tag=$1 name=$2 extra=$3 samples=${4:-16} net="" aug="" lr=""
  if [ "$name" = fmnist_resnet ]; then
    net='net { input_shape: [1, 8, 8] }'; aug='augment { random_crop { size: 8 padding: 1 } }'
    lr='lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } }'
  fi
  printf 'extends: "%s/specs/examples/%s.spec"\n%s\ndata { train { %s source: "synthetic" samples: %d batch_per_rank: 4 }\n  val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }\nsolver { epochs: 1 log_every: 1 %s }\n%s\n' \
    "$(pwd)" "$name" "$net" "$aug" "$samples" "$lr" "$extra" > "$out/$tag.spec"
}
build() {  # tag, trainc flags...
  local tag=$1; shift
  "$BUILD/trainc" build "$out/$tag.spec" -o "$out/$tag$1" "${@:2}" > "$out/$tag$1.build.log" 2>&1 ||
    { fail "trainc build $tag ${*:2}:"; tail -20 "$out/$tag$1.build.log"; return 1; }
}
run() {  # binary, run dir, launcher...
  local bin=$1 dir=$2; shift 2
  "$@" "$bin" --out "$dir" > "$dir.log" 2>&1 || { fail "$bin:"; tail -25 "$dir.log"; return 1; }
}
compare() {  # what, gpu run, cpu run, tolerance
  local r
  r=$("$PY" tests/gpu/compare_runs.py "$2/metrics.jsonl" "$3/metrics.jsonl" "$4" 2>&1) &&
    echo "$1: $(echo "$r" | head -1)" || { fail "$1:"; echo "$r"; }
}
# 5. The bytes the ResNet trainers allocate after their start-up memory check within the
# plan the check counted, which `trainc show --device-memory` says too (emu_within_plan in
# tests/emu/emu_prelude.sh): a workspace counted below its cap (16 MiB here) shows.
for name in fmnist_mlp fmnist_lenet fmnist_resnet; do
  short_spec "$name" "$name" ""
  build "$name" .cpu && run "$out/$name.cpu" "$out/$name.cpu.run" || continue
  build "$name" .emu --backend cuda || continue
  for s in 0 1; do
    run "$out/$name.emu" "$out/$name.emu$s.run" env EMU_SCHEDULE=$s &&
      compare "$name FP32, schedule $s vs CPU (1e-4)" "$out/$name.emu$s.run" "$out/$name.cpu.run" 1e-4
  done
  if [ "$name" = fmnist_resnet ]; then
    emu_within_plan "$name FP32 device memory" "$out/$name.emu0.run.log" "$out/$name.spec" || status=1
  fi
done
# A CUDA trainer refuses a bad value of a variable its .cu code reads at start-up, as a CPU
# trainer does (runtime/include/rt_env.def; tests/train/env_test.sh), and lists the table.
if [ -x "$out/fmnist_mlp.emu" ]; then
  rc=0
  TRAINC_CUDA_DEPTHWISE=foo "$out/fmnist_mlp.emu" --out "$out/env-refused" > /dev/null 2> "$out/env-refused.err" || rc=$?
  [ "$rc" = 2 ] && grep -q "^error: environment variable TRAINC_CUDA_DEPTHWISE='foo' .* takes depthwise or cudnn" \
    "$out/env-refused.err" || { fail "the CUDA trainer under TRAINC_CUDA_DEPTHWISE=foo: exit $rc"; cat "$out/env-refused.err"; }
  "$out/fmnist_mlp.emu" --help-env | grep -q '^  TRAINC_CUDA_DEPTHWISE=depthwise|cudnn ' ||
    fail "the CUDA trainer's --help-env does not list TRAINC_CUDA_DEPTHWISE"
fi
for p in BF16 FP16; do
  short_spec "resnet_$p" fmnist_resnet "precision { compute: $p }"
  build "resnet_$p" .emu --backend cuda && run "$out/resnet_$p.emu" "$out/resnet_$p.emu.run" env EMU_SCHEDULE=1 &&
    compare "fmnist_resnet $p vs CPU FP32 (5e-2)" "$out/resnet_$p.emu.run" "$out/fmnist_resnet.cpu.run" 5e-2 &&
    { emu_within_plan "fmnist_resnet $p device memory" "$out/resnet_$p.emu.run.log" "$out/resnet_$p.spec" || status=1; }
done

# The BCE loss (timm, with a target threshold) and TrivialAugment on the 8-bit batches
# (runtime/data/augment_policy.c): the CUDA trainer takes the CPU trainer's steps.
short_spec lenet_bce fmnist_lenet "data { train { augment { trivial_augment: true } } }
solver { loss { kind: BCE bce_target_threshold: 0.2 } }"
build lenet_bce .cpu && run "$out/lenet_bce.cpu" "$out/lenet_bce.cpu.run" &&
  build lenet_bce .emu --backend cuda && run "$out/lenet_bce.emu" "$out/lenet_bce.emu.run" env EMU_SCHEDULE=1 &&
  compare "fmnist_lenet BCE + trivial_augment vs CPU (1e-4)" "$out/lenet_bce.emu.run" "$out/lenet_bce.cpu.run" 1e-4

# 4. Two ranks: gradient buckets over the emulated NCCL, and sync-BN.
for sync in true; do
  tag=resnet_2r_$sync
  short_spec "$tag" fmnist_resnet "parallel { ranks: 2 sync_bn: $sync }" 32
  build "$tag" .cpu && run "$out/$tag.cpu" "$out/$tag.cpu.run" "${mpi[@]}" || continue
  build "$tag" .emu --backend cuda || continue
  for s in 0 1; do
    run "$out/$tag.emu" "$out/$tag.emu$s.run" "${mpi[@]}" -x EMU_SCHEDULE=$s &&
      compare "fmnist_resnet 2 ranks, sync_bn $sync, schedule $s vs CPU 2 ranks (1e-4)" "$out/$tag.emu$s.run" "$out/$tag.cpu.run" 1e-4
  done
done
exit $status
