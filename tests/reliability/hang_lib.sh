# Shared by the hung-peer tests (mpi_hang_test.sh, mpi_hang_remote_test.sh): finding a
# rank's process, waiting for training records, CPU ticks, and stopping one rank of a job.
# Needs $dir and MPIRUN (tests/mpi/lib.sh).
rank_pid() {  # binary, rank -> pid of that rank's process (not of a wrapper around it)
  for p in $(pgrep -f "$1" || true); do
    [ "$(readlink "/proc/$p/exe")" = "$1" ] || continue
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
wait_records() {  # metrics.jsonl, n: until n train records (a guard, not a measurement)
  for _ in $(seq 600); do
    local n; n=$(grep -c '"train"' "$1" 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Stops one rank of a 2-rank job (SIGSTOP) once it trains, measures the waiting rank's CPU use
# over 2 s of its wait, and checks that the job ends with a failure status and a message
# naming the stopped rank (as seen on its machine: local, by its process state; remote, by
# its silence to pings) and the bound; prints how long the job took to end. MPIRUN_ARGS: what
# goes before the program on mpirun's command line (e.g. a wrapper); RUN_ARGS: the
# trainer's options besides --epochs and --out (e.g. --data).
MPIRUN_ARGS=() RUN_ARGS=()
stop_one() {  # rank to stop, binary, the bound's origin the message must name, local|remote
  local victim_rank=$1 bin=$2 origin=$3 where=$4 name=stopped$1-$4 other=$((1 - $1))
  "${MPIRUN[@]}" -np 2 "${MPIRUN_ARGS[@]}" "$bin" "${RUN_ARGS[@]}" --epochs 100000 --out "$dir/$name" > "$dir/$name.txt" 2>&1 &
  local launcher=$!
  wait_records "$dir/$name/metrics.jsonl" 4 || { echo "$name: no training records" >&2; kill $launcher; return 1; }
  local victim waiter; victim=$(rank_pid "$bin" "$victim_rank"); waiter=$(rank_pid "$bin" "$other")
  [ -n "$victim" ] && [ -n "$waiter" ] || { echo "$name: ranks not found" >&2; kill $launcher; return 1; }
  local t0=$SECONDS
  kill -STOP "$victim"
  sleep 0.5   # the waiter's CPU use over the next 2 s (the bound is at least 3 s)
  local c0 w0; c0=$(cpu_ticks "$waiter"); w0=$(date +%s.%N)
  sleep 2
  local c1 w1; c1=$(cpu_ticks "$waiter"); w1=$(date +%s.%N)
  for _ in $(seq 1000); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
  local status=0
  if kill -0 $launcher 2>/dev/null; then
    echo "$name: the job was still running 100 s after rank $victim_rank was stopped" >&2
    kill -9 $launcher; status=-1
  else
    wait $launcher || status=$?
  fi
  kill -CONT "$victim" 2>/dev/null; kill -9 "$victim" "$waiter" 2>/dev/null
  local share; share=$("$PY" -c "import os,sys; print(f'{($c1 - $c0) / os.sysconf(\"SC_CLK_TCK\") / ($w1 - $w0):.2f}')")
  echo "$name: job ended $((SECONDS - t0)) s after SIGSTOP to rank $victim_rank (status $status); the waiting rank used $share of a core while it waited"
  local seen="(pid $victim on [^)]*) is stopped"
  [ "$where" = remote ] && seen="(pid [0-9]* on node-$victim_rank) does not answer"
  grep -q "rank $victim_rank $seen.*(hang bound $origin" "$dir/$name.txt" ||
    { echo "$name: no message naming the stopped rank and the bound ($origin):" >&2; cat "$dir/$name.txt" >&2; return 1; }
  grep 'error:' "$dir/$name.txt"
  [ "$status" -gt 0 ] || { echo "$name: the job did not end with a failure status" >&2; return 1; }
  "$PY" -c "import sys; sys.exit(0 if $share < 0.15 else 1)" ||
    { echo "$name: the waiting rank spun ($share of a core) while it waited" >&2; return 1; }
}
