#!/usr/bin/env bash
# The CPU trainer before vs after a compiler change: builds trainc at REF (default f3463cc,
# the code before issue 15's back-end redesign) in a scratch copy, lets the old and the
# current compiler each build SPEC against this checkout's runtime, and times --benchmark
# STEPS of both, alternating REPS times; prints each side's median images/s and new/old.
#   REF=f3463cc SPEC=specs/examples/fmnist_lenet.spec STEPS=20 REPS=5 bash bench/cpu_before_after.sh
set -eu
BUILD=${BUILD:-build}
REF=${REF:-f3463cc}
SPEC=${SPEC:-specs/examples/fmnist_lenet.spec}
STEPS=${STEPS:-20}
REPS=${REPS:-5}
out=$BUILD/bench/before-after
rm -rf "$out" && mkdir -p "$out/old-src"
git archive "$REF" compiler templates mk Makefile runtime | tar -x -C "$out/old-src"
make -s -C "$out/old-src" BUILD=build build/trainc > "$out/old-build.log" 2>&1
# both compilers link against this checkout's runtime (BUILD must be build, the directory the old
# trainc looks in): the comparison is of the generated code
# WHOLE=1: the old trainer links the old runtime too, so runtime changes count (the whole code
# before vs after); otherwise both link this checkout's runtime and only the generated code differs.
if [ "${WHOLE:-0}" = 1 ]; then
  make -s -C "$out/old-src" BUILD=build runtime >> "$out/old-build.log" 2>&1
  TRAINC_HOME=$PWD/$out/old-src "$out/old-src/build/trainc" build "$SPEC" -o "$out/old" > /dev/null
else
  # The runtime now decodes JPEGs, which the old compiler's link line does not know: a cc that adds them.
  printf '#!/bin/sh\nexec cc "$@" -lturbojpeg -ljpeg -lpng\n' > "$out/cc-with-jpeg" && chmod +x "$out/cc-with-jpeg"
  CC=$PWD/$out/cc-with-jpeg TRAINC_HOME=$(pwd) "$out/old-src/build/trainc" build "$SPEC" -o "$out/old" > /dev/null
fi
"$BUILD/trainc" build "$SPEC" -o "$out/new" > /dev/null
if cmp -s "$out/old.src/model.c" "$out/new.src/model.c"; then echo "the two compilers emit the same model.c"
else echo "the two model.c differ: diff -u $out/old.src/model.c $out/new.src/model.c"; fi
for i in $(seq "$REPS"); do
  for side in old new; do
    "$out/$side" --benchmark "$STEPS" --out "$out/run-$side" | grep -o '[0-9.]* images/s' | cut -d' ' -f1 >> "$out/$side.txt"
  done
done
python3 - "$out/old.txt" "$out/new.txt" "$SPEC" "$REF" <<'PY'
import statistics, sys
old = [float(x) for x in open(sys.argv[1])]
new = [float(x) for x in open(sys.argv[2])]
mo, mn = statistics.median(old), statistics.median(new)
print(f"{sys.argv[3]}: trainc at {sys.argv[4]} {mo:.1f} images/s, now {mn:.1f} images/s "
      f"(medians of {len(old)}); new/old = {mn / mo:.3f}")
PY
