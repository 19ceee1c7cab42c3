#!/usr/bin/env bash
# Caffe's per-blob multipliers end to end, in trained weights (the params_hash of the run's
# summary): (1) lr_mult 2 and decay_mult 0.5 at base LR 0.05 and weight decay 0.02 train
# bit for bit like no multipliers at 0.1 and 0.01 (plain SGD, a constant LR: the products are
# exact in float); (2) lr_mult 0 everywhere leaves every weight as it started (1 step and 3
# steps end at the same hash, which a control with multipliers 1 does not); (3) the CUDA
# backend under the emulator (tests/emu) trains a net with every Caffe feature (multipliers,
# frozen tensors, frozen BN statistics, LRN within a channel, bn affine: false, ceil-mode max
# and avg pooling, the inv policy with Caffe's SGD form, lr_in_velocity; then Caffe's Adam, RMSProp, AdaGrad and AdaDelta) to the CPU trainer's losses within 1e-4 relative, and
# refuses frozen BN statistics in channels-last layout at build.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
TRAINC=$root/$BUILD/trainc
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

spec() {  # file, conv fields, linear fields, solver fields
  cat >"$1" <<SPEC
name: "mults"
net {
  input_shape: [1, 12, 12]
  conv { name: "c1" out: 4 kernel: 3 $2 }
  relu {}
  maxpool { kernel: 2 }
  flatten {}
  linear { name: "fc" out: 10 $3 }
}
data { train { source: "synthetic" samples: 24 batch_per_rank: 8 } val { source: "synthetic" batch_per_rank: 8 } val_samples: 8 }
solver { log_every: 1 checkpoint { every_epochs: 0 } $4 }
SPEC
}
hash_of() {  # spec -> the final params_hash (builds and runs it)
  local s=$1
  "$TRAINC" build "$s" -o "${s%.spec}" >"${s%.spec}.build.log" 2>&1 || { fail "build $s:"; tail -5 "${s%.spec}.build.log"; return; }
  "${s%.spec}" --out "${s%.spec}.run" >"${s%.spec}.log" 2>&1 || { fail "run $s:"; tail -5 "${s%.spec}.log"; return; }
  "$PY" -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_hash"])' \
    "${s%.spec}.run/metrics.jsonl"
}

m='lr_mult: [2, 2] decay_mult: [0.5, 0.5]'
spec "$tmp/mult.spec" "$m" "$m" 'iterations: 3 sgd { momentum: 0 weight_decay: 0.02 } lr { base: 0.05 }'
spec "$tmp/plain.spec" "" "" 'iterations: 3 sgd { momentum: 0 weight_decay: 0.01 } lr { base: 0.1 }'
a=$(hash_of "$tmp/mult.spec"); b=$(hash_of "$tmp/plain.spec")
[ -n "$a" ] && [ "$a" = "$b" ] && echo "lr_mult 2, decay_mult 0.5 at LR 0.05, wd 0.02 = LR 0.1, wd 0.01: params $a" \
  || fail "multipliers: params $a, the same run at the products $b"

f='lr_mult: [0, 0]'
for steps in 1 3; do
  spec "$tmp/frozen$steps.spec" "$f" "$f" "iterations: $steps sgd { momentum: 0.9 weight_decay: 0.01 } lr { base: 0.1 }"
  spec "$tmp/control$steps.spec" "" "" "iterations: $steps sgd { momentum: 0.9 weight_decay: 0.01 } lr { base: 0.1 }"
done
f1=$(hash_of "$tmp/frozen1.spec"); f3=$(hash_of "$tmp/frozen3.spec")
c1=$(hash_of "$tmp/control1.spec"); c3=$(hash_of "$tmp/control3.spec")
[ -n "$f1" ] && [ "$f1" = "$f3" ] && [ "$c1" != "$c3" ] && echo "lr_mult 0: params $f1 after 1 and 3 steps (control: $c1, $c3)" \
  || fail "lr_mult 0: params $f1 after 1 step, $f3 after 3 (control $c1, $c3)"

# (3) the CUDA backend, executed by the emulator of tests/emu
if [ -f /usr/local/cuda/include/cuda_runtime.h ] && nice make -s emu BUILD="$BUILD" >"$tmp/emu.make.log" 2>&1; then
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  cat >"$tmp/all.spec" <<'SPEC'
name: "caffe_emu"
net {
  input_shape: [1, 12, 12]
  conv { name: "c1" out: 4 kernel: 3 lr_mult: [1, 2] decay_mult: [1, 0] }
  bn { name: "bn0" use_global_stats: true }
  lrn { name: "within" region: WITHIN_CHANNEL size: 3 alpha: 1.0 beta: 0.75 }
  bn { name: "bn1" affine: false }
  relu {}
  avgpool { kernel: 3 stride: 2 ceil_mode: true }
  maxpool { kernel: 2 stride: 2 ceil_mode: true }
  flatten {}
  linear { name: "fc1" out: 16 lr_mult: [0, 0] }
  relu {}
  linear { name: "fc2" out: 10 lr_mult: [2, 0] decay_mult: [0.5, 0] }
}
data { train { source: "synthetic" samples: 24 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }
solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 weight_decay: 0.01 lr_in_velocity: true } lr { base: 0.05 schedule { inv { gamma: 0.1 power: 0.75 } } } }
SPEC
  "$TRAINC" build "$tmp/all.spec" -o "$tmp/all.cpu" >"$tmp/all.cpu.log" 2>&1 && "$tmp/all.cpu" --out "$tmp/all.cpu.run" >>"$tmp/all.cpu.log" 2>&1 \
    || { fail "the CPU trainer:"; tail -5 "$tmp/all.cpu.log"; }
  TRAINC_CUDA_ENV=$root/$BUILD/emu/cuda.env "$TRAINC" build "$tmp/all.spec" -o "$tmp/all.emu" --backend cuda >"$tmp/all.emu.log" 2>&1 &&
    "$tmp/all.emu" --out "$tmp/all.emu.run" >>"$tmp/all.emu.log" 2>&1 || { fail "the emulated CUDA trainer:"; tail -5 "$tmp/all.emu.log"; }
  r=$("$PY" tests/gpu/compare_runs.py "$tmp/all.emu.run/metrics.jsonl" "$tmp/all.cpu.run/metrics.jsonl" 1e-4 2>&1) \
    && echo "CUDA (emulated) vs CPU: $(echo "$r" | head -1)" || { fail "CUDA (emulated) vs CPU:"; echo "$r"; }
  # Caffe's Adam (adamw.caffe_form: L2 decay, eps on the uncorrected second moment) the same way
  sed -e 's/sgd { momentum: 0.9 weight_decay: 0.01 lr_in_velocity: true }/adamw { beta1: 0.9 beta2: 0.999 eps: 0.001 weight_decay: 0.01 caffe_form: true }/' \
      -e 's/lr { base: 0.05 /lr { base: 0.01 /' "$tmp/all.spec" >"$tmp/adam.spec"
  grep -q caffe_form "$tmp/adam.spec" || fail "the Adam spec was not written"
  "$TRAINC" build "$tmp/adam.spec" -o "$tmp/adam.cpu" >"$tmp/adam.cpu.log" 2>&1 && "$tmp/adam.cpu" --out "$tmp/adam.cpu.run" >>"$tmp/adam.cpu.log" 2>&1 \
    || { fail "the CPU trainer (Adam):"; tail -5 "$tmp/adam.cpu.log"; }
  TRAINC_CUDA_ENV=$root/$BUILD/emu/cuda.env "$TRAINC" build "$tmp/adam.spec" -o "$tmp/adam.emu" --backend cuda >"$tmp/adam.emu.log" 2>&1 &&
    "$tmp/adam.emu" --out "$tmp/adam.emu.run" >>"$tmp/adam.emu.log" 2>&1 || { fail "the emulated CUDA trainer (Adam):"; tail -5 "$tmp/adam.emu.log"; }
  r=$("$PY" tests/gpu/compare_runs.py "$tmp/adam.emu.run/metrics.jsonl" "$tmp/adam.cpu.run/metrics.jsonl" 1e-4 2>&1) \
    && echo "Caffe's Adam, CUDA (emulated) vs CPU: $(echo "$r" | head -1)" || { fail "Caffe's Adam, CUDA (emulated) vs CPU:"; echo "$r"; }
  # Caffe's RMSProp, AdaGrad and AdaDelta (trainc's rmsprop, adagrad, adadelta) the same way
  for opt in "rmsprop { alpha: 0.98 eps: 1e-8 weight_decay: 0.01 }" "adagrad { eps: 1e-8 weight_decay: 0.01 }" \
             "adadelta { rho: 0.95 eps: 1e-6 weight_decay: 0.01 }"; do
    o=${opt%% *}
    sed -e "s/sgd { momentum: 0.9 weight_decay: 0.01 lr_in_velocity: true }/$opt/" -e 's/lr { base: 0.05 /lr { base: 0.01 /' \
      "$tmp/all.spec" >"$tmp/$o.spec"
    "$TRAINC" build "$tmp/$o.spec" -o "$tmp/$o.cpu" >"$tmp/$o.cpu.log" 2>&1 && "$tmp/$o.cpu" --out "$tmp/$o.cpu.run" >>"$tmp/$o.cpu.log" 2>&1 \
      || { fail "the CPU trainer ($o):"; tail -5 "$tmp/$o.cpu.log"; continue; }
    TRAINC_CUDA_ENV=$root/$BUILD/emu/cuda.env "$TRAINC" build "$tmp/$o.spec" -o "$tmp/$o.emu" --backend cuda >"$tmp/$o.emu.log" 2>&1 &&
      "$tmp/$o.emu" --out "$tmp/$o.emu.run" >>"$tmp/$o.emu.log" 2>&1 || { fail "the emulated CUDA trainer ($o):"; tail -5 "$tmp/$o.emu.log"; continue; }
    r=$("$PY" tests/gpu/compare_runs.py "$tmp/$o.emu.run/metrics.jsonl" "$tmp/$o.cpu.run/metrics.jsonl" 1e-4 2>&1) \
      && echo "$o, CUDA (emulated) vs CPU: $(echo "$r" | head -1)" || { fail "$o, CUDA (emulated) vs CPU:"; echo "$r"; }
  done
  # The Caffe forks' SGD: NVCaffe's LARC (both policies), Intel Caffe's LARS (local_lr_auto)
  # and its warmup with the momentum correction; each run ends elsewhere than Caffe's plain SGD (all.cpu.run)
  # did, so the rule reached the trainer's step
  plain=$("$PY" -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_hash"])' \
    "$tmp/all.cpu.run/metrics.jsonl")
  for rule in "larc { policy: CLIP eta: 0.02 }|" \
              "larc { eta: 0.5 form: INTEL } warmup_momentum_correction: true|warmup { iterations: 4 start_lr: 0.005 replaces_schedule: true } " \
              "warmup_momentum_correction: true|warmup { iterations: 4 start_lr: 0.005 replaces_schedule: true } "; do
    o=$(echo "${rule%%|*}" | tr -dc 'a-zA-Z' | cut -c1-24)
    sed -e "s/lr_in_velocity: true }/lr_in_velocity: true ${rule%%|*} }/" -e "s/lr { base: 0.05 /lr { base: 0.05 ${rule#*|}/" \
      "$tmp/all.spec" >"$tmp/$o.spec"
    "$TRAINC" build "$tmp/$o.spec" -o "$tmp/$o.cpu" >"$tmp/$o.cpu.log" 2>&1 && "$tmp/$o.cpu" --out "$tmp/$o.cpu.run" >>"$tmp/$o.cpu.log" 2>&1 \
      || { fail "the CPU trainer ($o):"; tail -5 "$tmp/$o.cpu.log"; continue; }
    TRAINC_CUDA_ENV=$root/$BUILD/emu/cuda.env "$TRAINC" build "$tmp/$o.spec" -o "$tmp/$o.emu" --backend cuda >"$tmp/$o.emu.log" 2>&1 &&
      "$tmp/$o.emu" --out "$tmp/$o.emu.run" >>"$tmp/$o.emu.log" 2>&1 || { fail "the emulated CUDA trainer ($o):"; tail -5 "$tmp/$o.emu.log"; continue; }
    r=$("$PY" tests/gpu/compare_runs.py "$tmp/$o.emu.run/metrics.jsonl" "$tmp/$o.cpu.run/metrics.jsonl" 1e-4 2>&1) \
      && echo "${rule%%|*}, CUDA (emulated) vs CPU: $(echo "$r" | head -1)" || { fail "${rule%%|*}, CUDA (emulated) vs CPU:"; echo "$r"; }
    h=$("$PY" -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_hash"])' \
      "$tmp/$o.cpu.run/metrics.jsonl")
    [ -n "$h" ] && [ "$h" != "$plain" ] || fail "${rule%%|*}: the CPU run ends at Caffe's plain SGD's params ($plain)"
  done
  # what the CUDA backend does not run is refused at build, naming the layer
  printf 'extends: "%s"\nprecision { compute: BF16 }\n' "$tmp/all.spec" >"$tmp/nhwc.spec"
  if TRAINC_CUDA_ENV=$root/$BUILD/emu/cuda.env "$TRAINC" build "$tmp/nhwc.spec" -o "$tmp/x" --backend cuda --layout nhwc 2>"$tmp/err"; then
    fail "use_global_stats built for CUDA with --layout nhwc"
  else
    grep -q 'layer "bn0": bn use_global_stats: true with --layout nhwc is not implemented by the CUDA backend' "$tmp/err" ||
      { fail "refusal:"; cat "$tmp/err"; }
  fi
else
  echo "SKIP: the emulated CUDA backend (needs the CUDA headers; make emu)"
fi

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "caffe semantics: multipliers exact, lr_mult 0 frozen, CUDA (emulated) as the CPU"
