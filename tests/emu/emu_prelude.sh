# Sourced by the emulated CUDA backend's trainer tests (tests/emu/*_test.sh): `emu_prelude DIR`
# empties DIR (under $BUILD) into $out, exits 0 with SKIP when the CUDA headers are missing,
# sets the sanitizers' options and TRAINC_CUDA_ENV (trainc build --backend cuda through the
# emulator), and builds it (make emu), exiting 1 if that fails. The cuDNN search's workspace
# is allocated at its cap (default 1 GiB) and the emulator writes every byte of a new
# allocation: 16 MiB keeps that quick, as in emu_test.sh.
emu_prelude() {
  BUILD=${BUILD:-build}
  out=$BUILD/$1
  rm -rf "$out" && mkdir -p "$out"
  if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
    echo "SKIP: the CUDA headers are not installed: the emulated CUDA backend did not run"
    exit 0
  fi
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 OMP_NUM_THREADS=1
  export TRAINC_CUDA_ENV=$(pwd)/$BUILD/emu/cuda.env TRAINC_CUDNN_WORKSPACE_MB=16
  nice make -s emu BUILD="$BUILD" > "$out/make.log" 2>&1 || { echo "FAIL: make emu"; tail -20 "$out/make.log"; exit 1; }
}

