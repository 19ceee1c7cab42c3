#!/usr/bin/env bash
# A bn + ReLU applied inside the next conv's prologue (lower: fuse_conv_bn.c IR_CONV_BN_SBR;
# conv_bn_fprop.cu's scale-bias-ReLU graph, conv_bn_sbr.cu, the bn's backward recomputing the
# ReLU in batchnorm_nhwc_vec.cu) in whole trainers under the emulator: the ResNet example at
# 8x8 in FP16 channels-last (each basic block's conv2 reads bn1 + ReLU: 6 prologues), 4 steps.
# The fused build trains as --no-conv-sbr (the bn applied by its own kernel, with ReLU bits)
# within 2e-2 of its losses (the prologue's scale and bias are FP16, the bn apply's FP32: the
# conv's input differs by their rounding), and as the FP32 CPU trainer within 5e-2 (as the
# other emulated 16-bit trainers); the fused build calls the prologue's conv, finalize,
# weight gradient (ConvBNwgrad) and backward where the flag's calls none; device memory within the start-up
# check's plan. Where cuDNN refuses the graph (here: a workspace cap below the plan's), the
# trainer says why once for each graph and runs the unfused prologue and weight gradient (the
# prologue's output recomputed): the same losses within 2e-2.
# The prologue conv's data gradient runs DgradDreluBNBwdWeight (conv_bn_dgrad.cu: the bn's ReLU
# and backward sums in its epilogue, the bn's backward its dx pass alone): the default build
# calls it for the 6 prologue convs, --no-conv-dgrad-fuse none (the bn's backward sums its own),
# within 2e-2 of each other's losses (the ReLU's condition from FP32 statistics in the graph,
# from the FP16 scale and bias apart); refused, the trainer names that refusal too.
# test_ops_gpu checks each kernel against the CPU ops (tests/emu/mutants.sh's sbr-* mutants
# show those checks failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-conv-sbr
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\n' "$(pwd)" \
  'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } }
  val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' > "$out/resnet.spec"
sed 's/^solver/precision { compute: FP16 }\nsolver/' "$out/resnet.spec" > "$out/resnet_fp16.spec"

emu_run cpu resnet && emu_run sbr resnet_fp16 --backend cuda --layout nhwc &&
  emu_run apart resnet_fp16 --backend cuda --layout nhwc --no-conv-sbr &&
  emu_run nodgrad resnet_fp16 --backend cuda --layout nhwc --no-conv-dgrad-fuse || exit 1
count() { grep -c "$1" "$2" || true; }
src=$out/sbr.src/model.c
n=$(count '^ *cuda_conv_bn_forward_sbr(' "$src"); fin=$(count '^ *cuda_\(conv_bn_stats\|bn_finalize\)_scale_bias(' "$src")
re=$(count '^ *cuda_conv_bn_backward_sbr(' "$src"); bwd=$(count '^ *cuda_batchnorm_backward_nhwc_dgrad(' "$src")
dg=$(count '^ *cuda_conv_bn_dgrad(' "$src")
[ "$n$fin$re$bwd$dg" = 66666 ] && echo "fp16 nhwc: 6 bns applied in their conv's prologue (finalize, ConvBNwgrad, DgradDreluBNBwdWeight, dx pass)" ||
  fail "model.c: $n prologues, $fin finalizes, $re fused weight gradients, $dg fused data gradients, $bwd dx-only bn backwards; expected 6 each"
[ "$(count 'scale_bias' "$out/apart.src/model.c")" = 0 ] || fail "--no-conv-sbr: model.c still applies a bn in a conv's prologue"
[ "$(count 'cuda_conv_bn_dgrad(' "$out/nodgrad.src/model.c")" = 0 ] &&
  [ "$(count '^ *cuda_batchnorm_backward_nhwc_sbr(' "$out/nodgrad.src/model.c")" = 6 ] ||
  fail "--no-conv-dgrad-fuse: model.c still sums a bn's backward in a conv's data gradient"
grep -q 'unfused' "$out/sbr.log" && fail "the fused trainer fell back: $(grep -m1 unfused "$out/sbr.log")"
emu_compare "prologue (fp16 nhwc) against --no-conv-sbr" sbr apart 2e-2
emu_compare "fused data gradient (fp16 nhwc) against --no-conv-dgrad-fuse" sbr nodgrad 2e-2
emu_compare "prologue (fp16 nhwc) against the CPU" sbr cpu 5e-2
emu_within_plan "prologue (fp16 nhwc) device memory" "$out/sbr.log" "$out/resnet_fp16.spec" "--layout nhwc" || status=1

# cuDNN refusing the graph: a workspace cap of 0 MiB, below
# the emulated plan's 1 KiB; the trainer names the refusal once and runs the prologue unfused
if TRAINC_CUDNN_WORKSPACE_MB=0 EMU_SCHEDULE=1 "$out/sbr" --out "$out/refused.run" > "$out/refused.log" 2>&1; then
  grep -q 'conv + batch-norm statistics unfused .*workspace' "$out/refused.log" &&
    grep -q 'scale-bias-ReLU + weight gradient unfused .*workspace' "$out/refused.log" &&
    grep -q 'data gradient + dReLU + bn backward sums unfused .*workspace' "$out/refused.log" &&
    echo "refused (no workspace): $(grep -m1 'weight gradient unfused' "$out/refused.log" | cut -c1-160)" ||
    fail "refused: the trainer did not name cuDNN's refusals (forward, weight and data gradients)"
  emu_compare "prologue refused, unfused, against the fused run" refused sbr 2e-2
else
  fail "the trainer with cuDNN's graph refused did not run:"; tail -5 "$out/refused.log"
fi
[ $status = 0 ] && echo "bn + ReLU in the next conv's prologue in emulated CUDA trainers: ok"
exit $status
