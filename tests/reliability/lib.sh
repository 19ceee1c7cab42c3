# Shared by tests/reliability/*_test.sh: the MLP example with small batches, built into $dir,
# and a small Fashion-MNIST IDX subset ($dir/data/good) so a run takes a fraction of a second.
source tests/lib.sh
export OMP_NUM_THREADS=1
src=/usr/share/datasets/fashion-mnist

make_test_dir() {  # name: a fresh $BUILD/test-reliability/NAME as $dir (an absolute path)
  dir=$BUILD/test-reliability/$1
  rm -rf "$dir" && mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
}

build_small_mlp() {  # name [sed expressions...]: $dir/NAME from the MLP example, batch 16/50
  local name=$1; shift
  sed -e 's/batch_per_rank: 64/batch_per_rank: 16/' -e 's/batch_per_rank: 1000/batch_per_rank: 50/' "$@" \
    specs/examples/fmnist_mlp.spec > "$dir/$name.spec"
  "$BUILD/trainc" build "$dir/$name.spec" -o "$dir/$name" >/dev/null
}

make_small_idx() {  # n_train n_test -> $dir/data/good (and the damaged variants beside it)
  "$PY" tests/train/make_idx.py "$src" "$dir/data" "$1" "$2" >/dev/null
}

params_hash() {  # metrics.jsonl -> the summary's params_hash
  "$PY" -c 'import json,sys
print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_hash"])' "$1"
}

expect_error() {  # name, expected text, command...: non-zero exit, exactly one error line with the text
  local name=$1 text=$2; shift 2
  local status=0
  "$@" > "$dir/$name.out" 2> "$dir/$name.err" || status=$?
  if [ "$status" -eq 0 ]; then echo "$name: exited 0 but should have failed; stderr:" >&2; cat "$dir/$name.err" >&2; return 1; fi
  if ! grep -qF -- "$text" "$dir/$name.err"; then
    echo "$name: exit $status without '$text' on stderr:" >&2; cat "$dir/$name.err" >&2; return 1
  fi
  local n; n=$(grep -c 'error:' "$dir/$name.err" || true)
  [ "$n" -eq 1 ] || { echo "$name: expected one error message, got $n:" >&2; cat "$dir/$name.err" >&2; return 1; }
  echo "$name: $(grep 'error:' "$dir/$name.err")"
}
