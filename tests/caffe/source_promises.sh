# Sourced by the Caffe data-source tests (lmdb_source, leveldb_source, image_data, hdf5_data):
# the promises every source keeps, checked on trainers DIR/r1 (one rank) and DIR/r2 (two ranks,
# half the batch each, the same global batch), which the test has built. Uses tests/lib.sh's
# fail and $PY.
#   losses METRICS            "step loss" per train record
#   summary_of METRICS KEY    the summary record's KEY (params_hash, top1, ...)
#   same_on_two_ranks DIR MIN_STEPS   r2 under mpirun against r1's run in DIR/r1.run: the same
#                                     steps, losses within 1e-5 relative (run r1 first)
#   exact_resume DIR EPOCHS   r1 for EPOCHS epochs, then resumed from its last checkpoint: the
#                             same params_hash as DIR/r1.run's straight run
losses() { "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["event"] == "train": print(r["step"], repr(r["loss"]))' "$1"; }
summary_of() { "$PY" -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1][sys.argv[2]])' "$1" "$2"; }

same_on_two_ranks() {
  local dir=$1 min=$2 r
  if ! command -v mpirun >/dev/null; then echo "SKIP: 1 vs 2 ranks (no mpirun)"; return; fi
  mpirun --oversubscribe --bind-to none -np 2 "$dir/r2" --out "$dir/r2.run" >"$dir/r2.log" 2>&1 || { fail "2 ranks:"; tail -3 "$dir/r2.log"; }
  losses "$dir/r1.run/metrics.jsonl" >"$dir/l1"; losses "$dir/r2.run/metrics.jsonl" >"$dir/l2"
  r=$("$PY" - "$dir/l1" "$dir/l2" "$min" <<'PY'
import sys
a = [tuple(l.split()) for l in open(sys.argv[1])]
b = [tuple(l.split()) for l in open(sys.argv[2])]
if len(a) < int(sys.argv[3]) or [s for s, _ in a] != [s for s, _ in b]:
    sys.exit(f"steps differ: {len(a)} vs {len(b)}")
worst = max(abs(float(x) - float(y)) / abs(float(x)) for (_, x), (_, y) in zip(a, b))
print(f"{len(a)} steps, largest relative loss difference {worst:.2g}")
sys.exit(worst > 1e-5)
PY
  ) && echo "1 vs 2 ranks: $r" || fail "1 vs 2 ranks: $r"
}

exact_resume() {
  local dir=$1 epochs=$2 ckpt a b
  "$dir/r1" --out "$dir/first.run" --epochs "$epochs" >"$dir/first.log" 2>&1 || { fail "the first epochs:"; tail -3 "$dir/first.log"; }
  ckpt=$(ls "$dir/first.run/checkpoints/"ckpt-*.bin 2>/dev/null | tail -1)
  [ -n "$ckpt" ] && "$dir/r1" --out "$dir/rest.run" --resume "$ckpt" >"$dir/rest.log" 2>&1 ||
    { fail "resume from ${ckpt:-no checkpoint}:"; tail -3 "$dir/rest.log"; }
  a=$(summary_of "$dir/r1.run/metrics.jsonl" params_hash 2>/dev/null); b=$(summary_of "$dir/rest.run/metrics.jsonl" params_hash 2>/dev/null)
  [ -n "$a" ] && [ "$a" = "$b" ] && echo "stopped after epoch $epochs and resumed: params $b, as the run that never stopped" \
    || fail "resume: params ${b:-none}, the straight run ${a:-none}"
}
