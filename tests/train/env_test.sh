#!/usr/bin/env bash
# TRAINC_* environment variables (runtime/include/rt_env.def): a trainer refuses a bad value at
# start-up, even of a variable only another backend or an op it never runs reads, with one
# message naming the variable, the value and the allowed values, exit 2; valid values and
# empty ones are accepted; an unknown TRAINC_* name draws one warning naming the closest known
# one; trainc refuses a bad value of a variable it reads in its own style; `BIN --help-env`
# and `trainc --help-env` list every row of the table, also while a bad value is set; README's
# table is `trainc --help-env --markdown`; and no source reads a TRAINC_* variable but through
# the table.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
[ -f "$BUILD/libtrainrt.a" ] || { echo "missing $BUILD/libtrainrt.a (run make)" >&2; exit 1; }
out=$BUILD/test-train/env
rm -rf "$out" && mkdir -p "$out"

# the table's names, from the file itself
names=$(sed -nE 's/^RT_ENV\((TRAINC_[A-Z0-9_]+),.*/\1/p' runtime/include/rt_env.def)
[ "$(echo "$names" | wc -w)" -ge 20 ] || { echo "FAIL: rt_env.def lists only: $names"; exit 1; }

"$TRAINC" build specs/examples/fmnist_mlp.spec -o "$out/mlp" > "$out/build.log" 2>&1 || { cat "$out/build.log"; echo "FAIL: trainc build"; exit 1; }
BIN=$out/mlp

# expect_refused 'VAR=value' 'allowed values as the message words them': exit 2, one error
# line naming both and the value, a hint, nothing trained (--out left unmade).
expect_refused() {
  local assign=$1 allowed=$2 var=${1%%=*} value=${1#*=} rc=0
  env "$assign" "$BIN" --out "$out/run-refused" > "$out/refused.out" 2> "$out/refused.err" || rc=$?
  if [ "$rc" -ne 2 ]; then fail "$assign: exit status $rc, expected 2"; cat "$out/refused.err"; return; fi
  if [ "$(grep -c '^error:' "$out/refused.err")" -ne 1 ] || [ "$(wc -l < "$out/refused.err")" -ne 2 ] ||
     ! grep -qF "$var='$value'" "$out/refused.err" || ! grep -qF "$var takes $allowed" "$out/refused.err" ||
     ! grep -q '^HINT: .*--help-env' "$out/refused.err"; then
    fail "$assign: not one message naming $var, '$value' and \"$allowed\":"; cat "$out/refused.err"
  fi
  [ -e "$out/run-refused" ] && fail "$assign: the refused trainer made its --out directory"
  rm -rf "$out/run-refused"
}
expect_refused TRAINC_SGEMM=foo 'auto, openblas or onednn'
expect_refused TRAINC_HANG_TIMEOUT=abc 'a number from 0 to 86400'
expect_refused TRAINC_CONV_C1=maybe 'on or off'
expect_refused TRAINC_CUDA_BN=older 'new or old'               # another backend's variable
expect_refused TRAINC_CUDA_GRAPH=yes '0 or 1'
expect_refused TRAINC_COMM_POLL_US=-5 'a whole number from 0 to 100000'   # MPI's, in a world of one
expect_refused TRAINC_CUDNN_WORKSPACE_MB=1G 'a whole number from 0 to 1048576'
example=$(cat "$out/refused.err")

# valid and empty values pass the start-up check (--print-spec stops right after it)
rc=0
TRAINC_SGEMM=openblas TRAINC_CONV_C1=off TRAINC_CONV_STRIDED_WINOGRAD=on TRAINC_CONV_BF16=gemm TRAINC_CUDA_BN=old \
  TRAINC_CUDA_GRAPH=0 TRAINC_HANG_TIMEOUT=2.5 TRAINC_COMM_POLL_US=100000 TRAINC_CUDA_DEVICE= TRAINC_CPU_NO_BF16=0 \
  "$BIN" --print-spec > "$out/valid.out" 2> "$out/valid.err" || rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$out/valid.err" ] || { fail "valid values: exit $rc, stderr:"; cat "$out/valid.err"; }

# an unknown name: one warning naming the closest known one, and the trainer goes on
rc=0
TRAINC_SGEM=openblas "$BIN" --print-spec > /dev/null 2> "$out/unknown.err" || rc=$?
if [ "$rc" -ne 0 ] || [ "$(wc -l < "$out/unknown.err")" -ne 1 ] ||
   ! grep -q '^warning: TRAINC_SGEM is not .*did you mean TRAINC_SGEMM?' "$out/unknown.err"; then
  fail "unknown TRAINC_SGEM: exit $rc, expected exit 0 and one warning naming TRAINC_SGEMM:"; cat "$out/unknown.err"
fi

# trainc: a bad value of a variable it reads, in its diagnostic style, exit 2
rc=0
TRAINC_CUDNN_WORKSPACE_MB=abc "$TRAINC" show --device-memory 80 specs/examples/fmnist_lenet.spec \
  > /dev/null 2> "$out/trainc.err" || rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "^trainc: error: environment variable TRAINC_CUDNN_WORKSPACE_MB='abc'.*from 0 to 1048576" "$out/trainc.err" ||
   ! grep -q '^  hint: ' "$out/trainc.err"; then
  fail "trainc with TRAINC_CUDNN_WORKSPACE_MB=abc: exit $rc:"; cat "$out/trainc.err"
fi

# --help-env: every row, the same text from the trainer and trainc, also under a bad value
rc=0
TRAINC_SGEMM=foo "$BIN" --help-env > "$out/help-env.bin" 2> "$out/help-env.err" || rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$out/help-env.err" ] || fail "BIN --help-env under a bad value: exit $rc, stderr $(cat "$out/help-env.err")"
"$TRAINC" --help-env > "$out/help-env.trainc" || fail "trainc --help-env exited $?"
cmp -s "$out/help-env.bin" "$out/help-env.trainc" || fail "BIN --help-env and trainc --help-env differ"
for name in $names; do
  grep -q "^  $name=" "$out/help-env.bin" || fail "BIN --help-env does not list $name"
done
listed=$(grep -cE '^  TRAINC_[A-Z0-9_]+=' "$out/help-env.bin")
[ "$listed" -eq "$(echo "$names" | wc -w)" ] || fail "--help-env lists $listed variables, rt_env.def $(echo "$names" | wc -w)"

# README's table is the generated one
"$TRAINC" --help-env --markdown > "$out/table.md"
sed -n '/^<!-- trainc --help-env --markdown: begin -->$/,/^<!-- trainc --help-env --markdown: end -->$/p' README.md |
  sed '1d;$d' > "$out/readme-table.md"
if ! cmp -s "$out/table.md" "$out/readme-table.md"; then
  fail "README's environment table is stale; run 'make reference' and commit it"
  diff -u --label README.md --label "trainc --help-env --markdown" "$out/readme-table.md" "$out/table.md" | head -20
fi

# every read goes through the table: no getenv of a TRAINC_ name left in the sources
left=$(grep -rnE 'getenv\("TRAINC_' runtime compiler templates tests bench --include='*.c' --include='*.h' \
       --include='*.cu' --include='*.cuh' --include='*.cpp' --include='*.in' 2>/dev/null)
[ -z "$left" ] || fail "read without the table (use rt_env.h):
$left"
# and every TRAINC_ variable a test script or README sets or names is in the table
for name in $(grep -rhoE '\bTRAINC_[A-Z0-9_]+=' tests README.md bench --include='*.sh' --include='*.md' --exclude=env_test.sh | tr -d = | sort -u); do
  echo "$names" | grep -qx "$name" || fail "$name is set in tests/, bench/ or README but is not in rt_env.def"
done

if [ "$failures" -eq 0 ]; then
  echo "env_test: PASS ($(echo "$names" | wc -w) variables; for example:"
  echo "$example)"
else
  echo "env_test: $failures failure(s)"; exit 1
fi
