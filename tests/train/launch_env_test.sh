#!/usr/bin/env bash
# The trainer's re-execution that sets its libraries' load-time settings (omp_policy.c): the
# re-executed trainer runs as many OpenMP threads as the process started with, also where
# OMP_PROC_BIND or OMP_PLACES made libgomp bind the first thread to one core (it inherited that
# core and ran one thread); it keeps its own name (not "exe"); it sets OPENBLAS_NUM_THREADS
# unless the user did; and with every setting given it does not re-execute.
# libgomp prints its settings at load (OMP_DISPLAY_ENV), once per execution of the binary.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/launch-env
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build specs/examples/fmnist_mlp.spec -o "$dir/mlp" > "$dir/build.log"

# OMP_NUM_THREADS as libgomp reports it at each load of the binary, one line per load.
threads_per_load() {
  env "$@" OMP_DISPLAY_ENV=true "$dir/mlp" --help 2>&1 >/dev/null |
    sed -n "s/^ *OMP_NUM_THREADS = '\([0-9]*\)'.*/\1/p"
}
for setting in "" "OMP_PROC_BIND=true" "OMP_PLACES=cores" "OMP_PROC_BIND=spread OMP_PLACES=threads"; do
  loads=$(threads_per_load OMP_WAIT_POLICY=passive $setting | tr '\n' ' ')
  set -- $loads
  [ $# = 2 ] || die "with '$setting' the trainer loaded $# times (want 2: start, re-execution): $loads"
  [ "$1" = "$2" ] || die "with '$setting' the trainer started with $1 OpenMP threads but re-executed with $2"
  echo "ok: '$setting': $1 OpenMP threads before and after the re-execution"
done

all="OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1"
loads=$(threads_per_load $all | wc -l)
[ "$loads" = 1 ] || die "with every setting given the trainer still re-executed ($loads loads)"
echo "ok: with every setting given, no re-execution"

# A running trainer: its name, and the settings it re-executed with.
OMP_WAIT_POLICY=passive "$dir/mlp" --benchmark 100000 --out "$dir/run" > "$dir/run.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q TRAINC_NO_REEXEC "/proc/$pid/environ" 2>/dev/null && break; sleep 0.1; done
name=$(cat "/proc/$pid/comm" 2>/dev/null) && environ=$(tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null) ||
  { cat "$dir/run.log" >&2; die "the trainer ended before it could be looked at (its output is above)"; }
kill $pid; wait $pid 2>/dev/null || true
trap - EXIT
[ "$name" = mlp ] || die "the re-executed trainer is called '$name' (want mlp)"
for want in OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive; do
  grep -qx "$want" <<< "$environ" || die "the re-executed trainer's environment lacks $want"
done
echo "ok: the re-executed trainer is called $name, with OPENBLAS_NUM_THREADS=1"
