#!/usr/bin/env bash
# bench/gpu_profile_vs_model.py (the op-by-op comparison of a GPU kernel profile with
# `trainc show --gpu-cost`, run by `make device-check`) on a profile made from the model
# itself in ncu's CSV form: our kernels under their full demangled names (namespace, template
# arguments, parameters) at 1.5x the model's time, each library call as two kernels of the
# library's own names at the model's time. The comparison must give 1.50 for every kernel of
# ours, 1.00 for every library call, and the step's sum; and it must refuse a profile that
# lacks one of our kernels, or runs one the model does not list.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
out=$BUILD/test-profile-vs-model
fresh_dir "$out"
printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/r50.spec"
"$TRAINC" show --gpu-cost --layout nhwc --device h100 "$out/r50.spec" > "$out/model.txt" 2> "$out/model.err" ||
  die "trainc show --gpu-cost failed: $(cat "$out/model.err")"
"$PY" - "$out/model.txt" "$out" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("#") or len(f) != 9 or not re.fullmatch(r"-?\d+", f[0]):
        continue
    rows.append((f[3], f[4], float(f[8])))
def write(path, rows, drop=None, extra_at=None):
    with open(path, "w") as o:
        o.write('==PROF== Connected to process 1\n"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n')
        i = 0
        def put(name, ns):
            nonlocal i
            o.write(f'"{i}","1","{name}","gpu__time_duration.sum","ns","{ns:,.0f}"\n'); i += 1
        for k, (name, cls, us) in enumerate(rows):
            if k == extra_at:
                put("void bn_add_relu_nhwc_kernel<__nv_bfloat16>(const __nv_bfloat16 *)", 1000)
            if cls == "kernel":
                if k != drop:
                    put(f"void trainc::{name}<__nv_bfloat16, (int)8>(const __nv_bfloat16 *, float *, int)", us * 1500)
            else:
                put("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64", us * 600)
                put("void cudnn::engines_precompiled::nchwToNhwcKernel<float>(int, const float *)", us * 400)
    return rows
write(sys.argv[2] + "/prof.csv", rows)
first_kernel = next(k for k, r in enumerate(rows) if r[1] == "kernel" and k > 20)
write(sys.argv[2] + "/prof_missing.csv", rows, drop=first_kernel)
write(sys.argv[2] + "/prof_extra.csv", rows, extra_at=first_kernel + 1)
PY
[ $? -eq 0 ] || die "could not write the synthetic profiles"
cmp="$PY bench/gpu_profile_vs_model.py"
$cmp "$out/model.txt" "$out/prof.csv" > "$out/cmp.txt" 2> "$out/cmp.err" || die "the comparison failed on a faithful profile: $(cat "$out/cmp.err")"
per_kind=$(sed -n '/^by kernel or library class/,/^$/p' "$out/cmp.txt" | sed '1,2d;/^$/d')
[ -n "$per_kind" ] || die "no per-kernel table"
bad=$(echo "$per_kind" | grep -vcE '^[a-z_0-9]+ .* 1\.50$|^\[[a-z-]+\] .* 1\.00$')
[ "$bad" = 0 ] || die "$bad kernel lines are not 1.50 (ours) or 1.00 (library): $(echo "$per_kind" | grep -vE ' (1\.50|1\.00)$' | head -3)"
grep -q 'vec_stats_retire_kernel .* 1\.50$' "$out/cmp.txt" || die "no per-kernel line for vec_stats_retire_kernel at 1.50"
grep -q '^\[conv-fwd\] .* 1\.00$' "$out/cmp.txt" || die "no [conv-fwd] line at 1.00"
grep -q '^step: model .*ratio 1\.[0-9][0-9]; library calls model \([0-9.]*\) ms, profile \1 ms' "$out/cmp.txt" ||
  die "the step line is wrong: $(grep '^step' "$out/cmp.txt")"
if $cmp "$out/model.txt" "$out/prof_missing.csv" > /dev/null 2> "$out/missing.err"; then die "a profile missing one of our kernels was accepted"; fi
grep -q 'is not in the profile' "$out/missing.err" || die "the missing kernel was not named: $(cat "$out/missing.err")"
if $cmp "$out/model.txt" "$out/prof_extra.csv" > /dev/null 2> "$out/extra.err"; then die "a profile with a kernel the model does not list was accepted"; fi
grep -q 'bn_add_relu_nhwc_kernel' "$out/extra.err" || die "the unexpected kernel was not named: $(cat "$out/extra.err")"
echo "profile vs model: $(grep -c '' "$out/cmp.txt") lines; $(grep '^step' "$out/cmp.txt" | cut -d';' -f1); missing and stray kernels refused"
