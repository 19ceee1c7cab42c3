# Shared by tests/mpi/*_test.sh: Open MPI as root on a small machine, and building the test
# specs of tests/mpi/specs into $dir.
source tests/lib.sh
# Open MPI refuses root without these; the suite runs as root in CI containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One OpenMP thread per rank: 4 ranks share 2 cores.
export OMP_NUM_THREADS=1
MPIRUN=(mpirun --oversubscribe --bind-to none)

build_spec() {  # name: tests/mpi/specs/NAME.spec -> $dir/NAME
  "$BUILD/trainc" build "tests/mpi/specs/$1.spec" -o "$dir/$1" >/dev/null
}

train_losses() {  # metrics.jsonl -> one loss per line
  "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["event"] == "train": print(r["step"], repr(r["loss"]))' "$1"
}
