#!/usr/bin/env bash
# Shows the emulator catching broken CUDA code: each mutant is a copy of one runtime file
# with one deliberate mistake, compiled by emu-nvcc and linked ahead of libtrainrt_cuda into
# tests/gpu/test_ops_gpu, which must then fail. Not part of `make test` (50 relinks and
# runs, several minutes); run after `make emu`:  bash tests/emu/mutants.sh
#   index:    relu.cu writes out[i + 1] (ASan: heap-buffer-overflow, with the line)
#   barrier:  cuda_common.cuh's block_sum without its second __syncthreads (thread 0 reads
#             other warps' partial sums before they are written: the shared-memory race check)
#   barrier-reuse: block_sum without its first __syncthreads (a second call in one kernel, as
#             the LARS norms make, overwrites partial sums the first call's threads still
#             read: a race the results alone do not show in the emulator's sequential order)
#   barrier-nhwc: channel_tiles.cuh's tile sums (the channels-last bias gradient of bias.cu;
#             batch norm's old kernels) without their __syncthreads
#   barrier-bn-vec: bn_vec_tiles.cuh's tile sums (the channels-last batch norm) without
#             their __syncthreads
#   layout:   conv2d.cu describes the KCRS weights as KRSC (filter format NHWC)
#   legacy-find: conv2d.cu searches forward algorithms with the legacy Find call, which
#             allocates device memory of its own outside the memory check (risk 7)
#   scaler:   optim.cu's dynamic loss scale doubles without its 2^24 ceiling (risk 5 of #17)
#   labels:   softmax_xent.cu without its label range check (risk 10)
#   pin-cap:  context.cu page-locks at most 8 buffers, as it once did (risk 8)
#   unpin:    context.cu never unregisters its page-locked buffers (the emulator's exit check)
#   retire-reset: the last block leaves its tile's counter as it is (the next launch's count
#             starts off, and its statistics are finished by no block or too early)
#   retire-last: bn_vec_tiles.cuh (the retiring kernels): no group's block sees itself the
#             tile's last (the statistics are never finished: test_ops_gpu's retire checks fail)
#   retire-lanes: bn_vec_tiles.cuh's group sums take threadIdx.x as a warp's lane, as a
#             one-dimensional block would (in the tiles' 2D blocks, narrower than a warp, lanes
#             repeat and some splits are added twice, others never: the retire checks fail)
#   retire-group-reset: a group's last block leaves its group's counter as it is (the next
#             launch's groups finish early or never: the twice-in-a-row retire checks fail)
#   genstats-sum: conv_bn_fprop.cu hands cuDNN one buffer for both statistics (the sum
#             dropped, overwritten by the sum of squares: test_ops_gpu's conv + bn checks fail)
#   genstats-node: conv_bn_fprop.cu's graph without its genstats node (a plain conv, which
#             the engine does not take: the fused checks find the unfused path)
#   genstats-bf16: conv_bn_fprop.cu describes BF16 activations as FP16 (the runtime-fusion
#             engine's emulation takes the graph and reads BF16 bits as FP16: test_ops_gpu's
#             BF16 conv + bn checks fail)
#   genstats-cast: conv_bn_fprop.cu's BF16 graph without the FP32 conv output and its
#             identity (the genstats reads BF16, which no engine documents: the fused checks
#             find the unfused path)
#   tail-drop: residual_tail.cu's backward without the drop path's scale (dconv and dgamma
#             as if every sample were kept: test_ops_gpu's residual tail checks fail)
#   tail-shortcut: residual_tail.cu's backward writes the shortcut's gradient where the
#             route says add (the other reader's gradient dropped)
#   bgrad-sum: bias_act_bgrad.cu's channels-last pass sums the activation's output gradient,
#             not the conv's (the slope dropped from the bias gradient: test_ops_gpu's bias +
#             activation backward + dbias checks fail)
#   sbr-bias: conv_bn_fprop.cu hands the prologue's scale as its bias too (the bias dropped:
#             test_ops_gpu's scale-bias-relu + conv checks fail)
#   sbr-relu: conv_bn_sbr.cu's recompute of the prologue's output (the weight gradient's
#             input) without its ReLU (test_ops_gpu's recomputed scale-bias-relu check fails)
#   sbr-finalize: conv_bn_sbr.cu's finalize writes the prologue's bias as beta, the mean's
#             shift dropped (the finalized scale-and-bias check fails)
#   sbr-bwd-relu: batchnorm_nhwc_vec.cu's backward of a bn applied in a conv's prologue passes
#             every dy, the ReLU's recomputed condition dropped (its backward checks fail)
#   sbr-wgrad-bias: conv_bn_wgrad.cu hands ConvBNwgrad's prologue the scale as its bias too (the
#             fused weight gradient's checks fail)
#   bn-pool-shift: bn_relu_maxpool_nhwc.cu applies the bn without its shift (beta - mean·scale:
#             test_ops_gpu's bn + relu + maxpool checks fail)
#   bn-pool-bits: bn_relu_maxpool_nhwc.cu drops the last bit of each mask byte (the bits check
#             fails)
#   bn-pool-gather: batchnorm_nhwc_vec.cu's stem backward (the pooling's gather folded into
#             the bn's passes) takes only the first window row of an input position that two
#             windows overlap (the other's gradient dropped: test_ops_gpu's fused stem backward
#             checks fail)
#   bnfin-sqsum: bn_finalize_graph.cu hands cuDNN's BN finalize the sums as the sums of squares
#             too (the variance from the wrong statistic: test_ops_gpu's bn finalize checks fail)
#   bnfin-momentum: bn_finalize_graph.cu hands the graph epsilon as its exponential average
#             factor (the momentum dropped: its start-up probe finds the running mean off the
#             spec's and the layer keeps our kernel, which test_ops_gpu's FP16 check refuses)
#   tune-kept: cudnn_graph.cu's timing at start-up keeps the heuristics' first plan's
#             descriptor and destroys the others, the fastest among them, which it still
#             hands back (the fused checks run a destroyed plan: the emulated cuDNN refuses it,
#             or ASan sees the use after free; the emulated heuristics' first is the slow
#             engine, so the fastest is another)
#   sdpa-scale: attention_sdpa.cu hands cuDNN's fused attention a scale of 1, not 1/sqrt(head)
#             (the dropped scale: test_ops_gpu's fused attention checks fail in BF16 and FP16)
#   sdpa-key: attention_sdpa.cu's backward writes dK over dQ (dQ lost)
#   window-mask: window_attention.cu without the -100 between regions of the rolled map (the
#             shifted windows' mask dropped: test_ops_gpu's shift-1 window checks fail)
#   bn-add-branch: bn_add_relu_nhwc.cu adds a projection block's downsample branch without
#             normalizing it (the second bn dropped: test_ops_gpu's projection checks fail)
#   relu-bit: bn_add_relu_nhwc.cu's bitmask variant drops the last bit of each byte (the
#             exact bits check and the fused backward's gradients fail)
#   bwd-branch: bn_add_relu_backward_nhwc.cu's sums pass leaves the projection's second bn out
#             of its dgamma sums (test_ops_gpu's projection backward checks fail)
#   bwd-bits: bn_add_relu_backward_nhwc.cu ignores the ReLU bits (every dz passes)
#   fold-mean: bn_fold_conv1x1_backward.cu's dW without its u S^T term (the bn's mean and sum
#             g folded through conv3 dropped: test_ops_gpu's bn fold dW checks fail)
#   bwd-barrier: its sums pass writes the second bn's tile sums without the barrier after the
#             first's (the shared-memory race check)
#   dgrad-relu: conv_bn_dgrad.cu hands DgradDreluBNBwdWeight gamma as the bn's beta (the
#             ReLU's condition recomputed wrong in the data gradient's epilogue: test_ops_gpu's
#             fused data gradient checks fail)
#   dgrad-dx: conv_bn_dgrad.cu's dx pass drops the dgamma term (the bn's input gradient
#             check after the fused data gradient fails)
#   dw-bias-store: conv2d_depthwise.cu's channels-last forward stores without the bias
#             (test_ops_gpu's nhwc depthwise + bias forward checks fail)
#   dw-bias-lane: its NCHW weight gradient's kernel leaves the last lane out of the bias
#             gradient's sum (test_ops_gpu's depthwise + bias dbias checks fail)
#   dw-bias-pad: its NCHW weight gradient's kernel row 0 skips the outputs whose input row is
#             in the padding, as the weight sums do, and so their dout (the dbias checks fail)
#   ln-bias-warp: layernorm.cu's input gradient with its conv's bias gradient leaves the
#             block's last warp out of the channel sums (test_ops_gpu's nhwc layernorm + conv
#             bias dbias checks fail)
#   ln-bias-round: layernorm.cu reads x + bias unrounded, not as the bias pass stores it
#             (16-bit: test_ops_gpu's layernorm + conv bias "= apart" bit-for-bit checks fail)
#   rank-alone: cudnn_graph_tune.cu makes every rank of several a leader, so each times and
#             keeps its own cuDNN graph engines (a trainer mutant: tests/emu/graph_ranks_emu_test.sh
#             fails; the emulated engines time differently on odd ranks, and the emulated NCCL
#             stops ranks that hold different engines)
#   fold-mean-trainer: the fold-mean mutant in the trainers of tests/emu/bn_fold_emu_test.sh
#             (a trainer mutant: one step's updates leave the --no-bn-fold run's by 31% of the
#             largest, against 1.9% unmutated)
# A trainer mutant (trainer_mutant) is linked into the trainers an emulator test builds
# (EMU_MUTANT_CUDA_ENV, tests/emu/emu_prelude.sh), and that test must fail.
# MUTANTS="name ..." runs only those.
set -u
BUILD=${BUILD:-build}
tmp=$BUILD/emu/mutants
rm -rf "$tmp" && mkdir -p "$tmp"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
status=0
mutant() {  # name, file (under runtime/cuda), perl substitution, compiled file, expected text
  local name=$1 file=$2 subst=$3 unit=$4 want=$5 d=$tmp/$1
  case " ${MUTANTS:-$name} " in *" $name "*) ;; *) return ;; esac
  mkdir -p "$d/cuda/ops" && cp runtime/cuda/*.cu runtime/cuda/*.cuh "$d/cuda/" && cp runtime/cuda/ops/* "$d/cuda/ops/"
  perl -0pi -e "$subst" "$d/cuda/$file"
  if cmp -s "$d/cuda/$file" "runtime/cuda/$file"; then echo "FAIL: mutant $name did not change $file"; status=1; return; fi
  EMU_CXXFLAGS="$san" tests/emu/emu-nvcc -Iruntime/include -DRT_HAVE_NCCL=1 -c "$d/cuda/$unit" -o "$d/mutant.o" &&
    c++ -fopenmp "$BUILD/emu/test_ops_gpu.o" "$d/mutant.o" "$BUILD/emu/libtrainrt_cuda.a" "$BUILD/emu/libcudaemu.a" $san \
      "$BUILD/asan/libtrainrt.a" -lopenblas -lz -lm $(mpicc --showme:link) -lpthread -ldl -lrt -o "$d/test_ops_gpu" ||
    { echo "FAIL: building mutant $name"; status=1; return; }
  (ASAN_OPTIONS=detect_leaks=0 exec "$d/test_ops_gpu") > "$d/log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -q "$want" "$d/log"; then
    echo "caught mutant $name (exit $rc): $(grep -m1 "$want" "$d/log" | cut -c1-160)"
  else
    echo "FAIL: mutant $name was not caught (exit $rc):"; tail -5 "$d/log"; status=1
  fi
}
trainer_mutant() {  # name, file (under runtime/cuda), perl substitution, compiled file, emulator test, expected text
  local name=$1 file=$2 subst=$3 unit=$4 test=$5 want=$6 d=$tmp/$1
  case " ${MUTANTS:-$name} " in *" $name "*) ;; *) return ;; esac
  mkdir -p "$d/cuda/ops" && cp runtime/cuda/*.cu runtime/cuda/*.cuh "$d/cuda/" && cp runtime/cuda/ops/* "$d/cuda/ops/"
  perl -0pi -e "$subst" "$d/cuda/$file"
  if cmp -s "$d/cuda/$file" "runtime/cuda/$file"; then echo "FAIL: mutant $name did not change $file"; status=1; return; fi
  EMU_CXXFLAGS="$san" tests/emu/emu-nvcc -Iruntime/include -DRT_HAVE_NCCL=1 -c "$d/cuda/$unit" -o "$d/mutant.o" ||
    { echo "FAIL: building mutant $name"; status=1; return; }
  sed "s|^CUDA_LIBS=|CUDA_LIBS=$(pwd)/$d/mutant.o |" "$BUILD/emu/cuda.env" > "$d/cuda.env"
  (EMU_MUTANT_CUDA_ENV=$(pwd)/$d/cuda.env BUILD=$BUILD exec bash "tests/emu/$test") > "$d/log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -q "$want" "$d/log"; then
    echo "caught mutant $name ($test exit $rc): $(grep -m1 "$want" "$d/log" | cut -c1-160)"
  else
    echo "FAIL: mutant $name was not caught by $test (exit $rc):"; tail -5 "$d/log"; status=1
  fi
}
mutant index ops/relu.cu 's/out\[i\] = rt_st<T>\(x > 0/out[i + 1] = rt_st<T>(x > 0/' ops/relu.cu "heap-buffer-overflow"
mutant barrier cuda_common.cuh 's/(warp_part\[warp\] = v;\n)    __syncthreads\(\);\n/$1/' ops/softmax_xent.cu "shared-memory race"
mutant barrier-reuse cuda_common.cuh 's/    __syncthreads\(\);   \/\* warp_part may still be read[^\n]*\n//' optim.cu "shared-memory race"
mutant barrier-nhwc ops/channel_tiles.cuh 's/(sb\[threadIdx.y\]\[threadIdx.x\] = b;\n)    __syncthreads\(\);\n/$1/' ops/bias.cu \
  "shared-memory race"
mutant barrier-bn-vec ops/bn_vec_tiles.cuh 's/(lane_sums\[mine \+ 2 \* j \+ 1\] = b\[j\];\n)    __syncthreads\(\);\n/$1/' \
  ops/batchnorm_nhwc_vec.cu "shared-memory race"
mutant layout ops/conv2d.cu 's/cudnnSetFilter4dDescriptor\(c->w, dt, f,/cudnnSetFilter4dDescriptor(c->w, dt, CUDNN_TENSOR_NHWC,/' \
  ops/conv2d.cu "FAIL .*conv"
mutant legacy-find ops/conv2d.cu 's/cudnnFindConvolutionForwardAlgorithmEx\(rt_cudnn\(\), c->x, in, c->w, weight, c->conv, c->y, out, MAXR,\s*&got, fr, workspace, cap\)/cudnnFindConvolutionForwardAlgorithm(rt_cudnn(), c->x, c->w, c->conv, c->y, MAXR, &got, fr)/' \
  ops/conv2d.cu "device memory of its own"
mutant scaler optim.cu 's/fminf\(sc->scale \* 2.0f, SCALER_MAX\)/sc->scale * 2.0f/' optim.cu "FAIL .*loss scale"
mutant labels ops/softmax_xent.cu 's/if \(y < 0 \|\| y >= k\) \{/if (0) {/' ops/softmax_xent.cu "FAIL .*labels"
mutant pin-cap context.cu 's/(void rt_cuda_pin_host\(void \*p, size_t bytes\) \{\n)/$1    if (ctx.n_pinned >= 8) return;\n/' context.cu \
  "FAIL .*page-locked"
mutant unpin context.cu 's/    if \(ctx.n_pinned == 0\) atexit\(unpin_all\);\n//' context.cu "still registered with cudaHostRegister"
mutant bn-add-branch ops/bn_add_relu_nhwc.cu 's/r \+= rt_ld\(b\.e\[v\]\) \* kb \+ hb;/r += rt_ld(b.e[v]);/' \
  ops/bn_add_relu_nhwc.cu "FAIL .*projection"
mutant relu-bit ops/bn_add_relu_nhwc.cu 's/bits\[q\] = \(uint8_t\)m;/bits[q] = (uint8_t)(m & 0x7fu);/' \
  ops/bn_add_relu_nhwc.cu "FAIL .*bits"
mutant bwd-branch ops/bn_add_relu_backward_nhwc.cu 's/if \(PROJ\) s_b\[j\] \+= dy \*/if (0) s_b[j] += dy */' \
  ops/bn_add_relu_backward_nhwc.cu "FAIL .*projection.*backward"
mutant bwd-bits ops/bn_add_relu_backward_nhwc.cu 's/g.bits = bits \? relu_bits_at<V>\(bits, at\) :/g.bits = bits ? (1u << V) - 1u :/' \
  ops/bn_add_relu_backward_nhwc.cu "FAIL .*relu .*backward"
mutant bwd-barrier ops/bn_add_relu_backward_nhwc.cu 's/        __syncthreads\(\);   \/\* the tile sums[^\n]*\n//' \
  ops/bn_add_relu_backward_nhwc.cu "shared-memory race"
mutant fold-mean ops/bn_fold_conv1x1_backward.cu 's/dw\[at\] = a \* go\[i\] \+ uo \* S\[i\];/dw[at] = a * go[i];/' \
  ops/bn_fold_conv1x1_backward.cu "FAIL .*bn fold.*dW"
mutant retire-last ops/bn_vec_tiles.cuh 's/== \(unsigned\)groups - 1\);/== (unsigned)groups);/' ops/batchnorm_nhwc_vec.cu \
  "FAIL .*retire"
mutant retire-reset ops/batchnorm_nhwc_vec.cu 's/(vec_tile_totals<V>\(part, c, \[&\]\(int ch, double a, double b\) \{\n        finish_channel_stats[^\n]*\n    \}\);\n)    if \(threadIdx.x == 0 && threadIdx.y == 0\) counters\[blockIdx.x\] = 0;\n/$1/' \
  ops/batchnorm_nhwc_vec.cu "FAIL .*retire"
mutant genstats-sum ops/conv_bn_fprop.cu 's/out, sums, sums \+ s->oc,/out, sums, sums,/' ops/conv_bn_fprop.cu \
  "FAIL .*conv + bn statistics"
mutant genstats-node ops/conv_bn_fprop.cu 's/ops\[5\] = \{ d\[FWD\], d\[STATS\],/ops[5] = { d[FWD], d[FWD],/' \
  ops/conv_bn_fprop.cu "FAIL .*conv + bn statistics"
mutant genstats-bf16 ops/conv_bn_fprop.cu 's/RT_ACT_BF16 \? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF/RT_ACT_BF16 ? CUDNN_DATA_HALF : CUDNN_DATA_HALF/' \
  ops/conv_bn_fprop.cu "FAIL bf16 conv + bn statistics"
mutant genstats-cast ops/conv_bn_fprop.cu 's/const bool cast = dt == CUDNN_DATA_BFLOAT16;/const bool cast = false;/' \
  ops/conv_bn_fprop.cu "FAIL bf16 conv + bn statistics"
mutant tail-drop ops/residual_tail.cu 's/float gs = g \* d.scale\(i\);/float gs = g;/' ops/residual_tail.cu \
  "FAIL .*residual tail.*dconv"
mutant tail-shortcut ops/residual_tail.cu 's/dres_add \? rt_ld\(dres\[i\]\) \+ g : g/g/' ops/residual_tail.cu \
  "FAIL .*residual tail.*dshortcut"
mutant bgrad-sum ops/bias_act_bgrad.cu 's/acc \+= rt_ld\(d\);/acc += rt_ld(dout[i]);/' ops/bias_act_bgrad.cu \
  "FAIL .*nhwc backward + dbias: dbias"
mutant sbr-bias ops/conv_bn_fprop.cu 's/scale_bias \? \(char \*\)scale_bias \+ 2 \* \(size_t\)s->c : NULL/(void *)scale_bias/' \
  ops/conv_bn_fprop.cu "FAIL .*scale-bias-relu"
mutant sbr-relu ops/conv_bn_sbr.cu 's/out\[i\] = rt_st<T>\(v > 0\.0f \? v : 0\.0f\);/out[i] = rt_st<T>(v);/' ops/conv_bn_sbr.cu \
  "FAIL .*scale-bias-relu (a conv's prologue, recomputed)"
mutant sbr-finalize ops/conv_bn_sbr.cu 's/rt_st<T>\(beta\[ch\] - st\.x \* scale\)/rt_st<T>(beta[ch])/' ops/conv_bn_sbr.cu \
  "FAIL .*finalized: the prologue's scale and bias"
mutant sbr-bwd-relu ops/batchnorm_nhwc_vec.cu 's/\(rt_ld\(g\.x\.e\[j\]\) \* s\[j\] \+ b\[j\] > 0\.0f \? 1u : 0u\)/1u/' \
  ops/batchnorm_nhwc_vec.cu "FAIL .*recomputed from scale and bias backward"
mutant sbr-wgrad-bias ops/conv_bn_wgrad.cu 's/\(void \*\)scale_bias, \(char \*\)scale_bias \+ 2 \* \(size_t\)s->c,/(void *)scale_bias, (void *)scale_bias,/' \
  ops/conv_bn_wgrad.cu "FAIL .*weight gradient.*fused.*dweight"
mutant dgrad-relu ops/conv_bn_dgrad.cu 's/\(void \*\)beta, din, dgamma/(void *)gamma, din, dgamma/' ops/conv_bn_dgrad.cu \
  "FAIL .*data gradient + dReLU.*fused.*output gradient"
mutant dgrad-dx ops/conv_bn_dgrad.cu 's/ - xh \* dgamma\[ch\] \* inv_m;/;/' ops/conv_bn_dgrad.cu \
  "FAIL .*data gradient + dReLU.*fused.*bn dinput"
mutant bn-pool-shift ops/bn_relu_maxpool_nhwc.cu 's/float r = rt_ld\(v\.e\[j\]\) \* scale\[j\] \+ shift\[j\];/float r = rt_ld(v.e[j]) * scale[j];/' \
  ops/bn_relu_maxpool_nhwc.cu "FAIL .*bn + relu + maxpool"
mutant bn-pool-bits ops/bn_relu_maxpool_nhwc.cu 's/bits\[\(img \+ me\) \* cv \+ q\] = \(uint8_t\)m;/bits[(img + me) * cv + q] = (uint8_t)(m \& 0x7fu);/' \
  ops/bn_relu_maxpool_nhwc.cu "FAIL .*bn + relu + maxpool.*bits"
mutant bn-pool-gather ops/batchnorm_nhwc_vec.cu 's/for \(int oy = y0; oy <= y1; oy\+\+\)/for (int oy = y0; oy <= y0; oy++)/' \
  ops/batchnorm_nhwc_vec.cu "FAIL .*bn + relu + maxpool.*backward"
mutant bnfin-sqsum ops/bn_finalize_graph.cu 's/fin_ptrs p = \{ sums, sums \+ c, gamma,/fin_ptrs p = { sums, sums, gamma,/' \
  ops/bn_finalize_graph.cu "FAIL .*bn finalize \[cuDNN's graph\]"
mutant bnfin-momentum ops/bn_finalize_graph.cu 's/&eps, &momentum, &count/&eps, &eps, &count/' ops/bn_finalize_graph.cu \
  "FAIL .*bn finalize .*expected cuDNN's BN finalize graph: cuDNN's BN finalize gives running mean"
mutant sdpa-scale ops/attention_sdpa.cu 's/a->scale = \(float\)\(1\.0 \/ sqrt\(\(double\)\(c \/ heads\)\)\);/a->scale = 1.0f;/' \
  ops/attention_sdpa.cu "FAIL .*attention sdpa"
mutant sdpa-key ops/attention_sdpa.cu 's/do16, dq16, dq16 \+ c \* e,/do16, dq16, dq16,/' ops/attention_sdpa.cu \
  "FAIL .*attention sdpa"
mutant retire-lanes ops/bn_vec_tiles.cuh 's/lane = t & 31;/lane = threadIdx.x & 31;/' \
  ops/batchnorm_nhwc_vec.cu "FAIL .*retire"
mutant retire-group-reset ops/bn_vec_tiles.cuh 's/    if \(threadIdx.x == 0 && threadIdx.y == 0\) \*group_count = 0;\n//' \
  ops/batchnorm_nhwc_vec.cu "FAIL .*retire"
mutant tune-kept ops/cudnn_graph.cu 's/if \(i != best\) cudnnBackendDestroyDescriptor\(plan\[i\]\);/if (i != 0) cudnnBackendDestroyDescriptor(plan[i]);/' \
  ops/cudnn_graph.cu "failed at .*cudnn_graph.cu:.*CUDNN_STATUS_BAD_PARAM\|heap-use-after-free"
mutant window-mask ops/window_attention.cu 's/\(g\.shift && ri != rj \? -100\.0f : 0\.0f\)/0.0f/' \
  ops/window_attention.cu "FAIL .*window attention 6x9 window 3 shift 1"
mutant dw-bias-store ops/conv2d_depthwise.cu 's/const float be = bias\[c0 \+ e\];/const float be = 0.0f;/' \
  ops/conv2d_depthwise.cu "FAIL .*nhwc depthwise.* + bias \[depthwise\] forward"
mutant dw-bias-lane ops/conv2d_depthwise.cu 's/for \(int l = 0; l < lanes; l\+\+\) sum \+= lane_sums\[l\]\[0\];/for (int l = 0; l < lanes - 1; l++) sum += lane_sums[l][0];/' \
  ops/conv2d_depthwise.cu "FAIL .*depthwise.* + bias \[depthwise\] dbias"
mutant dw-bias-pad ops/conv2d_depthwise.cu 's/if \(!row_in && !sums_bias\) continue;/if (!row_in) continue;/' \
  ops/conv2d_depthwise.cu "FAIL .*depthwise.* + bias \[depthwise\] dbias"
mutant ln-bias-warp ops/layernorm.cu 's/for \(int k = 0; k < LN_BGRAD_WARPS; k\+\+\) t \+= acc/for (int k = 0; k < LN_BGRAD_WARPS - 1; k++) t += acc/' \
  ops/layernorm.cu "FAIL .*layernorm + conv bias nhwc .* dbias"
mutant ln-bias-round ops/layernorm.cu 's/return xb \? rt_ld\(rt_st<T>\(rt_ld\(x\[i\]\) \+ xb\[ch\]\)\)/return xb ? rt_ld(x[i]) + xb[ch]/' \
  ops/layernorm.cu "FAIL bf16 layernorm + conv bias .* = apart"
trainer_mutant rank-alone ops/cudnn_graph_tune.cu \
  's/return rt_comm_rank\(agreeing\) == 0 \? GRAPH_LEADER : GRAPH_FOLLOWER;/return GRAPH_LEADER;/' ops/cudnn_graph_tune.cu \
  graph_ranks_emu_test.sh "hold different cuDNN graph engines"
trainer_mutant fold-mean-trainer ops/bn_fold_conv1x1_backward.cu \
  's/dw\[at\] = a \* go\[i\] \+ uo \* S\[i\];/dw[at] = a * go[i];/' ops/bn_fold_conv1x1_backward.cu \
  bn_fold_emu_test.sh "FAIL: one step: the fold.s updates"
exit $status
