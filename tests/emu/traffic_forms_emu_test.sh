#!/usr/bin/env bash
# The traffic build counts every form of global-memory access (part of `make test`):
# tests/emu/traffic/forms_selftest.cu runs one small kernel per form (a __half through
# __half2float or a cast, __float2half stores, bf16, half2 / bfloat162 / float4 / uint4 through
# reinterpret_cast, a helper's pointer arithmetic, arguments of a function not inlined,
# in-place updates, an atomic, shared-memory staging, memcpy, 12-, 6- and 32-byte structs, a
# strided read), compiled as the traffic build compiles the CUDA code (tests/emu/emu-nvcc
# --emu-traffic) and run with EMU_TRAFFIC=FILE; each kernel's counted bytes read and written
# must equal those it states. Then the same kernels compiled with GCC's ThreadSanitizer
# instrumentation (the traffic build before clang's: it misses an aggregate read straight into a
# call's argument or written from its result, `__half2float(p[i])`, `p[i] = __float2half(v)`)
# must fail the comparison: the check catches a form the counting misses. Last, an access of a
# size LLVM's instrumentation skips (a 6-byte integer) must stop the traffic build's compile
# (tests/emu/traffic/ir_check.py) rather than go uncounted.
set -u
source "$(dirname "$0")/../lib.sh"
out=$BUILD/test-emu-traffic-forms
fresh_dir "$out"
if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  echo "SKIP: the CUDA headers are not installed"
  exit 0
fi
nice make -s "$BUILD/emu-traffic/libcudaemu.a" BUILD="$BUILD" > "$out/make.log" 2>&1 ||
  { echo "FAIL: building $BUILD/emu-traffic/libcudaemu.a"; tail -20 "$out/make.log"; exit 1; }
mpi_link=$(mpicc --showme:link 2>/dev/null)
# build and run with the given emu-nvcc flags; compare; returns the comparison's status
forms() {  # tag, emu-nvcc flags...
  local tag=$1; shift
  tests/emu/emu-nvcc "$@" -c tests/emu/traffic/forms_selftest.cu -o "$out/$tag.o" > "$out/$tag.build.log" 2>&1 &&
    c++ "$out/$tag.o" "$BUILD/emu-traffic/libcudaemu.a" $mpi_link -lstdc++ -o "$out/$tag" >> "$out/$tag.build.log" 2>&1 ||
    { echo "FAIL: building the traffic self-test ($tag):"; tail -8 "$out/$tag.build.log"; return 2; } >&2
  rm -f "$out/$tag.traffic"
  EMU_TRAFFIC="$out/$tag.traffic" "$out/$tag" > "$out/$tag.expect" 2> "$out/$tag.log" ||
    { echo "FAIL: the traffic self-test ($tag) did not run:"; tail -5 "$out/$tag.log"; return 2; } >&2
  "$PY" - "$out/$tag.expect" "$out/$tag.traffic" <<'PYEOF'
import re, sys
want = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("expect ")]
got = [re.match(r"kernel (\S+) .* read=(\d+) write=(\d+)", l).groups() for l in open(sys.argv[2]) if l.startswith("kernel ")]
bad = 0
if [w[0] for w in want] != [g[0] for g in got]:
    print("the kernels counted, %s, are not those launched, %s" % ([g[0] for g in got], [w[0] for w in want])); sys.exit(1)
for (name, r, w), (_, cr, cw) in zip(want, got):
    ok = (r, w) == (cr, cw)
    bad += not ok
    print("%-5s %-18s read %6s (counted %6s) write %6s (counted %6s)" % ("ok" if ok else "MISS", name, r, cr, w, cw))
print("%d of %d access forms counted exactly" % (len(want) - bad, len(want)))
sys.exit(1 if bad else 0)
PYEOF
}
forms clang --emu-traffic > "$out/clang.compare"; rc=$?
if [ $rc = 0 ]; then
  echo "traffic build: $(tail -1 "$out/clang.compare")"
else
  [ $rc = 1 ] && { echo "FAIL: the traffic build miscounts:"; grep -v "^ok" "$out/clang.compare"; }
  status=1
fi
forms gcc -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 > "$out/gcc.compare"; rc=$?
if [ $rc = 1 ]; then
  echo "GCC's instrumentation (the old traffic build): rejected, $(grep -c '^MISS' "$out/gcc.compare") forms missed ($(grep '^MISS' "$out/gcc.compare" | awk '{print $2}' | paste -sd' '))"
else
  [ $rc = 0 ] && echo "FAIL: the self-test passed GCC's instrumentation, which misses __half2float(p[i])"
  status=1
fi
cat > "$out/odd_size.cu" <<'EOF'
typedef _BitInt(48) i48;
__global__ void odd_size(const i48 *in, i48 *out) { out[threadIdx.x] = in[threadIdx.x] + 1; }
EOF
if tests/emu/emu-nvcc --emu-traffic -c "$out/odd_size.cu" -o "$out/odd_size.o" > "$out/odd_size.log" 2>&1; then
  echo "FAIL: the traffic build compiled a 6-byte access it cannot count"; status=1
elif grep -q "odd_size.*: a memory access of a size the traffic build cannot count" "$out/odd_size.log"; then
  echo "a 6-byte access: refused at compile time ($(grep -m1 -o 'load i48[^,]*' "$out/odd_size.log"))"
else
  echo "FAIL: the 6-byte access's compile failed for another reason:"; tail -5 "$out/odd_size.log"; status=1
fi
exit $status
