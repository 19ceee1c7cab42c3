#!/usr/bin/env bash
# The GPU suite's op mix (tests/gpu/specs/ops_mix.spec: dropout, stochastic depth and every
# fused kernel) under the emulator, built fused and --no-fuse, against the CPU trainer on the
# same spec: losses within 1e-4 relative for 4 steps. A mask drawn with another salt or index
# than the CPU's shows at step 1: the first H100 run found the salts were op indices, which
# fusion makes differ between backends (2e-2 apart there), and nothing here compared them.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-masks
status=0
printf 'extends: "%s/tests/gpu/specs/ops_mix.spec"\ndata { train { samples: 32 batch_per_rank: 8 } val { batch_per_rank: 8 } val_samples: 8 }\n' "$(pwd)" \
  > "$out/mix.spec"
"$BUILD/trainc" build "$out/mix.spec" -o "$out/cpu" > "$out/cpu.build" 2>&1 && "$out/cpu" --out "$out/cpu.run" > "$out/cpu.log" 2>&1 ||
  { echo "FAIL: the CPU trainer"; tail -20 "$out/cpu.build" "$out/cpu.log"; exit 1; }
for flags in "" --no-fuse; do
  tag=emu${flags:+-unfused}
  "$BUILD/trainc" build "$out/mix.spec" -o "$out/$tag" --backend cuda $flags > "$out/$tag.build" 2>&1 ||
    { fail "trainc build --backend cuda $flags"; tail -20 "$out/$tag.build"; continue; }
  # the fused run also brackets its step 2 with the profiler API (bench/gpu_kernel_profile.sh)
  prof=(); [ -z "$flags" ] && prof=(env TRAINC_CUDA_PROFILE_STEP=2)
  "${prof[@]}" "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 ||
    { fail "the emulated run $flags"; tail -25 "$out/$tag.log"; continue; }
  r=$("$PY" tests/gpu/compare_runs.py "$out/$tag.run/metrics.jsonl" "$out/cpu.run/metrics.jsonl" 1e-4 2>&1) &&
    echo "ops_mix ${flags:-fused} vs CPU (1e-4): $(echo "$r" | head -1)" || { fail "ops_mix ${flags:-fused} vs CPU:"; echo "$r"; }
done
[ $status = 0 ] && echo "dropout and drop-path masks: the emulated CUDA trainers draw the CPU's"
exit $status
