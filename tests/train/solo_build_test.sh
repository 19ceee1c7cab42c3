#!/usr/bin/env bash
# The build without MPI (make WITH_MPI=0, runtime/solo/), for machines that have no Open MPI
# such as the lent GPU machines: trainc and the runtime build in a build directory of their
# own, that trainc links its trainers against that runtime, a trainer links no MPI library,
# trains and checkpoints alone, and refuses clearly when a launcher starts it as one of
# several ranks or its spec asks for more ranks.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/solo
rm -rf "$dir" && mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

make -s BUILD="$dir/build" WITH_MPI=0 trainc runtime >"$dir/make.log" 2>&1 ||
  { tail -n 30 "$dir/make.log"; echo "FAIL: make WITH_MPI=0 trainc runtime" >&2; exit 1; }
if nm "$dir/build/libtrainrt.a" | grep -q ' U MPI_'; then
  echo "FAIL: the WITH_MPI=0 runtime still calls MPI" >&2; exit 1
fi

cat > "$dir/small.spec" <<'SPEC'
name: "solo_small"
net {
  input_shape: [1, 8, 8]
  classes: 4
  conv { name: "c1" out: 4 kernel: 3 pad: 1 }
  bn { name: "bn" }
  relu { name: "r" }
  gap { name: "gap" }
  linear { name: "fc" out: 4 }
}
data {
  train { source: "synthetic" samples: 64 batch_per_rank: 16 }
  val { source: "synthetic" batch_per_rank: 16 }
}
solver { epochs: 2 sgd { momentum: 0.9 } lr { base: 0.05 } }
SPEC
"$dir/build/trainc" build "$dir/small.spec" -o "$dir/small" >/dev/null
if ldd "$dir/small" | grep -q libmpi; then
  echo "FAIL: a trainer built without MPI links libmpi:" >&2; ldd "$dir/small" >&2; exit 1
fi
export OMP_NUM_THREADS=1
"$dir/small" --out "$dir/run" >"$dir/run.log" 2>&1 || { cat "$dir/run.log"; echo "FAIL: the trainer did not run" >&2; exit 1; }
grep -q '"event":"summary"' "$dir/run/metrics.jsonl" || { echo "FAIL: no summary in metrics.jsonl" >&2; exit 1; }
ls "$dir/run/checkpoints/"* >/dev/null 2>&1 || { echo "FAIL: no checkpoint written" >&2; exit 1; }

expect_refusal() {  # what, expected text, command...
  local what=$1 text=$2; shift 2
  set +e; "$@" >"$dir/refusal.out" 2>"$dir/refusal.err"; local rc=$?; set -e
  if [ $rc -eq 0 ] || ! grep -q "$text" "$dir/refusal.err" || [ "$(grep -c '^error:' "$dir/refusal.err")" -ne 1 ]; then
    echo "FAIL: $what: exit $rc, stderr:" >&2; cat "$dir/refusal.err" >&2; exit 1
  fi
}
expect_refusal "started as one of 2 ranks" "built without MPI (WITH_MPI=0), but the launcher started it as one of 2 ranks" \
  env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 "$dir/small" --out "$dir/run2"
expect_refusal "srun with PMIx" "one of several ranks" env PMIX_RANK=0 "$dir/small" --out "$dir/run3"
sed 's/^solver {/parallel { ranks: 2 }\nsolver {/' "$dir/small.spec" > "$dir/two.spec"
"$dir/build/trainc" build "$dir/two.spec" -o "$dir/two" >/dev/null
expect_refusal "a spec for 2 ranks" "the spec asks for 2 ranks but this process runs alone" "$dir/two" --out "$dir/run4"
[ ! -e "$dir/run2" ] && [ ! -e "$dir/run3" ] || { echo "FAIL: a refused run wrote its output directory" >&2; exit 1; }

# The CUDA trainer links without MPI too (where nvcc is; its kernels for one architecture keep
# it short). Running it needs a GPU: here it must only refuse, saying why. The CUDA runtime
# library takes no MPI flags (mk/cuda.mk), so the main build's default sm_80 + sm_90 one,
# which tests/cuda/ build, serves here too instead of a second compile of every .cu file.
nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)}
if [ -n "$nvcc" ]; then
  objdir=$(make -s cuda-objdir CUDA_ARCHS="80 90")
  make -s BUILD="$dir/build" WITH_MPI=0 CUDA_ARCHS="80 90" CUDA_KERNEL_ARCHS=90 CUDA_OBJDIR="$objdir" NVCC="$nvcc" cuda \
    >"$dir/make-cuda.log" 2>&1 ||
    { tail -n 30 "$dir/make-cuda.log"; echo "FAIL: make WITH_MPI=0 cuda" >&2; exit 1; }
  "$dir/build/trainc" build "$dir/small.spec" --backend cuda -o "$dir/small_gpu" >"$dir/build-gpu.log" 2>&1 ||
    { cat "$dir/build-gpu.log"; echo "FAIL: the CUDA trainer did not build without MPI" >&2; exit 1; }
  if ldd "$dir/small_gpu" | grep -q libmpi; then
    echo "FAIL: a CUDA trainer built without MPI links libmpi" >&2; exit 1
  fi
  if ! nvidia-smi -L >/dev/null 2>&1; then
    expect_refusal "the CUDA trainer without a GPU" "no CUDA device" "$dir/small_gpu" --out "$dir/run5"
  fi
  echo "solo build: the CUDA trainer links without MPI"
else
  echo "solo build: nvcc not found, the CUDA trainer without MPI was not built"
fi
echo "solo build: trainc and runtime without MPI, trainer trains alone and refuses several ranks"
