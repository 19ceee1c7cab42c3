#!/usr/bin/env bash
# The CUDA emulator stops or exposes each mistake of tests/emu/emu_selftest.cu: an
# out-of-bounds read (ASan, with its line), a barrier reached by part of a block, a shuffle
# reached by part of a warp, a missing barrier (a shared-memory race, with the line), an
# allocation during a capture (refused), a replay that must use frozen arguments, and two
# streams without an event between them (the reverse schedule shows it).
# Usage: emu_selftest.sh OUTDIR
set -u
dir=${1:?usage: emu_selftest.sh OUTDIR}
mkdir -p "$dir"
here=$(cd "$(dirname "$0")" && pwd)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
EMU_CXXFLAGS="$san" "$here/emu-nvcc" -c "$here/emu_selftest.cu" -o "$dir/selftest.o" &&
  c++ "$dir/selftest.o" "${BUILD:-build}/emu/libcudaemu.a" $san $(mpicc --showme:link 2>/dev/null) -o "$dir/selftest" ||
  { echo "FAIL: building the emulator self-test"; exit 1; }
status=0
expect() {  # case, schedule, expected exit (0 or "fail"), text the output must hold
  local c=$1 s=$2 want=$3 text=$4 rc
  (EMU_SCHEDULE=$s ASAN_OPTIONS=detect_leaks=0 exec "$dir/selftest" "$c") > "$dir/$c.$s.log" 2>&1; rc=$?
  if { [ "$want" = 0 ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; } || ! grep -q "$text" "$dir/$c.$s.log"; then
    echo "FAIL: emulator self-test '$c' (schedule $s): exit $rc, expected $want with '$text':"; tail -8 "$dir/$c.$s.log"; status=1
  else
    echo "ok   self-test $c (schedule $s): $(grep -m1 "$text" "$dir/$c.$s.log" | cut -c1-150)"
  fi
}
expect ok 0 0 "total 256"
expect ok 1 0 "total 256"
expect oob 0 fail "heap-buffer-overflow"
expect oob 0 fail "emu_selftest.cu:10"
expect divergent 0 fail "__syncthreads reached by part of the block"
expect nosync 0 fail "shared-memory race: part\[1\]"
expect nosync 1 fail "emu_selftest.cu:20"
expect halfwarp 0 fail "shuffle reached by part of a warp"
expect capture 0 0 "cudaErrorStreamCaptureUnsupported"
expect frozen 0 0 "replayed fill wrote 3"
expect unordered 0 0 "s2 copied 7"
expect unordered 1 fail "s2 copied"
exit $status
