#!/usr/bin/env bash
# data.train_samples / data.val_samples against real data (tiny IDX files and their
# `trainc pack` shards, written here): equal trains silently; smaller trains on the evenly
# spaced subset (samples i*N/n), which must give the very parameters of a run on IDX files
# holding just those samples; larger is refused at start-up with one message naming the
# field, the count and the data, by every rank (1 and 2 under mpirun), before anything is written.
set -eu
source tests/lib.sh
dir=$BUILD/test-data/sample_counts
rm -rf "$dir" && mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# full/: 40 training and 12 test images; subset/: the 24 and 6 the spec's counts below keep.
"$PY" - "$dir" <<'PY'
import gzip, os, struct, sys
out, data = sys.argv[1], "/usr/share/datasets/fashion-mnist"
def read(name, n):
    raw = gzip.open(f"{data}/{name}").read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    per = 1
    for d in dims[1:]: per *= d
    body = raw[4 + 4 * nd:]
    return raw[:4], dims[1:], [body[i * per:(i + 1) * per] for i in range(n)]
def write(path, head, dims, items):
    with open(path, "wb") as f:
        f.write(head + struct.pack(">" + "I" * (1 + len(dims)), len(items), *dims) + b"".join(items))
for split, total, kept in (("train", 40, 24), ("t10k", 12, 6)):
    for kind, idx in (("images", 3), ("labels", 1)):
        head, dims, items = read(f"{split}-{kind}-idx{idx}-ubyte.gz", total)
        for sub, keep in (("full", range(total)), ("subset", [i * total // kept for i in range(kept)])):
            os.makedirs(f"{out}/{sub}", exist_ok=True)
            write(f"{out}/{sub}/{split}-{kind}-idx{idx}-ubyte", head, dims, [items[i] for i in keep])
PY
"$BUILD/trainc" pack "$dir/full" -o "$dir/full_packed" --quality 90 > /dev/null
"$BUILD/trainc" pack "$dir/subset" -o "$dir/subset_packed" --quality 90 > /dev/null

spec() {  # source input_channels train_samples [val_samples] -> a small MLP on stdout
  local val=${4:+val_samples: $4}
  local crop=; [ "$1" = imagenet-folder ] && crop="resize: 28 center_crop: 28"
  cat <<SPEC
name: "counts"
seed: 5
net { input_shape: [$2, 28, 28] classes: 10 linear { name: "fc1" out: 16 } relu { name: "r1" } linear { name: "fc2" out: 10 } }
data {
  train { source: "$1" batch_per_rank: 4 }
  val { source: "$1" batch_per_rank: 4 $crop }
  train_samples: $3 $val
}
parallel { ranks: 0 }
solver { epochs: 2 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.05 } }
SPEC
}
final() { sed -n 's/^final: \(.*\)  after \([0-9]*\) steps .* params \([0-9a-f]*\)$/\1 steps \2 params \3/p' "$1"; }
build() {  # name source channels train_samples [val_samples]
  spec "${@:2}" > "$dir/$1.spec"
  "$BUILD/trainc" build "$dir/$1.spec" -o "$dir/$1" > /dev/null
}

for src in idx imagenet-folder; do
  if [ $src = idx ]; then c=1 full=$dir/full subset=$dir/subset; else c=3 full=$dir/full_packed subset=$dir/subset_packed; fi
  build equal $src $c 40
  build exact $src $c 24 6
  build fewer $src $c 24 6
  build more_train $src $c 41
  build more_val $src $c 40 13
  # Equal: the whole set, nothing said. 40 samples / 4 = 10 steps an epoch, 2 epochs.
  "$dir/equal" --data "$full" --out "$dir/$src.equal" > "$dir/$src.equal.log"
  if grep '^data:' "$dir/$src.equal.log"; then echo "FAIL ($src): a note although the counts match"; exit 1; fi
  case "$(final "$dir/$src.equal.log")" in *"steps 20 params"*) ;; *) echo "FAIL ($src): equal counts:"; tail -3 "$dir/$src.equal.log"; exit 1;; esac
  # Fewer asked for than the data holds: the subset, said once each, equal to the subset files.
  "$dir/fewer" --data "$full" --out "$dir/$src.fewer" > "$dir/$src.fewer.log"
  "$dir/exact" --data "$subset" --out "$dir/$src.exact" > "$dir/$src.exact.log"
  for want in "data: training on 24 of the 40 samples in" "data: validation on 6 of the 12 samples in"; do
    [ "$(grep -c "^$want" "$dir/$src.fewer.log")" = 1 ] || { echo "FAIL ($src): not said once: $want"; cat "$dir/$src.fewer.log"; exit 1; }
  done
  got=$(final "$dir/$src.fewer.log") want=$(final "$dir/$src.exact.log")
  if [ -z "$got" ] || [ "$got" != "$want" ]; then
    printf 'FAIL (%s): the subset run differs from the run on the subset files\n  subset: %s\n  files:  %s\n' \
      "$src" "$got" "$want"; exit 1
  fi
  echo "$src: train_samples 24 / val_samples 6 of 40 / 12 = the run on those samples' files: $got"
  # More asked for than the data holds: refused before any file is written, 1 and 2 ranks.
  for bad in "more_train:data.train_samples is 41, but the training set in '$full" \
             "more_val:data.val_samples is 13, but the validation set in '$full"; do
    bin=${bad%%:*} msg=${bad#*:}
    for np in 1 2; do
      out=$dir/$src.$bin.$np
      launch=(); [ $np = 2 ] && launch=(mpirun --oversubscribe --bind-to none -np 2)
      if "${launch[@]}" "$dir/$bin" --data "$full" --out "$out" > "$out.log" 2> "$out.err"; then
        echo "FAIL ($src, $np ranks): $bin was accepted"; exit 1
      fi
      # Every rank checks; under MPI the first to stop speaks for the run ("rank N: ...").
      grep -q "^error: \(rank [01]: \)\?$msg" "$out.err" || { echo "FAIL ($src, $np ranks): $bin: want '$msg':"; cat "$out.err"; exit 1; }
      grep -q "^HINT: set data\.\(train\|val\)_samples to \(40\|12\) or less" "$out.err" || { echo "FAIL: no hint"; cat "$out.err"; exit 1; }
      [ ! -e "$out" ] || { echo "FAIL ($src, $np ranks): $bin wrote into $out before refusing"; exit 1; }
    done
    echo "$src: $(grep -m1 '^error:' "$out.err")"
  done
done
