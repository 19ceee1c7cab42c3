#!/usr/bin/env bash
# Gradient buckets: the plan `trainc show --buckets` prints for small nets matches its golden
# file (tests/golden/buckets; UPDATE=1 rewrites them), `trainc build` writes the same plan
# beside model.c and calls rt_grad_bucket_ready once per bucket, in order; and for
# ResNet-50 the buckets tile the gradient buffer contiguously in layout order, each within
# the cap unless it is a single larger tensor.
set -eu
source tests/lib.sh
dir=$BUILD/test-mpi/buckets
rm -rf "$dir" && mkdir -p "$dir"
fail=0
for spec in tests/mpi/specs/dp_conv.spec specs/examples/fmnist_resnet.spec; do
  name=$(basename "$spec" .spec)
  golden=tests/golden/buckets/$name.txt
  "$BUILD/trainc" show --buckets "$spec" > "$dir/$name.txt"
  if [ "${UPDATE:-0}" = 1 ]; then cp "$dir/$name.txt" "$golden"; fi
  diff -u "$golden" "$dir/$name.txt" || { echo "bucket plan of $spec differs from $golden" >&2; fail=1; }
done

"$BUILD/trainc" build tests/mpi/specs/dp_conv.spec -o "$dir/dp_conv" --emit-dir "$dir/dp_conv.src" > /dev/null
diff -u "$dir/dp_conv.txt" "$dir/dp_conv.src/buckets.txt" || { echo "build's buckets.txt differs from show --buckets" >&2; fail=1; }
calls=$(grep -o 'rt_grad_bucket_ready(ctx->comm, [0-9]*)' "$dir/dp_conv.src/model.c" | grep -o '[0-9]*)' | tr -d ')' | tr '\n' ' ')
[ "$calls" = "0 1 2 " ] || { echo "expected hooks for buckets 0 1 2 in order, got: $calls" >&2; fail=1; }

"$BUILD/trainc" show --buckets specs/models/resnet50.spec > "$dir/resnet50.txt"
"$PY" - "$dir/resnet50.txt" <<'PY'
import re, sys
rows = [l.split() for l in open(sys.argv[1]) if re.match(r"^\d+\s+\d+\s+\d+", l)]
total = int(re.search(r"(\d+) params", open(sys.argv[1]).read().splitlines()[-1]).group(1))
cap = 25 * 1048576
offset = 0
for r in rows:
    k, off, count, nbytes, tensors = map(int, r[:5])
    assert off == offset, f"bucket {k} starts at {off}, expected {offset}: not contiguous"
    assert nbytes == 4 * count
    assert nbytes <= cap or tensors == 1, f"bucket {k}: {nbytes} bytes over the cap with {tensors} tensors"
    offset += count
assert offset == total, f"buckets cover {offset} of {total} params"
print(f"resnet50: {len(rows)} buckets tile {total} params contiguously within 25 MiB")
PY
exit $fail
