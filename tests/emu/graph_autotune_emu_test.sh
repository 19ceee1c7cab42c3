#!/usr/bin/env bash
# The cuDNN graphs' engine timing at start-up (runtime/cuda/ops/cudnn_graph_tune.cu; lower:
# schedule.graph_candidates, --no-graph-autotune) in whole trainers under the emulator: the
# ResNet example at 8x8 in FP16 channels-last (conv + genstats with and without the
# scale-bias-ReLU prologue, ConvBNwgrad, DgradDreluBNBwdWeight, BN finalize), 4 steps. The
# emulated heuristics offer five configurations per graph (emu_cudnn_graph.cpp EMU_ENGINES:
# the first slow, three runtime-compiled, one over any workspace cap), so the timing has
# candidates: the trainer says, once per graph kind, that it timed 3 (the one over the cap
# never a candidate, the third runtime-compiled one skipped) and kept another than the
# heuristics' first. The emulated engines compute alike, so the timing must change nothing:
# the losses and the final checkpoint (every parameter and running statistic) are
# bit-identical with --no-graph-autotune (the heuristics' first, untimed, which model.c asks
# for with rt_cuda_graph_autotune(0)). The timing runs on scratch in the activation arena,
# never on the run's state: a mutant runtime that lends it the parameters instead (the
# timing zeroes them) must differ, which shows the comparison can fail. tests/emu/mutants.sh's
# tune-kept mutant (the chosen plan destroyed, another kept) shows test_ops_gpu failing.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-graph-autotune
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\nprecision { compute: FP16 }\n' "$(pwd)" \
  'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } }
  val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' > "$out/resnet_fp16.spec"

emu_run tuned resnet_fp16 --backend cuda --layout nhwc && emu_run heur resnet_fp16 --backend cuda --layout nhwc --no-graph-autotune ||
  exit 1
grep -q '^ *rt_cuda_graph_autotune(4);' "$out/tuned.src/model.c" && grep -q '^ *rt_cuda_graph_autotune(0);' "$out/heur.src/model.c" ||
  fail "model.c does not carry lower's choice (rt_cuda_graph_autotune(4) / (0))"
"$BUILD/trainc" show --schedule --backend cuda --layout nhwc "$out/resnet_fp16.spec" | grep -q 'timed at start-up among up to 4' ||
  fail "show --schedule does not say the graphs' engines are timed"
grep -q 'unfused' "$out/tuned.log" && fail "the timed trainer fell back: $(grep -m1 unfused "$out/tuned.log")"
for kind in 'conv -> genstats' 'scale-bias-ReLU -> wgrad' 'dgrad -> dReLU -> dBN weights' 'BN finalize'; do
  line=$(grep -F "cuDNN graph $kind: engine" "$out/tuned.log")
  case "$line" in
    *"timed fastest of 3 candidates"*"1 more runtime-compiled engine skipped"*)
      [ "$(printf '%s\n' "$line" | wc -l)" = 1 ] && echo "$(echo "$line" | cut -c10-150)" || fail "$kind: reported more than once" ;;
    *) fail "$kind: no report of 3 timed candidates: ${line:-nothing}" ;;
  esac
  grep -qF "cuDNN graph $kind:" "$out/heur.log" && fail "--no-graph-autotune: $kind still timed"
done
same() {  # what, run a, run b: losses and final checkpoint bit-identical
  cmp -s <(grep -o '"loss":[^,]*' "$out/$2.run/metrics.jsonl") <(grep -o '"loss":[^,]*' "$out/$3.run/metrics.jsonl") &&
    [ -n "$(grep -o '"loss":[^,]*' "$out/$2.run/metrics.jsonl")" ] && ckpt_a=$(ls "$out/$2.run"/checkpoints/ckpt-*.bin | tail -1) &&
    ckpt_b=$(ls "$out/$3.run"/checkpoints/ckpt-*.bin | tail -1) && [ "${ckpt_a##*/}" = "${ckpt_b##*/}" ] && cmp -s "$ckpt_a" "$ckpt_b"
}
if same "" tuned heur; then
  echo "timed against the heuristics' first: losses of $(grep -c '"loss"' "$out/tuned.run/metrics.jsonl") steps and the final checkpoint bit-identical"
else
  fail "the timing changed the run: losses or final checkpoint differ from --no-graph-autotune"
fi

# The mutant: the timing lent the parameters instead of the arena (it zeroes its scratch).
m=$out/mutant && mkdir -p "$m"
sed 's/rt_cuda_graph_tune_scratch(rt_dev.arena, arena_bytes);/rt_cuda_graph_tune_scratch(rt_dev.P, sizeof(float) * n_params);/' \
  runtime/cuda/model_host.cu > "$m/model_host.cu"
if cmp -s "$m/model_host.cu" runtime/cuda/model_host.cu; then
  fail "mutant: the substitution no longer applies to model_host.cu"
else
  env_of() { sed -n "s/^$1=//p" "$BUILD/emu/cuda.env"; }
  $(env_of NVCC) $(env_of NVCC_FLAGS) -Iruntime/cuda -Iruntime/include -DRT_HAVE_NCCL=1 -c "$m/model_host.cu" \
    -o "$m/model_host.o" > "$m/build.log" 2>&1 || { fail "mutant: compiling model_host.cu"; tail -n 5 "$m/build.log"; }
  sed "s|^CUDA_LIBS=|CUDA_LIBS=$(pwd)/$m/model_host.o |" "$BUILD/emu/cuda.env" > "$m/cuda.env"
  if TRAINC_CUDA_ENV=$(pwd)/$m/cuda.env "$BUILD/trainc" build "$out/resnet_fp16.spec" -o "$out/mut" --backend cuda --layout nhwc \
       > "$out/mut.build" 2>&1 && EMU_SCHEDULE=1 "$out/mut" --out "$out/mut.run" > "$out/mut.log" 2>&1; then
    same "" mut heur && fail "mutant (timing on the parameters) not caught: the runs are alike" ||
      echo "caught mutant tune-state (the timing zeroes the parameters): the losses or checkpoint differ"
  else
    fail "mutant: build or run failed"; tail -n 5 "$out/mut.build" "$out/mut.log"
  fi
fi
[ $status = 0 ] && echo "cuDNN graphs' engine timing in emulated CUDA trainers: ok"
exit $status
