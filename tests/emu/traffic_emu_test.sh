#!/usr/bin/env bash
# The GPU cost model against the emulator's count (part of `make test`): each example net
# (FP32, NCHW), average pooling and dropout (tests/emu/traffic/pools_dropout.spec, FP32 NCHW and
# BF16 channels-last), ConvNeXt's ops (tests/emu/traffic/convnext_mini.spec: FP32 NCHW, BF16
# channels-last, each dwconv's bias added in the depthwise kernel's store and its gradient
# summed in the weight gradient's kernel, that with TRAINC_CUDA_DEPTHWISE=cudnn (cuDNN, then
# bias.cu's passes), with --no-bias-act-grad: pwconv1's bias gradient summed apart from the
# GELU's backward, with --no-dw-bias: the dwconv's bias in passes of its own, and with
# --no-ln-bias: the stem conv's bias in passes of its own, not read and summed by the stem's
# layer norm), GELU and the activation family with
# and without their producer's bias (tests/emu/traffic/activations.spec), Swin's windowed and a
# global attention (tests/emu/traffic/attention.spec: FP32, BF16 on cuDNN's fused SDPA and with
# --no-cudnn-attention), the ResNet example in BF16 channels-last with the default kernels
# (each conv that feeds a bn on cuDNN's runtime-fusion conv + genstats graph, the stem's bn's
# sums retired in their pass, a block's closing bns applied inside its add: both branches of a
# projection block, bn_add_relu_bits_nhwc_kernel, with ReLU bitmasks and the block output's
# backward in two passes, bn_add_bwd_sums_kernel and bn_add_bwd_dx_kernel), with
# --no-bn-retire, with --no-bn-add (each bn applied by its own kernel, then the add), with
# --no-relu-mask (the backward reads ReLU outputs; the add's and each bn's backward apart),
# with --no-conv-genstats (every bn's sums retired in their own pass), and with the last two
# and the old batch-norm and pooling kernels (TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old, the
# code the H100 measured), the same in FP16 (ConvBNfprop's conv + genstats graph for every conv
# feeding a bn, each basic block's conv2 with bn1 + ReLU in its prologue and ConvBNwgrad in its
# backward, DgradDreluBNBwdWeight in its data gradient; with --no-conv-genstats, with
# --no-conv-sbr and with --no-conv-dgrad-fuse; fused and unfused trainers' losses
# compared in both precisions), and ResNet-50 at batch 2 on 32x32 inputs in BF16 channels-last
# (its stem's bn + ReLU + max pooling in one pass, bn_relu_maxpool_nhwc_kernel, and the
# pooling's backward gathered inside bn1's two backward passes; --no-bn-pool runs the two
# kernels each way that the other checks count; its 12 identity blocks' bn backward folded
# through conv3), a small bottleneck ResNet (tests/emu/traffic/bottleneck_mini.spec) in BF16
# channels-last with that fold and with --no-bn-fold, each built
# through the emulator's traffic build (make emu-traffic) and run for one profiled step
# (TRAINC_CUDA_PROFILE_STEP=1, EMU_TRAFFIC=FILE): `trainc show --gpu-cost` must name every
# kernel and library call of that step in launch order with exactly the bytes read and
# written that the emulator counted (tests/emu/traffic_compare.py; the old batch-norm
# backward reads dy only where the ReLU passed it: at most the predicted bytes). Then the comparison
# itself must catch a difference: one kernel's predicted bytes changed by 16 fails it.
# A mutant of the code fails it too: channel_tiles.cuh's MIN_ROWS_PER_BLOCK 256 -> 128 (twice
# the row splits, so twice the partial sums) makes several of resnet_bf16's launches differ
# (e.g. vec_grads_retire_kernel of stem_bn: predicted read=49924 write=1284, counted
# read=50436 write=1796), as does any kernel that reads or writes a tensor the model does not
# list, or skips one it does.
set -u
source tests/lib.sh
out=$BUILD/test-emu-traffic
rm -rf "$out" && mkdir -p "$out"
if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  echo "SKIP: the CUDA headers are not installed: the emulated CUDA backend did not run"
  exit 0
fi
nice make -s emu-traffic BUILD="$BUILD" > "$out/make.log" 2>&1 || { echo "FAIL: make emu-traffic"; tail -20 "$out/make.log"; exit 1; }
export TRAINC_CUDA_ENV=$(pwd)/$BUILD/emu-traffic/cuda.env TRAINC_CUDNN_WORKSPACE_MB=16 OMP_NUM_THREADS=1
# Many variants below differ in the host schedule alone and emit the same kernels.cu: each
# distinct one is compiled once (tests/emu/compile_once).
export NVCC=$(pwd)/tests/emu/compile_once COMPILE_ONCE_NVCC=$(pwd)/tests/emu/emu-nvcc COMPILE_ONCE_DIR=$(pwd)/$out/kernel-objects
status=0

spec() {  # tag, extended spec, net text, extra text -> $out/<tag>.spec (S samples at batch B: 16 at 4)
  printf 'extends: "%s/%s"\n%s\ndata { train { source: "synthetic" samples: %s batch_per_rank: %s }\n  val { source: "synthetic" batch_per_rank: %s } val_samples: %s }\nsolver { epochs: 1 log_every: 1 %s }\n%s\n' \
    "$(pwd)" "$2" "$3" "${S:-16}" "${B:-4}" "${B:-4}" "${B:-4}" "${LR:-}" "$4" > "$out/$1.spec"
}
check() {  # tag, layout, environment... (FLAGS: more build flags, given to show --gpu-cost too)
  local tag=$1 layout=$2 run=$1 bin=$out/$1${FLAGS:+.${FLAGS#--}}; shift 2
  [ -n "${FLAGS:-}" ] && run=$tag.${FLAGS#--}
  [ $# -gt 0 ] && run=$tag.$1
  [ -x "$bin" ] || "$BUILD/trainc" build "$out/$tag.spec" -o "$bin" --backend cuda --layout "$layout" ${FLAGS:-} \
    > "$bin.build.log" 2>&1 || { echo "FAIL: trainc build $tag ${FLAGS:-}:"; tail -5 "$bin.build.log"; status=1; return; }
  rm -f "$out/$run.traffic"
  if ! env "$@" TRAINC_CUDA_PROFILE_STEP=1 EMU_TRAFFIC="$out/$run.traffic" "$bin" --out "$out/$run.run" > "$out/$run.log" 2>&1; then
    echo "FAIL: $run did not run:"; tail -5 "$out/$run.log"; status=1; return
  fi
  local old= bound=(); case "$*" in *TRAINC_CUDA_BN=old*) old=--old-kernels bound=(--at-most nhwc_partial_grads_kernel,nhwc_input_grad_kernel) ;; esac
  local show_env=(); case "$*" in *TRAINC_CUDA_DEPTHWISE=*) show_env=("$@") ;; esac   # the model reads that switch too
  if ! env "${show_env[@]}" "$BUILD/trainc" show --gpu-cost --layout "$layout" $old ${FLAGS:-} "$out/$tag.spec" > "$out/$run.model" 2> "$out/$run.model.err"; then
    echo "FAIL: trainc show --gpu-cost $run:"; cat "$out/$run.model.err"; status=1; return
  fi
  if "$PY" tests/emu/traffic_compare.py "${bound[@]}" "$out/$run.model" "$out/$run.traffic" > "$out/$run.compare"; then
    echo "$run ($layout${old:+, old kernels}${FLAGS:+, $FLAGS}): $(tail -1 "$out/$run.compare")"
  else
    echo "FAIL: $run: the model's bytes differ from the emulator's count:"; tail -12 "$out/$run.compare"; status=1
  fi
}

for n in fmnist_lenet fmnist_mlp; do spec "$n" "specs/examples/$n.spec" "" ""; check "$n" nchw; done
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec pools_dropout tests/emu/traffic/pools_dropout.spec "" ""
check pools_dropout nchw
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec pools_dropout_bf16 tests/emu/traffic/pools_dropout.spec "" 'precision { compute: BF16 }'
check pools_dropout_bf16 nhwc
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec convnext_mini tests/emu/traffic/convnext_mini.spec "" ""
check convnext_mini nchw
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec convnext_mini_bf16 tests/emu/traffic/convnext_mini.spec "" 'precision { compute: BF16 }'
check convnext_mini_bf16 nhwc
check convnext_mini_bf16 nhwc TRAINC_CUDA_DEPTHWISE=cudnn
FLAGS=--no-residual-tail check convnext_mini_bf16 nhwc
FLAGS=--no-bias-act-grad check convnext_mini_bf16 nhwc
FLAGS=--no-dw-bias check convnext_mini_bf16 nhwc
FLAGS=--no-ln-bias check convnext_mini_bf16 nhwc
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec activations tests/emu/traffic/activations.spec "" ""
check activations nchw
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec activations_bf16 tests/emu/traffic/activations.spec "" 'precision { compute: BF16 }'
check activations_bf16 nhwc
# attention: our kernels (FP32), cuDNN's fused SDPA for the global one (BF16), and BF16 with
# --no-cudnn-attention
LR='adamw { } lr { base: 0.001 }' spec attention tests/emu/traffic/attention.spec "" ""
check attention nchw
LR='adamw { } lr { base: 0.001 }' spec attention_bf16 tests/emu/traffic/attention.spec "" 'precision { compute: BF16 }'
check attention_bf16 nchw
FLAGS=--no-cudnn-attention check attention_bf16 nchw
LR='lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } }' \
  spec fmnist_resnet specs/examples/fmnist_resnet.spec 'net { input_shape: [1, 8, 8] }' ''
sed -i 's/data { train {/data { train { augment { random_crop { size: 8 padding: 1 } }/' "$out/fmnist_resnet.spec"
check fmnist_resnet nchw
cp "$out/fmnist_resnet.spec" "$out/resnet_bf16.spec" && echo 'precision { compute: BF16 }' >> "$out/resnet_bf16.spec"
check resnet_bf16 nhwc
FLAGS=--no-bn-retire check resnet_bf16 nhwc
FLAGS=--no-bn-add check resnet_bf16 nhwc
FLAGS=--no-relu-mask check resnet_bf16 nhwc
FLAGS="--no-relu-mask --no-conv-genstats" check resnet_bf16 nhwc TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old TRAINC_CUDA_BIAS=old
# FP16 (ConvBNfprop) and BF16 (the runtime-fusion engine): each conv that feeds a bn (all but
# the 1-channel stem) runs cuDNN's conv + genstats graph (cudnnBackendExecute: the conv's
# operands and the two FP32 sums per channel) and its bn only finalizes them
# (bn_finalize_sums_kernel); --no-conv-genstats: the statistics' pass
sed 's/compute: BF16/compute: FP16/' "$out/resnet_bf16.spec" > "$out/resnet_fp16.spec"
check resnet_fp16 nhwc
FLAGS=--no-conv-genstats check resnet_fp16 nhwc
FLAGS=--no-conv-genstats check resnet_bf16 nhwc
# FP16 finalizes those sums in cuDNN's BN finalize graph (cudnnBackendExecute (BN finalize):
# the sums, gamma, beta and running statistics in; mean, inv std, running statistics and the
# FP16 equivalent scale and bias out); --no-bn-finalize-graph: our kernels
# (bn_finalize_sums_kernel, finalize_scale_bias_kernel)
if [ -f "$out/resnet_fp16.traffic" ] && ! grep -q 'cudnnBackendExecute (BN finalize)' "$out/resnet_fp16.traffic"; then
  echo "FAIL: resnet_fp16 ran no BN finalize graph (cudnnBackendExecute (BN finalize))"; status=1
fi
FLAGS=--no-bn-finalize-graph check resnet_fp16 nhwc
# FP16 also applies the inner bns (bn + ReLU before a conv) in that conv's prologue: their pass
# finalizes the scale and bias (finalize_scale_bias_kernel without the graph), the conv's
# weight gradient reads the prologue's output recomputed (scale_bias_relu_kernel), and the
# bn's backward recomputes the ReLU from its input; --no-conv-sbr: the bn applied by its own
# kernel, with bits
if [ -f "$out/resnet_fp16.no-bn-finalize-graph.traffic" ] &&
  ! grep -q finalize_scale_bias_kernel "$out/resnet_fp16.no-bn-finalize-graph.traffic"; then
  echo "FAIL: resnet_fp16 applied no bn in a conv's prologue (finalize_scale_bias_kernel)"; status=1
fi
FLAGS=--no-conv-sbr check resnet_fp16 nhwc
# ... and their conv's data gradient runs DgradDreluBNBwdWeight (cudnnBackendExecute: dy, the
# weights, the bn's input and four FP32 vectors in; the bn's output gradient and five FP32
# vectors out), the bn's backward its dx pass alone (bn_dx_kernel); --no-conv-dgrad-fuse: the
# conv's own data gradient and the bn's recomputing backward (its sums' pass)
if [ -f "$out/resnet_fp16.traffic" ] && ! grep -q bn_dx_kernel "$out/resnet_fp16.traffic"; then
  echo "FAIL: resnet_fp16 ran no bn backward after a fused data gradient (bn_dx_kernel)"; status=1
fi
FLAGS=--no-conv-dgrad-fuse check resnet_fp16 nhwc
# The genstats trainer trains as the unfused one: the first step's loss (the same forward, the
# statistics from the epilogue's sums) equal to 4 digits in FP16 (compared with --no-conv-sbr:
# the prologue's FP16 scale and bias change the forward's last bits; its own comparison is
# tests/emu/conv_sbr_emu_test.sh), within one BF16 rounding (2e-3 relative) in BF16, whose
# graph sums the conv's output before it is rounded to BF16 (the unfused pass sums the rounded
# values); the next three within 3% (batch 4 of 8x8 images: the statistics' last bits, FP32
# sums against double, compound).
for p in fp16 bf16; do
  if [ -f "$out/resnet_$p.traffic" ] && ! grep -q cudnnBackendExecute "$out/resnet_$p.traffic"; then
    echo "FAIL: resnet_$p ran no fused conv + genstats graph (cudnnBackendExecute)"; status=1
  fi
  fused=$out/resnet_$p.log
  [ $p = fp16 ] && fused=$out/resnet_$p.no-conv-sbr.log
  [ -f "$fused" ] && [ -f "$out/resnet_$p.no-conv-genstats.log" ] || continue
  if ! "$PY" - "$p" "$fused" "$out/resnet_$p.no-conv-genstats.log" <<'PYEOF'
import re, sys
loss = [[float(m) for m in re.findall(r"step \d+/\d+\s+loss ([0-9.]+)", open(f).read())] for f in sys.argv[2:]]
a, b = loss
first = 0.0 if sys.argv[1] == "fp16" else 2e-3
ok = len(a) == len(b) == 4 and abs(a[0] - b[0]) <= first * abs(b[0]) and all(abs(x - y) <= 0.03 * abs(y) for x, y in zip(a, b))
print(("" if ok else "FAIL: ") + "resnet_%s losses with conv + genstats %s, unfused %s" % (sys.argv[1], a, b))
sys.exit(0 if ok else 1)
PYEOF
  then status=1; fi
done
S=2 B=2 LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec resnet50 specs/models/resnet50.spec 'net { input_shape: [3, 32, 32] }' \
  'precision { compute: BF16 }'
check resnet50 nhwc
# a small bottleneck ResNet in BF16 channels-last: its identity blocks' bn backward folded
# through conv3 (fuse_bn_fold.c: fold_sums_kernel twice, six cuBLASLt products and two small
# kernels), and with --no-bn-fold (the add's two passes and conv3's gradients)
LR='sgd { momentum: 0.9 } lr { base: 0.01 }' spec bottleneck_bf16 tests/emu/traffic/bottleneck_mini.spec "" \
  'precision { compute: BF16 }'
check bottleneck_bf16 nhwc
FLAGS=--no-bn-fold check bottleneck_bf16 nhwc
for run in bottleneck_bf16 resnet50; do
  if [ -f "$out/$run.traffic" ] && ! grep -q fold_sums_kernel "$out/$run.traffic"; then
    echo "FAIL: $run folded no block output's bn backward through conv3 (fold_sums_kernel)"; status=1
  fi
done

# The comparison catches one kernel off by 16 bytes (a partial-sum split more or less).
if [ -f "$out/fmnist_lenet.model" ]; then
  awk 'BEGIN { done = 0 } !done && $4 ~ /maxpool_forward/ { $7 += 16; done = 1 } { print }' "$out/fmnist_lenet.model" > "$out/mutant.model"
  if "$PY" tests/emu/traffic_compare.py "$out/mutant.model" "$out/fmnist_lenet.traffic" > "$out/mutant.compare"; then
    echo "FAIL: the comparison passed a model with one kernel's written bytes changed"; status=1
  else
    echo "a model with one kernel's written bytes changed by 16: rejected ($(tail -1 "$out/mutant.compare"))"
  fi
fi
exit $status
