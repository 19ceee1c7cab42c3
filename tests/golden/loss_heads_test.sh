#!/usr/bin/env bash
# Loss heads in `trainc check` and the emitted CPU step: an auxiliary softmax_ce, whose output
# no layer reads, is no unused layer (the loss reads it), while the same branch without its
# head is reported unused; the step computes each head's loss once, weighted in the sum and
# in its gradient's scale (loss += w * softmax_xent_forward(..., w / BATCH)), the main head's
# first; the auxiliary branch runs in training only (evaluation skips it); `show --schedule`
# lists the heads and marks that branch. tests/golden/errors/loss_head_*.spec hold the rules' diagnostics,
# tests/gradcheck/gradcheck_aux.spec the gradient, tests/emu/loss_heads_emu_test.sh CUDA.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/heads.spec" <<'SPEC'
net {
  input_shape: [3, 8, 8]
  conv { name: "stem" out: 4 kernel: 3 }
  gap { name: "aux.gap" }
  linear { name: "aux.fc" out: 10 }
  softmax_ce { name: "aux.loss" loss_weight: 0.25 }
  conv { name: "c2" input: "stem" out: 4 kernel: 3 }
  gap { name: "gap" }
  linear { name: "fc" out: 10 }
}
data { train { source: "synthetic" samples: 8 batch_per_rank: 4 } }
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }
SPEC
"$TRAINC" check "$tmp/heads.spec" >/dev/null 2>"$tmp/err" || fail "a net with an auxiliary head does not check: $(head -3 "$tmp/err")"
grep -q unused "$tmp/err" && fail "the auxiliary head is reported unused: $(cat "$tmp/err")"
grep -v 'softmax_ce' "$tmp/heads.spec" > "$tmp/headless.spec"
"$TRAINC" check "$tmp/headless.spec" >/dev/null 2>"$tmp/err" && fail "the branch without its head checks"
grep -q "layer 'aux.fc' is unused: no layer reads its output" "$tmp/err" ||
  fail "the branch without its head: not the unused-layer error: $(head -2 "$tmp/err")"

"$TRAINC" build "$tmp/heads.spec" -o "$tmp/heads" --emit-only >/dev/null 2>"$tmp/err" || fail "emit: $(head -3 "$tmp/err")"
src=$tmp/heads.src/model.c
grep -q '^    double loss = softmax_xent_forward(fc_dout, fc_out, y, BATCH, CLASSES, 0.0f, 1.0f / BATCH);$' "$src" ||
  fail "the main head's loss: $(grep -m1 'double loss' "$src")"
grep -q '^    loss += 0.25f \* softmax_xent_forward(aux_fc_dout, aux_fc_out, y, BATCH, CLASSES, 0.0f, 0.25f / BATCH);$' "$src" ||
  fail "the auxiliary head's loss: $(grep -m1 'loss +=' "$src")"
[ "$(grep -c 'softmax_xent_forward(' "$src")" = 2 ] || fail "expected two loss calls in the step"
# The auxiliary branch runs in training only: evaluation's logits do not depend on it.
[ "$(grep -c '^    if (ctx->training) {  /\* an auxiliary head' "$src")" = 2 ] &&
  grep -A1 'if (ctx->training) {  /\* an auxiliary head' "$src" | grep -q '^        global_avgpool_forward(aux_gap_out' &&
  grep -A1 'if (ctx->training) {  /\* an auxiliary head' "$src" | grep -q '^        linear_forward(aux_fc_out' ||
  fail "the auxiliary branch (aux.gap, aux.fc) is not guarded by ctx->training: $(grep -n -A1 'ctx->training' "$src")"
grep -B1 '^    conv2d_forward(c2_out' "$src" | grep -q 'ctx->training' && fail "the trunk's c2 runs in training only"
# show --schedule lists the heads after the ops, the main one first
"$TRAINC" show --schedule "$tmp/heads.spec" > "$tmp/schedule" 2>"$tmp/err" || fail "show --schedule: $(head -3 "$tmp/err")"
grep -q '^1    aux.gap  *gap  *training only' "$tmp/schedule" && grep -q '^2    aux.fc  *linear  *training only' "$tmp/schedule" &&
  ! grep -q '^[345] .*training only' "$tmp/schedule" || fail "show --schedule's training-only ops: $(cat "$tmp/schedule")"
grep -A1 '^loss the loss  *main head  *on "fc", loss_weight 1; top-1 and evaluation read it$' "$tmp/schedule" |
  grep -q '^loss aux.loss  *auxiliary head  *on "aux.fc", loss_weight 0.25$' || fail "show --schedule: $(grep '^loss' "$tmp/schedule")"
[ $status = 0 ] && echo "loss heads: an auxiliary head is no unused layer; the step weighs each head in the loss and its gradient"
exit $status
