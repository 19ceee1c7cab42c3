#!/usr/bin/env bash
# 2x2 max pooling as the trainers link it (-march=native vector code) against a direct loop
# (tests/cpu_native/maxpool_native.c).
set -eu
source tests/lib.sh
make -s BUILD="$BUILD" "$BUILD/tests-native/maxpool_native" > /dev/null
"$BUILD/tests-native/maxpool_native"
echo "ok: 2x2 max pooling (native build) matches the direct loop"
