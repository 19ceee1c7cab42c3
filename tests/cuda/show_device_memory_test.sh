#!/usr/bin/env bash
# `trainc show --device-memory GiB SPEC` (needs no GPU or nvcc): the reported largest batch
# fits the usable memory and one more sample does not (both needs as printed, from the CUDA
# trainer's accounting in rt_devmem.h); more memory never gives a smaller batch; a 16-bit
# precision fits a larger batch than FP32; --layout nhwc counts the channels-last weight copy;
# bad arguments are one clear usage error.
set -u
source tests/lib.sh
out=$BUILD/test-devmem
rm -rf "$out" && mkdir -p "$out"
status=0

largest() {  # GiB spec -> "batch need_mib next_need_mib usable_mib"
  "$BUILD/trainc" show --device-memory "$1" "$2" > "$out/show.txt" 2> "$out/show.err" || { cat "$out/show.err"; return 1; }
  local usable line
  usable=$(sed -n 's/.*: \([0-9.]*\) MiB usable$/\1/p' "$out/show.txt")
  line=$(sed -n 's/^  largest batch     \([0-9]*\) per rank (needs \([0-9.]*\) MiB; [0-9]* would need \([0-9.]*\) MiB)$/\1 \2 \3/p' "$out/show.txt")
  echo "$line $usable"
}

for spec in specs/examples/fmnist_resnet.spec bench/specs/gpu_resnet50.spec; do
  prev=0
  for gib in 4 16 79.1; do
    read -r b need next usable < <(largest $gib $spec)
    if [ -z "${usable:-}" ] || [ -z "${b:-}" ]; then fail "$spec at $gib GiB: no largest batch in the output:"; cat "$out/show.txt"; continue; fi
    awk -v n="$need" -v x="$next" -v u="$usable" 'BEGIN { exit !(n <= u && x > u) }' ||
      fail "$spec at $gib GiB: batch $b needs $need MiB, the next $next MiB, usable $usable MiB"
    [ "$b" -ge "$prev" ] || fail "$spec: $gib GiB gives batch $b, less than $prev with less memory"
    prev=$b
  done
  echo "ok   $spec: largest batch $prev per rank at 79.1 GiB"
done

printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/bf16.spec"
read -r b32 _ < <(largest 40 bench/specs/gpu_resnet50.spec)
read -r b16 _ < <(largest 40 "$out/bf16.spec")
[ "${b16:-0}" -gt "${b32:-0}" ] || fail "BF16 should fit a larger batch than TF32 (got $b16 vs $b32)"
echo "ok   ResNet-50 at 40 GiB: batch $b32 (TF32) vs $b16 (BF16)"

# --layout nhwc: the channels-last weight copy (2 bytes per parameter) is fixed memory too,
# as model_host.cu's start-up check counts it, and so are the per-channel partial sums at
# their 512 splits (NCHW: a split per sample, per-sample memory) over ResNet-50's widest
# sums: the last projection block's fused backward sums both its 2048-channel bns in one pass
# (lower.c add_bwd_fused), 2 doubles x 4096 x 512 = 32 MiB (rt_devmem_op_scratch), and the
# scratch of its identity blocks' bn backward folded through conv3 (fuse_bn_fold.c), at the
# largest fold's, layer4's 512 -> 2048 (rt_devmem_bn_fold_bytes: 4 MiB each of G, diag(e) W
# and diag(a) W's 16-bit copy at 2, 1 MiB each of H and M, 0.5 of -M, and per-channel
# vectors: 13,126,656 bytes); an FP32 spec is refused as build refuses it.
fixed_mib() { sed -n 's/^  fixed             \([0-9.]*\) MiB.*/\1/p' "$1"; }
"$BUILD/trainc" show --device-memory 40 "$out/bf16.spec" > "$out/nchw.txt" &&
  "$BUILD/trainc" show --device-memory 40 --layout nhwc "$out/bf16.spec" > "$out/nhwc.txt" || fail "show --layout nhwc failed"
params=$("$BUILD/trainc" show --json "$out/bf16.spec" | grep -o '"params": [0-9]*' | head -n 1 | grep -o '[0-9]*$')
awk -v a="$(fixed_mib "$out/nchw.txt")" -v b="$(fixed_mib "$out/nhwc.txt")" -v p="$params" \
  'BEGIN { d = b - a - 2 * p / 1048576 - 32 - 13126656 / 1048576; exit !(d < 0.15 && d > -0.15) }' ||
  fail "--layout nhwc should add 2 x $params bytes, 32 MiB of partial sums and 13126656 bytes of bn fold scratch of fixed memory: $(fixed_mib "$out/nchw.txt") vs $(fixed_mib "$out/nhwc.txt") MiB"
grep -q "channels-last" "$out/nhwc.txt" || fail "--layout nhwc: the report does not say channels-last"
echo "ok   ResNet-50 BF16 --layout nhwc: fixed $(fixed_mib "$out/nchw.txt") -> $(fixed_mib "$out/nhwc.txt") MiB ($params parameters x 2 bytes, 32 MiB of partial sums, 12.5 MiB of bn fold scratch)"
"$BUILD/trainc" show --device-memory 40 --layout nhwc bench/specs/gpu_resnet50.spec > /dev/null 2> "$out/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -q "layout nhwc is for 16-bit" "$out/err.txt" ||
  { fail "--layout nhwc on a TF32 spec: expected the build's refusal and exit 1, got $rc:"; cat "$out/err.txt"; }

"$BUILD/trainc" show --device-memory 0.1 specs/examples/fmnist_resnet.spec > "$out/tiny.txt" 2>&1 || fail "0.1 GiB: expected a report, got an error"
grep -q "largest batch     none" "$out/tiny.txt" || { fail "0.1 GiB should fit no batch:"; cat "$out/tiny.txt"; }

for bad in x -3 0; do
  "$BUILD/trainc" show --device-memory $bad specs/examples/fmnist_resnet.spec > /dev/null 2> "$out/err.txt"; rc=$?
  [ $rc -eq 2 ] && grep -q "positive number of GiB" "$out/err.txt" && [ "$(grep -c 'error' "$out/err.txt")" = 1 ] ||
    { fail "--device-memory $bad: expected one usage error and exit 2, got $rc:"; cat "$out/err.txt"; }
done
"$BUILD/trainc" show specs/examples/fmnist_resnet.spec --device-memory > /dev/null 2> "$out/err.txt"
[ $? -eq 2 ] && grep -q "needs the device's free memory" "$out/err.txt" || { fail "--device-memory without a value:"; cat "$out/err.txt"; }
exit $status
