#!/usr/bin/env bash
# Whole-model gradient check: compiles each tests/gradcheck/*.spec with trainc, then builds
# its generated model.c in double precision (model_f64.h, the _f64 ops of libtrainrt_f64.a,
# arena offsets doubled) with model_gradcheck.c and runs the check.
set -eu
source tests/lib.sh
for lib in "$BUILD/asan/libtrainrt.a" "$BUILD/asan/libtrainrt_f64.a"; do
  [ -f "$lib" ] || { echo "missing $lib: run make test-build" >&2; exit 1; }
done

check_net() {   # SPEC: build and check one net
local name
name=$(basename "$1" .spec)
dir=$BUILD/test-gradcheck/$name
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build "$1" -o "$dir/net" >/dev/null

# Every op of rt_ops.h maps to its double twin (`name` is the parameter of RT_OPS_FN itself).
grep -o 'RT_OPS_FN([a-z_0-9]*)' runtime/include/rt_ops.h | sed 's/RT_OPS_FN(\(.*\))/\1/' | grep -vx name | sort -u |
  awk '{ printf "#define %s %s_f64\n", $1, $1 }' > "$dir/ops_f64.h"
[ -s "$dir/ops_f64.h" ] || { echo "no ops found in rt_ops.h" >&2; exit 1; }

# Arena offsets are bytes planned for 4-byte floats; in double every tensor needs twice that.
sed -E 's/\(arena \+ ([0-9]+)\)/(arena + 2 * \1)/g' "$dir/net.src/model.c" > "$dir/model_f64.c"
if grep -E 'arena \+ [0-9]+\)' "$dir/model_f64.c"; then
  echo "model.c addresses the arena in a form this test does not rescale (lines above)" >&2; exit 1
fi
grep -q 'arena + 2 \* ' "$dir/model_f64.c" || { echo "no arena offsets found in model.c" >&2; exit 1; }

# "# gradcheck zero: T ..." in a spec: tensors whose every path is stopped (a zero gradient)
zero=$(sed -n 's/^# gradcheck zero: *//p' "$1")
cc -std=c11 -D_GNU_SOURCE -g -O1 -fopenmp -fsanitize=address,undefined -fno-omit-frame-pointer -DGC_ZERO_OK="\"$zero\"" \
  -fno-sanitize-recover=undefined -Wall -Wno-unused-function -Wno-unused-parameter -Werror=incompatible-pointer-types \
  -Iruntime/include -Itests/gradcheck -I"$dir" -include model_f64.h \
  -DMODEL_C="\"$PWD/$dir/model_f64.c\"" tests/gradcheck/model_gradcheck.c -o "$dir/model_gradcheck" \
  "$BUILD/asan/libtrainrt_f64.a" "$BUILD/asan/libtrainrt.a" -lopenblas -lturbojpeg -ljpeg -lpng -lz -lm -lgomp $(mpicc --showme:link) $SAN_LIBS
OMP_NUM_THREADS=2 "$dir/model_gradcheck"
}

# The chain net is there for the planner's sharing of gradient buffers: it checks nothing
# if the plan no longer takes the chain or shares what must be copied.
"$BUILD/trainc" build tests/gradcheck/gradcheck_chain.spec -o "$BUILD/test-gradcheck-chain" >/dev/null
for line in "q_dout is a1_dout: no copy" "bn1_dout is a1_dout: no copy" "a1_dout is a2_dout: no copy" \
            "a2_dout is a5_dout: no copy" "memcpy(c3_dout, a5_dout"; do
  grep -qF "$line" "$BUILD/test-gradcheck-chain.src/model.c" ||
    { echo "gradcheck_chain: the plan changed: no '$line' in its model.c" >&2; exit 1; }
done
rm -rf "$BUILD/test-gradcheck-chain" "$BUILD/test-gradcheck-chain.src"
for spec in tests/gradcheck/*.spec; do
  echo "== $spec"
  check_net "$spec"
done
