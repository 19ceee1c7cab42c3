#!/usr/bin/env bash
# Slurm for real, on this machine: munged, slurmctld and slurmd from Debian's packages, one
# node of 2 CPUs, with their config, munge key, sockets, ports, state and logs in a folder of
# their own (nothing under /etc), all stopped at the end. Then, with tests/slurm/specs'
# LeNet (the example fmnist_lenet on 2560 images):
#  - `srun -n 2 --mpi=pmix` trains to mpirun -np 2's params_hash;
#  - templates/slurm.sbatch, which README shows verbatim, trains to the same params_hash;
#  - the same script under a time limit whose warning signal is due (--time=1
#    --signal=TERM@60): the ranks stop with a checkpoint and exit 143, the script requeues the
#    job, and the requeued job resumes from that checkpoint to the same params_hash.
# Slurm checks time limits every 30 s from slurmctld's start (not configurable), so the
# time-limit job is submitted a few seconds before a check, read off slurmctld's log.
set -eu
source "$(dirname "$0")/../lib.sh"
need_trainc
for prog in munged mungekey slurmctld slurmd srun sbatch scontrol squeue sinfo scancel mpirun; do
  command -v "$prog" > /dev/null || die "missing $prog (make deps-check installs munge, slurmctld, slurmd, slurm-client, openmpi-bin)"
done
"$PY" - README.md templates/slurm.sbatch <<'PY' || die "README does not show templates/slurm.sbatch as it is"
import sys
readme, script = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(0 if "```bash\n" + script + "```\n" in readme else 1)
PY

dir=$BUILD/test-slurm
fresh_dir "$dir"
for v in $(env | grep -o '^SLURM_[A-Z_]*' || true); do unset "$v"; done   # not a job of an outer Slurm
sl=$(mktemp -d /tmp/trainc-slurm.XXXXXX)   # short: unix socket paths hold 107 bytes
chmod 755 "$sl"                              # munged wants its socket's folders open to all
mkdir -p "$sl/key" "$sl/run" "$sl/state" "$sl/spool" "$sl/log"
chmod 700 "$sl/key"
pids=()
cleanup() {
  if [ -n "${SLURM_CONF:-}" ] && [ -e "$sl/run/slurmctld.pid" ]; then
    scancel --user=root 2>/dev/null || true
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  cp "$sl"/log/* "$dir/" 2>/dev/null || true   # the daemons' logs stay in $dir
  rm -rf "$sl"
}
trap cleanup EXIT

# munge: a key of this test's own, its own socket
mungekey -c -k "$sl/key/munge.key" -b 1024
munged -F --key-file="$sl/key/munge.key" --socket="$sl/run/munge.sock" --pid-file="$sl/run/munged.pid" \
  --seed-file="$sl/key/seed" --log-file="$sl/log/munged.log" > "$sl/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$sl/run/munge.sock" ] && break; sleep 0.1; done
[ -S "$sl/run/munge.sock" ] || { cat "$sl/log/munged.out"; die "munged did not start"; }

# Two free ports for slurmctld and slurmd (other Slurms on this machine keep theirs).
read -r ctld_port slurmd_port < <("$PY" -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
export SLURM_CONF=$sl/slurm.conf
touch "$sl/plugstack.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=trainctest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
# We run as root in a container: both daemons as root, no cgroups, no task binding.
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job may start again after cred_expire + 1 s (default 120)
AuthInfo=socket=$sl/run/munge.sock,cred_expire=5
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool/%n
SlurmctldPidFile=$sl/run/slurmctld.pid
SlurmdPidFile=$sl/run/slurmd.pid
SlurmctldLogFile=$sl/log/slurmctld.log
SlurmdLogFile=$sl/log/slurmd.log
# debug2 logs "Testing job time limits" at each of the 30 s checks
SlurmctldDebug=debug2
PlugStackConfig=$sl/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$sl/spool/$node"
slurmctld -D -f "$SLURM_CONF" > "$sl/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" > "$sl/log/slurmd.out" 2>&1 &
pids+=($!)
t0=$SECONDS
until [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; do
  if [ $((SECONDS - t0)) -gt 30 ]; then
    tail -n 20 "$sl"/log/*
    die "slurmctld and slurmd did not bring the node up in 30 s (their logs above)"
  fi
  sleep 0.2
done
echo "Slurm up in $((SECONDS - t0)) s: node $node, 2 CPUs, ports $ctld_port/$slurmd_port, $(srun --version)"
srun --mpi=list 2>&1 | grep -qw pmix || die "Debian's Slurm lacks the pmix MPI plugin: $(srun --mpi=list 2>&1 | tr '\n' ' ')"

"$TRAINC" build tests/slurm/specs/lenet_slurm.spec -o "$dir/lenet" > /dev/null
params_hash() {  # out dir -> the summary's params_hash
  "$PY" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl")]
print([r for r in recs if r["event"] == "summary"][-1]["params_hash"])' "$1"
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

mpirun --bind-to none -np 2 "$dir/lenet" --out "$dir/mpirun" > "$dir/mpirun.txt" 2>&1 ||
  { cat "$dir/mpirun.txt"; die "mpirun -np 2 failed"; }
want=$(params_hash "$dir/mpirun")
s0=$SECONDS
srun -n 2 --mpi=pmix "$dir/lenet" --out "$dir/srun" > "$dir/srun.txt" 2>&1 ||
  { cat "$dir/srun.txt"; die "srun -n 2 --mpi=pmix failed"; }
run_s=$((SECONDS - s0))
got=$(params_hash "$dir/srun")
echo "params_hash: mpirun -np 2 $want, srun -n 2 --mpi=pmix $got (${run_s} s)"
[ "$got" = "$want" ] || fail "srun -n 2 reached another params_hash than mpirun -np 2"

job_state() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
wait_job() {  # job id, seconds: until it has ended (requeues included)
  local end=$((SECONDS + $2)) state
  while [ $SECONDS -lt $end ]; do
    state=$(job_state "$1")
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) echo "$state"; return;; esac
    sleep 0.3
  done
  echo "still $(job_state "$1") after $2 s"
}
plain_job() {
  local id state
  id=$(sbatch --parsable -o "$dir/sbatch.log" templates/slurm.sbatch "$dir/lenet" "$dir/sbatch")
  state=$(wait_job "$id" 120)
  got=$(params_hash "$dir/sbatch" 2>/dev/null || echo none)
  echo "sbatch templates/slurm.sbatch: job $id $state, params_hash $got"
  [ "$state" = COMPLETED ] || { cat "$dir/sbatch.log"; fail "README's batch script did not complete"; }
  [ "$got" = "$want" ] || fail "README's batch script reached params_hash $got, mpirun $want"
}

# The next time-limit check: 30 s after the last one slurmctld logged, or after its start.
next_check() {
  local last
  last=$(grep 'Testing job time limits' "$sl/log/slurmctld.log" | tail -n 1 | sed 's/^\[\([^].]*\).*/\1/')
  if [ -n "$last" ]; then echo $(($(date -d "$last" +%s) + 30)); else echo $((ctld_start + 30)); fi
}
ctld_start=$(date -d "$(grep -m 1 'started on cluster' "$sl/log/slurmctld.log" | sed 's/^\[\([^].]*\).*/\1/')" +%s)
lead=4   # seconds from submission to the check: the job's ranks are training by then
now=$(date +%s); check=$(next_check)
while [ $((check - now)) -lt $lead ]; do check=$((check + 30)); done
plain_first=0
if [ $((check - now)) -ge $((run_s + 4 + lead)) ]; then plain_first=1; plain_job; fi

time_limit_job() {  # out dir: submitted $lead s before the next check; sets id state stop resumed
  local now check
  now=$(date +%s); check=$(next_check)
  while [ $((check - now)) -lt $lead ]; do check=$((check + 30)); done
  sleep $((check - now - lead))
  id=$(sbatch --parsable --time=1 --signal=TERM@60 -o "$1.log" templates/slurm.sbatch "$dir/lenet" "$1")
  state=$(wait_job "$id" 150)
  stop=$(grep -o 'stopped by signal 15 at step [0-9]*' "$1.log" | head -n 1 || true)
  resumed=$(grep -o 'resumed at step [0-9]*' "$1.log" | head -n 1 || true)
}
time_limit_job "$dir/cut"
if [ -z "$stop" ]; then
  # The check came after the first run had ended (a fast machine: submit closer to it) or
  # before its ranks caught signals (a slow start: submit earlier); one more try, said aloud.
  if grep -q '^final:' "$dir/cut.log" && ! grep -q 'DUE TO JOB REQUEUE' "$dir/cut.log"; then lead=2; else lead=7; fi
  echo "RETRY: the time limit's SIGTERM did not stop the first run of job $id; again with ${lead} s to the check:"
  grep -v '^epoch [0-9]* step' "$dir/cut.log" | head -n 20
  time_limit_job "$dir/cut2"
  mv "$dir/cut" "$dir/cut1" && mv "$dir/cut2" "$dir/cut" && mv "$dir/cut.log" "$dir/cut1.log" && mv "$dir/cut2.log" "$dir/cut.log"
fi
restarts=$(scontrol show job "$id" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
got=$(params_hash "$dir/cut" 2>/dev/null || echo none)
echo "time limit: job $id $state after $restarts requeue(s); '$stop', '$resumed'; params_hash $got"
if [ -z "$stop" ]; then
  cat "$dir/cut.log"
  fail "the time limit's SIGTERM did not stop the run (the check came after it ended, or killed it)"
else
  step=${stop##* }
  grep -q "checkpoint .*ckpt-0*$step.bin (step $step)" "$dir/cut.log" || fail "no checkpoint at the stop's step $step"
  [ "$resumed" = "resumed at step $step" ] || fail "the requeued job did not resume at step $step: '$resumed'"
  [ "${restarts:-0}" -ge 1 ] || fail "the job was not requeued (Restarts=$restarts)"
fi
[ "$state" = COMPLETED ] || { cat "$dir/cut.log"; fail "the time-limited job ended $state"; }
[ "$got" = "$want" ] || fail "stopped at the time limit and requeued, the run reached params_hash $got, mpirun $want"
[ $plain_first = 1 ] || plain_job
[ $status = 0 ] && echo "ok: srun, README's batch script and a requeue after the time limit's SIGTERM all reach $want"
exit $status
