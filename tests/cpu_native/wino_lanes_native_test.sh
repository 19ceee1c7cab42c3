#!/usr/bin/env bash
# The Winograd transforms that run 16 channels per vector against those that run 16 tiles
# per vector, bit for bit, as the trainers link them (tests/cpu_native/wino_lanes_native.c).
set -eu
source tests/lib.sh
make -s BUILD="$BUILD" "$BUILD/tests-native/wino_lanes_native" > /dev/null
"$BUILD/tests-native/wino_lanes_native"
