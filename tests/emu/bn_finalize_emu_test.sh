#!/usr/bin/env bash
# cuDNN's BN finalize graph (lower: fuse_bn_finalize.c ir_op.bn_fin_graph; runtime:
# bn_finalize_graph.cu; emulator: emu_cudnn_bnfin.inc) in whole trainers under the emulator:
# the ResNet example at 8x8 in FP16 channels-last, 4 steps. Every bn whose sums a conv's
# genstats epilogue writes finalizes them through the graph (mean, inv std, running
# statistics, and for a bn in the next conv's prologue that prologue's scale and bias):
# model.c calls cuda_bn_finalize_stats / cuda_bn_finalize_scale_bias for each, and none with
# --no-bn-finalize-graph (our kernels: cuda_conv_bn_stats, cuda_conv_bn_stats_scale_bias); no
# layer falls back. The two trainers' first losses agree within 1e-5 and the next three within
# 2e-2: both finalize the same FP32 sums, ours in double from sums shifted by the running
# mean, the graph in FP32 as E[x²] - E[x]², so mean and inv std differ in their last bits,
# which now and then flips the FP16 rounding of a prologue's scale or bias; batch 4 of 8x8
# images compounds that over the steps (the bound conv_sbr_emu_test.sh and the fallback below
# hold too; test_ops_gpu holds the graph's statistics to the CPU op's). Where the conv's
# genstats graph is refused (a workspace
# cap of 0 MiB, below its emulated plan's 1 KiB), the trainer names the finalize's fallback
# too and trains within 2e-2 of the fused run. test_ops_gpu checks the graph against the CPU
# op (tests/gpu/test_bn_finalize.inc; tests/emu/mutants.sh's bnfin-* mutants show it failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-bn-finalize
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\nprecision { compute: FP16 }\n' "$(pwd)" \
  'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } }
  val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' > "$out/resnet_fp16.spec"

emu_run fin resnet_fp16 --backend cuda --layout nhwc && emu_run nofin resnet_fp16 --backend cuda --layout nhwc --no-bn-finalize-graph ||
  exit 1
count() { grep -c "$1" "$2" || true; }
want=$("$BUILD/trainc" show --schedule --backend cuda --layout nhwc "$out/resnet_fp16.spec" | grep -c "finalized by cuDNN's BN finalize graph")
src=$out/fin.src/model.c
st=$(count '^ *cuda_bn_finalize_stats(' "$src"); sb=$(count '^ *cuda_bn_finalize_scale_bias(' "$src")
[ "$want" -gt 0 ] && [ $((st + sb)) = "$want" ] && [ "$sb" -gt 0 ] &&
  echo "fp16 nhwc: $want bns finalize through cuDNN's BN finalize graph ($sb into the next conv's prologue)" ||
  fail "model.c: $st + $sb BN finalize calls; show --schedule says $want"
[ "$(count 'cuda_bn_finalize_' "$out/nofin.src/model.c")" = 0 ] || fail "--no-bn-finalize-graph: model.c still calls the graph"
grep -q 'unfused' "$out/fin.log" && fail "the fused trainer fell back: $(grep -m1 unfused "$out/fin.log")"
r=$("$PY" tests/gpu/compare_runs.py "$out/fin.run/metrics.jsonl" "$out/nofin.run/metrics.jsonl" 1e-5 1 2>&1) &&
  echo "BN finalize graph, the first step: $(echo "$r" | head -1)" || { fail "BN finalize graph, the first step:"; echo "$r"; }
emu_compare "BN finalize graph (fp16 nhwc) against --no-bn-finalize-graph" fin nofin 2e-2

# the conv's genstats graph refused (no workspace): the finalize falls back, saying why
if TRAINC_CUDNN_WORKSPACE_MB=0 EMU_SCHEDULE=1 "$out/fin" --out "$out/refused.run" > "$out/refused.log" 2>&1; then
  grep -q "batch-norm finalize (cuDNN's BN finalize graph) unfused .*the conv that sums its input runs unfused" "$out/refused.log" &&
    echo "refused: $(grep -m1 "BN finalize graph) unfused" "$out/refused.log" | cut -c1-160)" ||
    fail "refused: the trainer did not name the finalize's fallback"
  emu_compare "BN finalize refused, our kernels, against the fused run" refused fin 2e-2
else
  fail "the trainer with cuDNN's graphs refused did not run:"; tail -5 "$out/refused.log"
fi
[ $status = 0 ] && echo "cuDNN's BN finalize graph in emulated CUDA trainers: ok"
exit $status
