#!/usr/bin/env bash
# Bad input to a compiled trainer (sanitized build): missing, damaged and mislabeled IDX
# files; corrupt, truncated and foreign checkpoints; bad arguments. Each must end in ONE
# error message on stderr naming the problem, a non-zero exit (not a crash), and must leave
# every existing checkpoint byte-identical.
set -eu
source tests/lib.sh
root=$PWD
dir=$BUILD/test-train/bad-input
rm -rf "$dir" && mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
src=/usr/share/datasets/fashion-mnist
[ -f "$BUILD/asan/libtrainrt.a" ] || { echo "missing $BUILD/asan/libtrainrt.a: run make test-build" >&2; exit 1; }

# Two trainers linked against the sanitized runtime: the MLP and a variant of it (another
# spec hash) for foreign checkpoints.
build_asan() {  # spec, bin
  "$BUILD/trainc" build "$1" -o "$2" >/dev/null
  cc -std=c11 -D_GNU_SOURCE -g -O1 -fopenmp -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=undefined -I"$root/runtime/include" "$2.src/model.c" -o "$2" \
    "$BUILD/asan/libtrainrt.a" -lopenblas -lturbojpeg -ljpeg -lpng -lz -lm -lgomp $(mpicc --showme:link) $SAN_LIBS
}
# A small batch so that the subset below makes several steps per epoch.
sed -e 's/batch_per_rank: 64/batch_per_rank: 16/' -e 's/batch_per_rank: 1000/batch_per_rank: 50/' \
  specs/examples/fmnist_mlp.spec > "$dir/mlp.spec"
sed 's/out: 128/out: 96/' "$dir/mlp.spec" > "$dir/other.spec"
build_asan "$dir/mlp.spec" "$dir/mlp"
build_asan "$dir/other.spec" "$dir/other"
export ASAN_OPTIONS=detect_leaks=0 OMP_NUM_THREADS=1

"$PY" tests/train/make_idx.py "$src" "$dir/data" 320 100
data=$dir/data
good=$data/good

# Reference runs whose checkpoints must survive everything below.
"$dir/mlp" --data "$good" --out "$dir/run" --epochs 2 >/dev/null
"$dir/other" --data "$good" --out "$dir/other-run" >/dev/null
ckpt=$(ls "$dir/run/checkpoints"/ckpt-*.bin | tail -n 1)
foreign=$(ls "$dir/other-run/checkpoints"/ckpt-*.bin | tail -n 1)
sums() { find "$dir/run" "$dir/other-run" -type f -exec sha256sum {} + | sort; }
sums > "$dir/before.sha256"

fails=0
# expect_fail NAME 'key words' CMD...: non-zero exit without a signal, exactly one "error:"
# line on stderr that contains every key word (case-insensitive), and no sanitizer report.
expect_fail() {
  local name=$1 keys=$2; shift 2
  local err="$dir/err-$name.txt" rc=0
  "$@" >"$dir/out-$name.txt" 2>"$err" || rc=$?
  local why=""
  if [ "$rc" -eq 0 ]; then why="exit status 0"
  elif [ "$rc" -ge 128 ]; then why="killed by signal $((rc - 128))"
  elif grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|Aborted|core dumped|Assertion' "$err"; then
    why="sanitizer or crash output"
  elif [ "$(grep -c '^error: ' "$err")" -ne 1 ]; then why="$(grep -c '^error: ' "$err") 'error:' lines, expected 1"
  elif [ "$(wc -l < "$err")" -gt 3 ]; then why="$(wc -l < "$err") lines on stderr, expected at most 3"
  else
    local k
    for k in $keys; do
      grep -qi -- "$k" "$err" || why="message lacks '$k'"
    done
  fi
  if [ -n "$why" ]; then
    fails=$((fails + 1))
    printf 'FAIL %-22s %s (exit %d)\n' "$name" "$why" "$rc"
    sed 's/^/     | /' "$err" | head -n 12
  else
    printf 'ok   %-22s %s\n' "$name" "$(grep '^error: ' "$err")"
  fi
}

# --- data ---------------------------------------------------------------------------------
mk() { rm -rf "$data/$1"; cp -r "$good" "$data/$1"; }   # a fresh copy of the good subset
train_images=train-images-idx3-ubyte.gz
train_labels=train-labels-idx1-ubyte.gz

expect_fail data-no-dir 'does not exist' "$dir/mlp" --data "$data/nowhere" --out "$dir/o"
touch "$data/a-file"
expect_fail data-not-dir 'not a directory' "$dir/mlp" --data "$data/a-file" --out "$dir/o"
mk missing; rm "$data/missing/$train_labels"
expect_fail data-missing 'missing train-labels' "$dir/mlp" --data "$data/missing" --out "$dir/o"
mk missing-val; rm "$data/missing-val/t10k-images-idx3-ubyte.gz"
expect_fail data-missing-val 'missing t10k-images' "$dir/mlp" --data "$data/missing-val" --out "$dir/o"
mk trunc; head -c 100000 "$good/$train_images" > "$data/trunc/$train_images"
expect_fail data-truncated-gzip 'truncated train-images' "$dir/mlp" --data "$data/trunc" --out "$dir/o"
mk trailer; s=$(stat -c %s "$good/$train_images"); head -c $((s - 4)) "$good/$train_images" > "$data/trailer/$train_images"
expect_fail data-cut-trailer 'truncated trailer' "$dir/mlp" --data "$data/trailer" --out "$dir/o"
mk flip; cp "$good/$train_images" "$data/flip/$train_images"
printf '\x55' | dd of="$data/flip/$train_images" bs=1 seek=20000 conv=notrunc status=none
expect_fail data-corrupt-gzip 'corrupt train-images' "$dir/mlp" --data "$data/flip" --out "$dir/o"
mk notgz; gzip -dc "$good/$train_images" > "$data/notgz/$train_images"
expect_fail data-not-gzip 'not a gzip' "$dir/mlp" --data "$data/notgz" --out "$dir/o"
mk zero; : > "$data/zero/$train_labels"
expect_fail data-empty-file 'train-labels empty' "$dir/mlp" --data "$data/zero" --out "$dir/o"
mk isdir; rm "$data/isdir/$train_labels"; mkdir "$data/isdir/$train_labels"
expect_fail data-file-is-dir 'train-labels directory' "$dir/mlp" --data "$data/isdir" --out "$dir/o"
mk swapped; cp "$good/$train_labels" "$data/swapped/$train_images"; cp "$good/$train_images" "$data/swapped/$train_labels"
expect_fail data-swapped 'mislabeled labels' "$dir/mlp" --data "$data/swapped" --out "$dir/o"
expect_fail data-bad-magic 'magic train-images' "$dir/mlp" --data "$data/magic" --out "$dir/o"
expect_fail data-count-mismatch 'label count 319 320' "$dir/mlp" --data "$data/count" --out "$dir/o"
expect_fail data-label-range 'label 10 index 5 0..9' "$dir/mlp" --data "$data/label" --out "$dir/o"
expect_fail data-shape '32x32 28x28' "$dir/mlp" --data "$data/shape" --out "$dir/o"
expect_fail data-short-body 'truncated pixel' "$dir/mlp" --data "$data/short" --out "$dir/o"
expect_fail data-zero-images 'train-images count 0 no images' "$dir/mlp" --data "$data/empty" --out "$dir/o"

# --- checkpoints --------------------------------------------------------------------------
size=$(stat -c %s "$ckpt")
bad=$dir/bad-ckpt; mkdir -p "$bad"
cp "$ckpt" "$bad/payload.bin"
printf '\xff' | dd of="$bad/payload.bin" bs=1 seek=$((size / 2)) conv=notrunc status=none
cp "$ckpt" "$bad/header.bin"
printf '\xff' | dd of="$bad/header.bin" bs=1 seek=20 conv=notrunc status=none
head -c $((size / 2)) "$ckpt" > "$bad/half.bin"
head -c 10 "$ckpt" > "$bad/tiny.bin"
: > "$bad/empty.bin"
cp "$ckpt" "$bad/trailing.bin"; printf 'x' >> "$bad/trailing.bin"
res() { "$dir/mlp" --data "$good" --out "$dir/run" --epochs 2 --resume "$@"; }
expect_fail ckpt-missing 'cannot open checkpoint' res "$bad/nope.bin"
expect_fail ckpt-flipped-payload 'corrupt checksum' res "$bad/payload.bin"
expect_fail ckpt-flipped-header 'corrupt header checksum' res "$bad/header.bin"
expect_fail ckpt-truncated 'truncated' res "$bad/half.bin"
expect_fail ckpt-tiny 'truncated tiny.bin' res "$bad/tiny.bin"
expect_fail ckpt-empty 'not a trainc checkpoint' res "$bad/empty.bin"
expect_fail ckpt-trailing 'trailing' res "$bad/trailing.bin"
expect_fail ckpt-directory 'bad-ckpt is a directory' res "$bad"
expect_fail ckpt-not-ckpt 'not a trainc checkpoint' res "$good/$train_images"
expect_fail ckpt-foreign "different spec $(grep -o '[0-9a-f]\{64\}' "$dir/mlp.src/model.c" | head -n 1)" res "$foreign"
expect_fail ckpt-other-seed 'seed' res "$ckpt" --seed 7
expect_fail ckpt-beyond-epochs 'beyond --epochs' "$dir/mlp" --data "$good" --out "$dir/run" --epochs 1 --resume "$ckpt"
expect_fail out-holds-run 'already holds checkpoints' "$dir/mlp" --data "$good" --out "$dir/run"

# --- arguments ----------------------------------------------------------------------------
expect_fail arg-unknown "unknown option '--bogus'" "$dir/mlp" --bogus
expect_fail arg-positional "unknown option 'extra'" "$dir/mlp" extra
expect_fail arg-missing-value "'--data' needs a value" "$dir/mlp" --data
expect_fail arg-missing-value2 "'--epochs' needs a value" "$dir/mlp" --out "$dir/o" --epochs
expect_fail arg-not-number "--epochs integer 'ten'" "$dir/mlp" --epochs ten
expect_fail arg-trailing-junk "--seed integer '12x'" "$dir/mlp" --seed 12x
expect_fail arg-negative "--epochs integer '-1'" "$dir/mlp" --epochs -1
expect_fail arg-negative-seed "--seed integer '-5'" "$dir/mlp" --seed -5
expect_fail arg-zero-steps "--benchmark integer '0'" "$dir/mlp" --benchmark 0
expect_fail arg-overflow "--benchmark integer" "$dir/mlp" --benchmark 99999999999999999999999
expect_fail arg-empty-out "--out empty" "$dir/mlp" --data "$good" --out ""
touch "$dir/a-file"
expect_fail out-is-file "--out a-file is a file" "$dir/mlp" --data "$good" --out "$dir/a-file"
expect_fail out-under-file "a-file not a directory" "$dir/mlp" --data "$good" --out "$dir/a-file/run"
if [ "$(id -u)" = 0 ]; then
  # root may write anywhere: run as nobody, who must reach the binary and data but may not
  # write the output directory. The checkout may sit below a directory nobody cannot enter
  # (mktemp -d makes 0700 ones), so stage copies in a world-readable directory of their own.
  stage=$(mktemp -d /tmp/trainc-nobody.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  cp "$dir/mlp" "$stage/mlp" && cp -r "$good" "$stage/good"
  chmod -R a+rX "$stage"
  run_dir=$stage run_good=$stage/good
  as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
  run_dir=$dir run_good=$good
  as_user() { "$@"; }
fi
mkdir -p "$run_dir/locked" && chmod 555 "$run_dir/locked"
expect_fail out-unwritable "locked/run permission denied" as_user "$run_dir/mlp" --data "$run_good" --out "$run_dir/locked/run"
expect_fail out-unwritable-dir "locked permission denied" as_user "$run_dir/mlp" --data "$run_good" --out "$run_dir/locked"

# --- nothing damaged ----------------------------------------------------------------------
sums > "$dir/after.sha256"
if ! diff "$dir/before.sha256" "$dir/after.sha256"; then
  echo "FAIL existing run files changed (diff above)"; fails=$((fails + 1))
fi
# The good checkpoint still resumes.
"$dir/mlp" --data "$good" --out "$dir/run" --epochs 2 --resume "$ckpt" >/dev/null
echo "$fails failed"
[ "$fails" -eq 0 ]
