#!/usr/bin/env bash
# Batch norm as the trainers link it (-march=native vector code) against a double reference
# (tests/cpu_native/bn_native.c).
set -eu
source tests/lib.sh
make -s BUILD="$BUILD" "$BUILD/tests-native/bn_native" > /dev/null
"$BUILD/tests-native/bn_native"
echo "ok: batch norm (native build) matches the double reference"
