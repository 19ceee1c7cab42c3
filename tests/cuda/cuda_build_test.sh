#!/usr/bin/env bash
# The CUDA backend without a GPU (part of `make test`): libtrainrt_cuda, the GPU op test and
# the CUDA trainers of the example specs (fused and --no-fuse) and of the benchmark nets must compile with nvcc and cc
# without a single warning; the emitted CUDA sources must equal generated/<name>/cuda/
# (UPDATE=1 rewrites them); BF16 and FP16 trainers (16-bit activations, loss scaling) and
# channels-last ones (--layout nhwc) compile
# too, with 16-bit act_t in their sources, and a sync_bn one; bad backend and layout options
# give one clear error; and on a machine without a GPU the trainer refuses with a clear message.
# Skips, saying so, only when nvcc is absent. The runtime library is the default `make cuda`
# build (sm_80 + sm_90), whose objects tests/cuda/kernel_budget_test.sh reads the ptxas
# reports of (each file compiled once in `make test`); the trainers' generated kernels are
# compiled for one architecture (CHECK_ARCHS, default 90), which keeps their many builds short.
set -u
source tests/lib.sh
out=$BUILD/test-cuda
rm -rf "$out" && mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)}
if [ -z "$nvcc" ]; then
  echo "SKIP: nvcc not found (PATH, /usr/local/cuda/bin): the CUDA backend's compile check did not run"
  exit 0
fi
status=0
env_file=$(pwd)/$out/cuda-check.env
archs=${CHECK_ARCHS:-90}

# 1. runtime library, op test and cuda.env for the check (trainers' kernels for $archs),
# warnings as errors
if ! make -s cuda test-gpu-build CUDA_ARCHS="80 90" CUDA_KERNEL_ARCHS="$archs" CUDA_ENV="$env_file" CUDA_WERROR=1 \
     > "$out/make.log" 2>&1; then
  fail "make cuda (sm_80 + sm_90, trainers' kernels for sm_$archs) failed:"; tail -30 "$out/make.log"; exit 1
fi
if grep -i "warning" "$out/make.log"; then fail "warnings while building the CUDA runtime"; fi
echo "built libtrainrt_cuda (sm_80 + sm_90) and test_ops_gpu without warnings; trainers' kernels for sm_$archs"

# Every device operand 256-byte aligned: cuBLASLt and cuDNN pick kernels that assume it.
# Parameters sit on 128-element boundaries (512 bytes in FP32, 256 in the 16-bit weight
# copy WA), arena tensors on 256 bytes.
check_aligned() {  # model.c
  local bad
  bad=$(grep -oE '\((P|G|WA) \+ [0-9]+\)|\(arena \+ [0-9]+\)' "$1" |
        awk '{ n = $3 + 0; if (($2 == "(arena" && n % 256) || ($2 != "(arena" && n % 128)) print }' | head -3)
  [ -z "$bad" ] || fail "$1 has unaligned device offsets: $bad"
  grep -qE '\((P|G) \+ [0-9]+\)' "$1" || fail "$1: no parameter offsets found to check"
}

# 2. the example trainers, fused and unfused, and their emitted sources vs the goldens
export TRAINC_CUDA_ENV=$env_file
for spec in specs/examples/*.spec; do
  name=$(basename "$spec" .spec)
  for mode in fused unfused; do
    flags=(--backend cuda); [ $mode = unfused ] && flags+=(--no-fuse)
    log=$out/$name.$mode.log
    if ! "$BUILD/trainc" build "$spec" -o "$out/$name.$mode" --emit-dir "$out/$name.$mode.src" "${flags[@]}" > "$log" 2>&1; then
      fail "trainc build --backend cuda ($mode) failed for $spec:"; cat "$log"; continue
    fi
    if grep -i "warning" "$log"; then fail "warnings compiling the CUDA trainer of $spec ($mode)"; fi
  done
  src=$out/$name.fused.src
  check_aligned "$src/model.c"
  if [ "${UPDATE:-0}" = 1 ]; then
    mkdir -p "generated/$name/cuda" && cp "$src"/{model.c,kernels.cu,kernels.h,plan.txt} "generated/$name/cuda/"
    continue
  fi
  for f in model.c kernels.cu kernels.h plan.txt; do
    diff -u "generated/$name/cuda/$f" "$src/$f" > "$out/$name.$f.diff" ||
      { fail "generated/$name/cuda/$f differs from what trainc emits now (UPDATE=1 bash $0 to accept):"; head -30 "$out/$name.$f.diff"; }
  done
done
echo "built the CUDA trainers of $(ls specs/examples/*.spec | wc -l) example specs (fused and unfused)"
# Mixed precision: the ResNet example in BF16 and FP16 (FP16 with dynamic loss scaling).
for p in BF16 FP16; do
  printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: %s }\n' "$(pwd)" $p > "$out/resnet_$p.spec"
  "$BUILD/trainc" build "$out/resnet_$p.spec" -o "$out/resnet_$p" --backend cuda > "$out/resnet_$p.log" 2>&1 ||
    { fail "trainc build --backend cuda failed for compute: $p:"; tail -20 "$out/resnet_$p.log"; continue; }
  if grep -i "warning" "$out/resnet_$p.log"; then fail "warnings compiling the $p CUDA trainer"; fi
  check_aligned "$out/resnet_$p.src/model.c"
  want=$([ $p = BF16 ] && echo __nv_bfloat16 || echo __half)
  grep -q "typedef $want act_t;" "$out/resnet_$p.src/kernels.cu" || fail "$p kernels.cu does not use $want activations"
  grep -q "typedef uint16_t act_t;" "$out/resnet_$p.src/model.c" || fail "$p model.c does not plan 16-bit activations"
  if [ $p = FP16 ]; then
    grep -q ".loss_scale = 2, .init_scale = 65536.0f" "$out/resnet_$p.src/model.c" ||
      fail "FP16 model.c does not set up dynamic loss scaling"
  fi
done
echo "built the ResNet example in BF16 and FP16"
# Channels-last (--layout nhwc): the ResNet example in BF16, ResNet-50, ConvNeXt-Tiny, AlexNet and
# Caffe's AlexNet and GoogLeNet, emitted and compiled;
# every conv reads the channels-last weight copy, and the ops take their _nhwc variants.
nhwc_build() {  # spec, name
  "$BUILD/trainc" build "$1" -o "$out/$2" --backend cuda --layout nhwc > "$out/$2.log" 2>&1 ||
    { fail "trainc build --layout nhwc failed for $1:"; tail -20 "$out/$2.log"; return; }
  if grep -i "warning" "$out/$2.log"; then fail "warnings compiling the NHWC CUDA trainer of $1"; fi
  local src=$out/$2.src/model.c
  check_aligned "$src"
  # every conv on the channels-last weights: alone, with its bias in our depthwise kernels
  # (fuse_dw_bias.c), or inside cuDNN's conv + genstats graph
  [ "$(grep -c 'cuda_conv2d_forward(.*_wnhwc);\|cuda_conv2d_forward_bias(.*_wnhwc, [a-z0-9_]*_bias);\|cuda_conv_bn_forward\(_sbr\)\?(.*_wnhwc, ctx->training);' "$src")" = \
    "$(grep -c 'rt_cuda_conv_create_nhwc' "$src")" ] &&
    [ "$(grep -c 'rt_cuda_conv_create(' "$src")" = 0 ] && grep -q '\.nhwc = 1,' "$src" &&
    ! grep -q 'cuda_batchnorm_stats_train(\|cuda_maxpool2d_forward(\|cuda_global_avgpool_forward(' "$src" ||
    fail "$2: model.c mixes channels-last and NCHW calls"
  grep -qE 'i % [0-9]+' "$out/$2.src/kernels.cu" && ! grep -qE 'i / [0-9]+L % ' "$out/$2.src/kernels.cu" ||
    fail "$2: kernels.cu indexes channels as NCHW"
}
nhwc_build "$out/resnet_BF16.spec" resnet_nhwc
printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/r50_bf16.spec"
nhwc_build "$out/r50_bf16.spec" resnet50_nhwc
printf 'extends: "%s/bench/specs/gpu_convnext_tiny.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/cnx_bf16.spec"
nhwc_build "$out/cnx_bf16.spec" convnext_nhwc
grep -q 'cuda_layernorm_forward(.*BATCH \* 3136L, 96, 1,' "$out/convnext_nhwc.src/model.c" ||
  fail "convnext_nhwc: layer norm is not called on [N*H*W, C, 1] rows"
# AlexNet channels-last: adaptive average pooling, a flatten of positions, dropout and linears
printf 'extends: "%s/bench/specs/gpu_alexnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/alexnet_bf16.spec"
nhwc_build "$out/alexnet_bf16.spec" alexnet_nhwc
grep -q 'cuda_avgpool2d_forward_nhwc(' "$out/alexnet_nhwc.src/model.c" &&
  grep -q 'classifier_1_shape = { .n = BATCH, .c = 256, .h = 6, .w = 6, .oc = 4096, .kh = 6, .kw = 6,' \
    "$out/alexnet_nhwc.src/model.c" || fail "alexnet_nhwc: no channels-last pooling, or the first linear is not a 6x6 conv"
# Caffe's AlexNet (LRN, a linear straight on positions) and GoogLeNet (LRN, concat, avgpool)
for net in bvlc_alexnet bvlc_googlenet; do
  printf 'extends: "%s/specs/published/%s.spec"\nprecision { compute: BF16 }\n' "$(pwd)" "$net" > "$out/${net}_bf16.spec"
  nhwc_build "$out/${net}_bf16.spec" "${net}_nhwc"
done
echo "built the ResNet example, ResNet-50, ConvNeXt-Tiny, AlexNet and Caffe's AlexNet and GoogLeNet channels-last (--layout nhwc)"
# Synchronized batch norm: every BN call of the ResNet example asks for the global statistics.
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nparallel { ranks: 2 sync_bn: true }\n' "$(pwd)" > "$out/syncbn.spec"
if "$BUILD/trainc" build "$out/syncbn.spec" -o "$out/syncbn" --backend cuda > "$out/syncbn.log" 2>&1; then
  src=$out/syncbn.src/model.c
  [ "$(grep -c 'cuda_batchnorm_backward(.*, 1);' "$src")" = "$(grep -c 'cuda_batchnorm_backward(' "$src")" ] &&
    [ "$(grep -c 'cuda_batchnorm_backward(' "$src")" -gt 0 ] || fail "sync_bn: some BN backward calls are not synchronized"
  echo "built the ResNet example with sync_bn"
else
  fail "trainc build --backend cuda failed for sync_bn:"; tail -20 "$out/syncbn.log"
fi
# The benchmark nets (ResNet-50, AlexNet, ConvNeXt-Tiny at batch 256) and Swin-T in BF16 (its
# windowed attention: window_attention.cu): emitted and compiled only.
printf 'extends: "%s/specs/models/swin_t.spec"\ndata { train { source: "synthetic" samples: 2 batch_per_rank: 1 } }\n%s\n' \
  "$(pwd)" 'solver { epochs: 1 adamw { } lr { base: 0.001 } } precision { compute: BF16 }' > "$out/swin_t.spec"
for spec in bench/specs/gpu_*.spec "$out/swin_t.spec"; do
  name=$(basename "$spec" .spec)
  "$BUILD/trainc" build "$spec" -o "$out/$name" --backend cuda > "$out/$name.log" 2>&1 ||
    { fail "trainc build --backend cuda failed for $spec:"; tail -20 "$out/$name.log"; continue; }
  if grep -i "warning" "$out/$name.log"; then fail "warnings compiling the CUDA trainer of $spec"; fi
done

# 3. bad input: one clear error each, non-zero exit
expect_error() {  # description, expected text, command...
  local what=$1 want=$2; shift 2
  "$@" > "$out/err.out" 2> "$out/err.txt"; local rc=$?
  if [ $rc -eq 0 ] || ! grep -q "$want" "$out/err.txt"; then
    fail "$what: expected a failure saying '$want', got status $rc:"; cat "$out/err.txt"
  fi
}
expect_error "unknown backend" "unknown backend 'metal'" \
  "$BUILD/trainc" build specs/examples/fmnist_mlp.spec -o "$out/x" --backend metal
expect_error "--layout nhwc in FP32" "is for 16-bit activations" \
  "$BUILD/trainc" build specs/examples/fmnist_resnet.spec -o "$out/x" --backend cuda --layout nhwc
cat > "$out/flat_bn.spec" <<'SPEC'
name: "flat_bn"
net {
  input_shape: [1, 8, 8]
  classes: 10
  conv { name: "c" out: 4 kernel: 3 pad: 1 }
  flatten { name: "f" }
  bn { name: "bn" }
  linear { name: "fc" out: 10 }
}
data { train { source: "synthetic" samples: 8 batch_per_rank: 4 } }
precision { compute: BF16 }
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }
SPEC
expect_error "--layout nhwc with a per-feature op after a flatten of positions" \
  'flat_bn.spec:7: layer "bn" (bn): --layout nhwc does not support this op on a flattened tensor with positions (4x8x8' \
  "$BUILD/trainc" build "$out/flat_bn.spec" -o "$out/x" --backend cuda --layout nhwc
sed -e 's/flat_bn/reshape_nhwc/' -e 's/  flatten { name: "f" }/  reshape { name: "f" shape: [2, 16, 8] }/' \
  -e 's/  bn { name: "bn" }/  conv { name: "c2" out: 4 kernel: 3 pad: 1 }/' "$out/flat_bn.spec" > "$out/reshape_nhwc.spec"
expect_error "--layout nhwc with a reshape to a shape with positions (a transpose channels-last)" \
  'layer "f": a reshape to a shape with positions (stored channels-last it is a transpose, not a view) with --layout nhwc is not implemented' \
  "$BUILD/trainc" build "$out/reshape_nhwc.spec" -o "$out/x" --backend cuda --layout nhwc
expect_error "--layout nhwc on the CPU" "needs --backend cuda" \
  "$BUILD/trainc" build specs/examples/fmnist_resnet.spec -o "$out/x" --layout nhwc
TRAINC_CUDA_ENV=$out/missing.env expect_error "CUDA runtime not built" "make cuda" \
  "$BUILD/trainc" build specs/examples/fmnist_mlp.spec -o "$out/x" --backend cuda

# 4. without a GPU the trainer refuses cleanly (on a GPU machine, make test-gpu runs it)
if ! nvidia-smi -L > /dev/null 2>&1; then
  expect_error "trainer on a machine without a GPU" "no CUDA device is available" \
    "$out/fmnist_mlp.fused" --out "$out/run"
  [ "$(grep -c '^error:' "$out/err.txt")" = 1 ] || { fail "expected exactly one error line:"; cat "$out/err.txt"; }
fi
exit $status
