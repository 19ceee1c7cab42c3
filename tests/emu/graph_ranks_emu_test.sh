#!/usr/bin/env bash
# The cuDNN graphs' engines with two MPI ranks under the emulator (runtime/cuda/ops/
# cudnn_graph_tune.cu, graph_plan in cudnn_graph.cu): rank 0 times the candidates at start-up
# and every rank runs rank 0's choice, as the plain convs run rank 0's algorithms. The spec is
# graph_autotune_emu_test.sh's (the ResNet example at 8x8, FP16 channels-last: conv + genstats
# with and without the prologue, ConvBNwgrad, DgradDreluBNBwdWeight, BN finalize) with
# parallel.ranks 2. The emulated engines time differently on even and odd ranks
# (emu_cudnn_graph.cpp EMU_ENGINES: rank 0 would keep engine 41, rank 1 engine 43), so ranks
# that chose alone would differ; the emulated NCCL compares the graph plans each rank holds and
# stops such a run. Checked: rank 0 says, once per graph kind, that it timed 3 candidates and
# every rank runs its choice; rank 1 says it runs that same engine, rank 0's, and times none;
# nothing falls back unfused; and the losses and final checkpoint are bit-identical with the
# two-rank run of --no-graph-autotune (rank 0's heuristics' first on every rank, said by
# nobody): the emulated engines compute alike. tests/emu/mutants.sh's rank-alone mutant (every
# rank picks its own engines) fails this test.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-graph-ranks
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\nparallel { ranks: 2 }\nprecision { compute: FP16 }\n' \
  "$(pwd)" \
  'data { train { source: "synthetic" samples: 32 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } }
  val { source: "synthetic" batch_per_rank: 4 } val_samples: 8 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' > "$out/resnet_2r.spec"
mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
     mpirun -np 2 --oversubscribe -x EMU_SCHEDULE=1)
run2() {  # tag [trainc flags...]: builds $out/TAG from the spec and runs it on two ranks
  local tag=$1; shift
  "$BUILD/trainc" build "$out/resnet_2r.spec" -o "$out/$tag" --backend cuda --layout nhwc "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  "${mpi[@]}" "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 ||
    { fail "$tag: the two-rank run"; grep -m4 'error' "$out/$tag.log" | cut -c1-300; tail -5 "$out/$tag.log"; return 1; }
}
run2 tuned && run2 heur --no-graph-autotune || exit 1
grep -q 'unfused' "$out/tuned.log" && fail "the timed trainer fell back: $(grep -m1 unfused "$out/tuned.log")"
for kind in 'conv -> genstats' 'scale-bias-ReLU -> wgrad' 'dgrad -> dReLU -> dBN weights' 'BN finalize'; do
  r0=$(grep -F "warning: rank 0: cuDNN graph $kind: engine" "$out/tuned.log")
  r1=$(grep -F "warning: rank 1: cuDNN graph $kind: engine" "$out/tuned.log")
  e0=$(printf '%s\n' "$r0" | sed -n 's/.*: engine \([0-9]*\) timed fastest of 3 candidates.*every rank runs rank 0.s choice$/\1/p')
  e1=$(printf '%s\n' "$r1" | sed -n "s/.*: engine \([0-9]*\), rank 0's choice (timed there fastest of 3 candidates at start-up).*/\1/p")
  if [ -z "$e0" ] || [ "$(printf '%s\n' "$r0" | wc -l)" != 1 ]; then
    fail "$kind: rank 0 does not say once that it timed 3 candidates for every rank: ${r0:-nothing}"
  elif [ -z "$e1" ] || [ "$(printf '%s\n' "$r1" | wc -l)" != 1 ]; then
    fail "$kind: rank 1 does not say once that it runs rank 0's timed choice: ${r1:-nothing}"
  elif [ "$e0" != "$e1" ]; then
    fail "$kind: rank 0 timed engine $e0 fastest, rank 1 runs engine $e1"
  else
    echo "$kind: rank 0 timed engine $e0 fastest of 3; rank 1 runs engine $e1, rank 0's"
  fi
  grep -F "rank 1: cuDNN graph $kind:" "$out/tuned.log" | grep -q 'timed fastest' && fail "$kind: rank 1 timed candidates itself"
  grep -qF "cuDNN graph $kind:" "$out/heur.log" && fail "--no-graph-autotune: $kind still timed or reported"
done
same() {  # run a, run b: losses and final checkpoint bit-identical
  local la lb ckpt_a ckpt_b
  la=$(grep -o '"loss":[^,]*' "$out/$1.run/metrics.jsonl") && lb=$(grep -o '"loss":[^,]*' "$out/$2.run/metrics.jsonl") &&
    [ -n "$la" ] && [ "$la" = "$lb" ] && ckpt_a=$(ls "$out/$1.run"/checkpoints/ckpt-*.bin | tail -1) &&
    ckpt_b=$(ls "$out/$2.run"/checkpoints/ckpt-*.bin | tail -1) && [ "${ckpt_a##*/}" = "${ckpt_b##*/}" ] && cmp -s "$ckpt_a" "$ckpt_b"
}
if same tuned heur; then
  echo "two ranks, rank 0's timed engines against its heuristics' first: losses of $(grep -c '"loss"' "$out/tuned.run/metrics.jsonl") records and the final checkpoint bit-identical"
else
  fail "two ranks: the timing changed the run: losses or final checkpoint differ from --no-graph-autotune"
fi
[ $status = 0 ] && echo "cuDNN graphs' engines agreed on rank 0's with two emulated ranks: ok"
exit $status
