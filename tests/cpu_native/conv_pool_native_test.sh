#!/usr/bin/env bash
# conv2d_relu_maxpool (1-channel conv, ReLU and 2x2 pooling as one op) as the trainers link it against the two ops
# (tests/cpu_native/conv_pool_native.c).
set -eu
source tests/lib.sh
make -s BUILD="$BUILD" "$BUILD/tests-native/conv_pool_native" > /dev/null
"$BUILD/tests-native/conv_pool_native"
echo "ok: conv2d_relu_maxpool matches the conv and pooling ops bit for bit"
