#!/usr/bin/env bash
# One call of a lent GPU machine (the device tool's `run`, carrying .devdeps from
# tests/gpu/device_prep.sh fetch): set up, build for sm_90 (incremental when the machine is
# still warm), then run each argument as a shell command with its own time limit, logging
# everything; the logs and the test/bench outputs come back as $OUT/logs.tgz.
#   bash tests/gpu/on_device.sh 'make test-gpu CUDA_ARCHS=90'
# Environment: STEP_LIMIT (seconds per argument, default 400), OUT (where logs go; default
# build/on-device).
set -u
OUT=${OUT:-build/on-device}
STEP_LIMIT=${STEP_LIMIT:-400}
mkdir -p "$OUT"
log=$OUT/session.log
t0=$SECONDS
stamp() { printf '[%4ds] %s\n' $((SECONDS - t0)) "$*" | tee -a "$log"; }
pack() { tar czf "$OUT/logs.tgz" "$log" build/*.log build/test-gpu/*.log build/test-gpu/*.run/*.jsonl \
           build/bench-gpu/*.log build/bench-gpu/*.md build/bench-gpu/*.util build/bench-tta/*.log 2>/dev/null; }
trap pack EXIT

source tests/gpu/device_prep.sh install .devdeps >> "$log" 2>&1 || { stamp "device_prep failed"; exit 1; }
{ nvidia-smi; nproc; lscpu | grep -E 'Model name|^Flags' | cut -c1-400; gcc --version | head -1;
  command -v nvcc compute-sanitizer mpirun; python3 -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__)'
} >> "$OUT/env.log" 2>&1
stamp "env: $(nvidia-smi -L | head -1); $(nproc) cores"
if make -j"$(nproc)" cuda test-gpu-build CUDA_ARCHS=90 > build/device-build.log 2>&1; then
  stamp "build ok"
else
  stamp "build FAILED"; tail -n 40 build/device-build.log; exit 1
fi
rc=0
for cmd in "$@"; do
  stamp "start: $cmd"
  timeout "$STEP_LIMIT" bash -c "$cmd" 2>&1 | tee -a "$log"
  r=${PIPESTATUS[0]}; [ "$r" -eq 0 ] || rc=1
  stamp "end ($r): $cmd"
done
exit $rc
