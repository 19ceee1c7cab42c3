#!/usr/bin/env bash
# --help: `trainc help`, `trainc COMMAND --help` / `-h` for every command that `trainc help`
# lists, and a compiled trainer's `--help` each print their usage on stdout (compared byte
# for byte with tests/golden/help/*.txt), nothing on stderr, and exit 0 — also when other,
# wrong arguments come with them. UPDATE=1 rewrites the goldens (review the diff).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
[ -f "$BUILD/libtrainrt.a" ] || { echo "missing $BUILD/libtrainrt.a (run make)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
golden=tests/golden/help
bad=0; n=0

# expect_help GOLDEN CMD...: exit 0, empty stderr, stdout equal to $golden/GOLDEN.txt (with
# the trainer's path, which --help prints, written as BIN).
expect_help() {
  local name=$1; shift
  local rc=0
  n=$((n + 1))
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  sed -i "s|$tmp/trainer|BIN|g" "$tmp/out"
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/out" "$golden/$name.txt"
  local why=""
  [ "$rc" -eq 0 ] || why="$why exit status $rc;"
  [ -s "$tmp/err" ] && why="$why stderr: $(head -c 200 "$tmp/err");"
  if [ ! -f "$golden/$name.txt" ]; then why="$why no $golden/$name.txt (UPDATE=1 creates it);"
  elif ! cmp -s "$golden/$name.txt" "$tmp/out"; then why="$why stdout differs from $golden/$name.txt;"; fi
  if [ -n "$why" ]; then
    bad=$((bad + 1)); echo "FAIL: $*:$why"
    [ -f "$golden/$name.txt" ] && diff -u "$golden/$name.txt" "$tmp/out" | head -20
  fi
}

expect_help trainc "$TRAINC" help
expect_help trainc "$TRAINC" --help
commands=$("$TRAINC" help | sed -nE 's/^  ([a-z]+) .*/\1/p' | sort -u)
[ "$(echo "$commands" | wc -w)" -ge 6 ] || { echo "FAIL: trainc help lists only: $commands"; exit 1; }
for cmd in $commands; do
  expect_help "trainc_$cmd" "$TRAINC" "$cmd" --help
  expect_help "trainc_$cmd" "$TRAINC" "$cmd" -h
  expect_help "trainc_$cmd" "$TRAINC" "$cmd" no-such.spec --bogus --help
done

"$TRAINC" build specs/examples/fmnist_mlp.spec -o "$tmp/trainer" >/dev/null || { echo "FAIL: trainc build"; exit 1; }
expect_help trainer "$tmp/trainer" --help
expect_help trainer "$tmp/trainer" -h
expect_help trainer "$tmp/trainer" --epochs 0 --bogus --help

echo "$((n - bad)) of $n help outputs match"
[ "$bad" -eq 0 ]
