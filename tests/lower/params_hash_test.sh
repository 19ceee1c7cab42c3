#!/usr/bin/env bash
# The generated CPU trainers behave as before the back-end redesign (issue 15): each example
# net (tests/lower/specs/*_short.spec: the example with synthetic data and one short epoch)
# is built and trained, and its final params_hash must equal the one recorded from the
# compiler at f3463cc, before lowering and emitting were rewritten. A difference means the
# generated trainer computes something else; if that is intended, say why and update it here.
set -u
BUILD=${BUILD:-build}
out=$BUILD/test-lower/params-hash
rm -rf "$out" && mkdir -p "$out"
status=0
expect() {  # name hash
  local spec=tests/lower/specs/$1_short.spec
  if ! "$BUILD/trainc" build "$spec" -o "$out/$1" > "$out/$1.build.log" 2>&1; then
    echo "FAIL: trainc build $spec:"; cat "$out/$1.build.log"; status=1; return
  fi
  if ! OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} "$out/$1" --out "$out/run_$1" > "$out/$1.log" 2>&1; then
    echo "FAIL: $1 did not train:"; tail -5 "$out/$1.log"; status=1; return
  fi
  local got
  got=$(grep -o '"params_hash":"[0-9a-f]*"' "$out/run_$1/metrics.jsonl" | cut -d'"' -f4)
  if [ "$got" = "$2" ]; then echo "ok: $1 params_hash $got"
  else echo "FAIL: $1 params_hash $got, expected $2 (recorded at f3463cc)"; status=1; fi
}
expect fmnist_mlp c7de9a2a11ba3b08
# LeNet's hash moved from 6afe34eff4ff0aa3 (f3463cc) when the conv bias gradient began summing
# each plane over 16 float lanes rather than in one running sum (branch fp32conv): rounding
# only, the short run's eval loss 2.2303112 against 2.23031115, the same top-1 and top-5.
# It moved again when the 1-channel first convolution left im2col + GEMM for a direct kernel
# (runtime/cpu/conv2d_c1.c, branch lenet): another summation order, rounding only; the short
# run's eval loss 2.23031125 against 2.2303112, the same top-1 and top-5 (TRAINC_CONV_C1=off
# gives the previous hash). It moved again when the Winograd forward began running 16 channels
# per vector (branch wtrans): each transformed position's GEMM computes M^T = V^T U^T instead of
# M = U V, the same products summed in another order (the transforms themselves are bit for bit
# the same, tests/cpu_native/wino_lanes_native_test.sh); eval loss 2.23031126 against
# 2.23031125, the same top-1 and top-5.
expect fmnist_lenet c7c3429067574505
# ResNet's hash moved from 2dc34fa14f05c416 (rounding only, each change's short run keeping
# top-1 and top-5) when batch norm began summing a channel in 16 float lanes over spans of
# ~4096 values (not per plane) and sum(dy*xhat) as inv_std*sum(dy*(x-mean)) (branch bn: eval
# loss 2.3778600 against 2.3795008), when its 3x3/2 convolutions began running as one GEMM
# per kernel tap on polyphase planes (conv2d_strided.c, branch stride2: the same products
# summed in another order, checked against the direct convolution in double by
# tests/unit/test_conv_strided.c; 2.37816548 against 2.37950076, where the old code on one
# thread instead of two gave 2.38020318), and when its stem took the 1-channel kernel above
# (branch lenet: 2.37976582 against 2.37950076); all three together 2.37839861, top-1 and top-5 the same.
# It moved from 1f81a5d37f4144ea when the Winograd forward's GEMMs turned to M^T = V^T U^T (as
# LeNet's above, branch wtrans: 2.37870624 against 2.37839861) and the 7x7 convolutions' input
# gradient to dV^T = dM^T U (the same products summed in another order; the transforms bit for
# bit the same): 2.37911300 against 2.37839861, top-1 and top-5 the same.
# It moved from 5558ad3b87e807ee when the two 3x3/2 convolutions left the polyphase GEMMs for
# Winograd F(7x7,2x2) on the stacked phase planes (conv2d_strided_winograd.c, branch strided:
# other products and sums, float error up to ~3e-4 of max(|y|, 1) against the double
# reference, tests/unit/test_conv_strided.c): 2.37910536 against 2.37911300, top-1 and top-5
# the same (TRAINC_CONV_STRIDED_WINOGRAD=off gives the previous hash).
expect fmnist_resnet a7818a59c11a20f1
exit $status
