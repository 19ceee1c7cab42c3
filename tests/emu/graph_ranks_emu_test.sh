#!/usr/bin/env bash
# The cuDNN graphs' engines with two MPI ranks under the emulator (runtime/cuda/ops/
# cudnn_graph_tune.cu, graph_plan in cudnn_graph.cu): rank 0 times the candidates at start-up
# and every rank runs rank 0's choice, as the plain convs run rank 0's algorithms. The spec is
# graph_autotune_emu_test.sh's (the ResNet example at 8x8, FP16 channels-last: conv + genstats
# with and without the prologue, ConvBNwgrad, DgradDreluBNBwdWeight, BN finalize) with
# parallel.ranks 2. The emulated engines time differently on even and odd ranks
# (emu_cudnn_graph.cpp EMU_ENGINES: rank 0 would keep engine 41, rank 1 engine 43), so ranks
# that chose alone would differ; the emulated NCCL compares the graph plans each rank holds and
# stops such a run. Checked: rank 0 says, once per graph kind, that it timed 3 candidates for
# every rank; rank 1 says it runs that same engine, rank 0's, and times none;
# nothing falls back unfused; and the losses and final checkpoint are bit-identical with the
# two-rank run of --no-graph-autotune (rank 0's heuristics' first on every rank, said by
# nobody): the emulated engines compute alike. Then the same trainer where one rank's emulated
# cuDNN refuses engines (EMU_GRAPH_REFUSE): rank 1 refusing rank 0's choice, and rank 0 with no
# candidate at all; every rank still takes part in every graph's exchange, and every rank runs
# those graphs unfused, saying why. Last, ranks on different GPU models, which build different
# graphs, stop with one message. tests/emu/mutants.sh's rank-alone mutant (every rank picks
# its own engines) fails this test.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-graph-ranks
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\nparallel { ranks: 2 }\nprecision { compute: FP16 }\n' \
  "$(pwd)" \
  'data { train { source: "synthetic" samples: 32 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } }
  val { source: "synthetic" batch_per_rank: 4 } val_samples: 8 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' > "$out/resnet_2r.spec"
mpi_base=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
          timeout 300 mpirun --oversubscribe -x EMU_SCHEDULE=1)
mpi=("${mpi_base[@]}" -np 2)
run2() {  # tag [trainc flags...]: builds $out/TAG from the spec and runs it on two ranks
  local tag=$1; shift
  "$BUILD/trainc" build "$out/resnet_2r.spec" -o "$out/$tag" --backend cuda --layout nhwc "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  "${mpi[@]}" --output-filename "$out/$tag.ranks" "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 ||
    { fail "$tag: the two-rank run"; cat "$out/$tag.ranks"/1/rank.*/stderr | grep -m4 'error' | cut -c1-300; return 1; }
}
run2 tuned && run2 heur --no-graph-autotune || exit 1
rank_err() { cat "$out/$1.ranks/1/rank.$2/stderr"; }   # tag, rank: its stderr whole (the mixed log may split lines)
cat "$out/tuned.ranks"/1/rank.*/stderr | grep -q 'unfused' && fail "the timed trainer fell back: $(grep -m1 unfused "$out/tuned.log")"
for kind in 'conv -> genstats' 'scale-bias-ReLU -> wgrad' 'dgrad -> dReLU -> dBN weights' 'BN finalize'; do
  r0=$(rank_err tuned 0 | grep -F "warning: rank 0: cuDNN graph $kind: engine")
  r1=$(rank_err tuned 1 | grep -F "warning: rank 1: cuDNN graph $kind: engine")
  e0=$(printf '%s\n' "$r0" | sed -n 's/.*: engine \([0-9]*\) timed fastest of 3 candidates.*; rank 0 times for every rank$/\1/p')
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
  rank_err tuned 1 | grep -F "cuDNN graph $kind:" | grep -q 'timed fastest' && fail "$kind: rank 1 timed candidates itself"
  cat "$out/heur.ranks"/1/rank.*/stderr | grep -qF "cuDNN graph $kind:" && fail "--no-graph-autotune: $kind still timed or reported"
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
# A rank whose cuDNN cannot run rank 0's choice, and a rank 0 with no candidate at all (the
# emulated cuDNN of one rank refuses to finalize the engines EMU_GRAPH_REFUSE lists): every rank
# takes part in every graph's exchange, so the run neither hangs nor dies; every rank runs those
# graphs unfused and says why (the emulated NCCL would stop ranks holding different plans).
refused() {  # tag, rank 0's EMU_GRAPH_REFUSE, rank 1's, rank 0's expected reason, rank 1's
  "${mpi_base[@]}" --output-filename "$out/$1.ranks" -np 1 env EMU_SCHEDULE=1 EMU_GRAPH_REFUSE="$2" "$out/tuned" --out "$out/$1.run" : \
    -np 1 env EMU_SCHEDULE=1 EMU_GRAPH_REFUSE="$3" "$out/tuned" --out "$out/$1.run" > "$out/$1.log" 2>&1 ||
    { fail "$1: the two-rank run (rank 0 refusing engines '$2', rank 1 '$3')"; cat "$out/$1.ranks"/1/rank.*/stderr |
      grep -m4 'error' | cut -c1-300; return; }
  local r want
  for r in 0 1; do
    want=$4; [ $r = 1 ] && want=$5
    rank_err "$1" $r | grep -q "^warning: rank $r: conv + batch-norm statistics unfused .*$want" ||
      fail "$1: rank $r does not say the fused conv runs unfused because $want: $(rank_err "$1" $r | grep -m1 "conv + batch-norm statistics")"
  done
  rank_err "$1" 1 | grep -q "cuDNN graph .*: engine" && fail "$1: rank 1 runs a graph engine: $(rank_err "$1" 1 | grep -m1 "cuDNN graph")"
  echo "$1: every rank runs the graphs unfused: $(rank_err "$1" 0 | grep -m1 "conv + batch-norm statistics unfused" | sed 's/.*): //' | cut -c1-110)"
}
# (rank 1 refuses every emulated engine: whichever rank 0 times fastest under the machine's load)
refused rank1-refuses "" 40,41,42,43,44 "rank 1 cannot run rank 0's engine 4[0-4] for conv -> genstats" \
  "this rank's cuDNN does not finalize rank 0's engine 4[0-4] for conv -> genstats .*every rank runs it unfused"
refused rank0-none 40,41,42,43,44 "" "cuDNN finalizes no plan for conv -> genstats" "rank 0 has no plan for conv -> genstats"
# Ranks that build different graphs: a job on mixed GPU models, where rank 1's device
# (EMU_DEVICE_CC=7.5) has no ConvBNfprop engine, so it builds no conv -> genstats graph where
# rank 0 builds one. The graph exchange must stop every rank with one message naming the graph,
# not hang in mismatched collectives nor run with different plans.
"${mpi_base[@]}" --output-filename "$out/mixed.ranks" -np 1 env EMU_SCHEDULE=1 "$out/tuned" --out "$out/mixed.run" : \
  -np 1 env EMU_SCHEDULE=1 EMU_DEVICE_CC=7.5 "$out/tuned" --out "$out/mixed.run" > "$out/mixed.log" 2>&1
mixed=$?
if [ $mixed = 0 ] || [ $mixed = 124 ]; then
  fail "mixed GPU models: the two-rank run ended with status $mixed, where a stop was due"
elif ! rank_err mixed 0 | grep -q "^error: cuDNN graphs: another rank builds a different graph, or none, where rank 0 builds its cuDNN graph #1 (conv -> genstats)" ||
     ! rank_err mixed 0 | grep -q "^HINT: run every rank with the same trainer on the same GPU model and cuDNN version"; then
  fail "mixed GPU models: rank 0 does not name the graph the ranks differ on: $(cat "$out/mixed.ranks"/1/rank.*/stderr | grep -m2 error | cut -c1-300)"
elif [ "$(cat "$out/mixed.ranks"/1/rank.*/stderr | grep -c '^error')" != 1 ]; then
  fail "mixed GPU models: not one error message: $(cat "$out/mixed.ranks"/1/rank.*/stderr | grep '^error' | cut -c1-200)"
else
  echo "mixed GPU models: stopped (status $mixed): $(rank_err mixed 0 | grep -m1 '^error' | cut -c1-150)"
fi
[ $status = 0 ] && echo "cuDNN graphs' engines agreed on rank 0's with two emulated ranks: ok"
exit $status
