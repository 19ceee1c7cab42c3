#!/usr/bin/env bash
# Caffe's LevelDB databases (a Data layer's default backend) as the leveldb source. python3-plyvel
# writes 512 Fashion-MNIST images as LevelDBs of Datum records (write_mnist_lmdb.py --leveldb),
# and the same records as LMDBs; tests/caffe/leveldb_data.prototxt (no backend given) imports
# to source "leveldb" with the database's shape and record count. A run from the LevelDBs ends
# at the params_hash of the same spec's run from the LMDBs (the same records decode to the same
# dataset); the same global batch on 1 and 2 ranks trains to the same per-step losses; a run
# stopped after epoch 1 and resumed ends where the uninterrupted one does; a record that is not
# a Datum is named by position and key, exit 1.
set -u
source tests/lib.sh
need_trainc
dir=$BUILD/test-caffe/leveldb
fresh_dir "$dir"
DATA=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for args in "--small 512 --leveldb" "--small 512" "--bad --leveldb"; do
  "$PY" tests/caffe/write_mnist_lmdb.py "$DATA" "$dir" $args >/dev/null || die "writing the databases ($args)"
done
sed "s|TRAIN_DB|$dir/mnist_train_leveldb|; s|TEST_DB|$dir/mnist_test_leveldb|" tests/caffe/leveldb_data.prototxt >"$dir/net.prototxt"
"$TRAINC" import caffe "$dir/net.prototxt" -o "$dir/net.spec" >"$dir/import.txt" 2>&1 || { cat "$dir/import.txt"; die "import"; }
for want in 'source: "leveldb"' 'input_shape: [1, 28, 28]' 'train_samples: 512'; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q "Data \"mnist\" -> data.train, leveldb" "$dir/import.txt" || fail "the summary names the LevelDB mapping"

spec() {  # name, batch_per_rank, ranks, source
  cat >"$dir/$1.spec" <<SPEC
extends: "net.spec"
data { train { source: "$4" path: "$dir/mnist_train_$4" batch_per_rank: $2 } val { source: "$4" path: "$dir/mnist_test_$4" } }
solver { epochs: 2 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.05 } }
parallel { ranks: $3 }
SPEC
  "$TRAINC" build "$dir/$1.spec" -o "$dir/$1" >/dev/null 2>"$dir/$1.err" || { cat "$dir/$1.err"; die "build $1"; }
}
source tests/caffe/source_promises.sh
spec r1 32 1 leveldb
spec r2 16 2 leveldb
spec m1 32 1 lmdb
grep -q "lleveldb" "$dir/r1.src/link_libs.txt" || fail "a LevelDB trainer links libleveldb"
"$dir/r1" --out "$dir/r1.run" >"$dir/r1.log" 2>&1 || { fail "1 rank:"; tail -3 "$dir/r1.log"; }
"$dir/m1" --out "$dir/m1.run" >"$dir/m1.log" 2>&1 || { fail "from the LMDBs:"; tail -3 "$dir/m1.log"; }
a=$(summary_of "$dir/r1.run/metrics.jsonl" params_hash 2>/dev/null); b=$(summary_of "$dir/m1.run/metrics.jsonl" params_hash 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && echo "from the LevelDBs: params $a, as from the LMDBs of the same records" \
  || fail "LevelDB run params ${a:-none}, LMDB run ${b:-none}"
same_on_two_ranks "$dir" 30
exact_resume "$dir" 1
rc=0; "$dir/r1" --data "$dir/bad_leveldb" --out "$dir/bad.run" >"$dir/bad.log" 2>&1 || rc=$?
grep -qF "$dir/bad_leveldb: record 57 (key \"00000057\", 40 bytes) is not a Caffe Datum" "$dir/bad.log" && [ $rc != 0 ] \
  || { fail "the damaged record (exit $rc):"; cat "$dir/bad.log"; }

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "leveldb source: the LMDB's dataset, the same batches on 1 and 2 ranks, exact resume, a bad record named"
