#!/usr/bin/env bash
# Caffe's crop_size on an LMDB through the emulated CUDA backend: the GPU loader hands the
# device the cropped bytes (the random window of each stored 28x28 record; the center one for
# the test set), so the CUDA trainer's per-step losses are the CPU trainer's; a spec with Caffe's
# mean image (normalize.mean_file, which the device's per-channel normalization cannot apply)
# is refused by trainc build, saying so (the CUDA loader also refuses one at start-up).
set -u
source "$(dirname "$0")/emu_prelude.sh"
emu_prelude test-emu-caffe-crop
mkdir -p "$out/examples/mnist"
"$PY" tests/caffe/write_mnist_lmdb.py "${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}" "$out/examples/mnist" --small 50 \
  >/dev/null || die "writing the LMDBs"
cp tests/caffe/caffe_transform.prototxt "$out/examples/mnist/mean.prototxt"
sed 's| mean_file: "examples/mnist/mean.binaryproto"||' tests/caffe/caffe_transform.prototxt >"$out/examples/mnist/crop.prototxt"
for n in crop mean; do
  (cd "$out" && "$OLDPWD/$BUILD/trainc" import caffe examples/mnist/$n.prototxt -o $n.net.spec) >/dev/null 2>&1 || die "import $n"
  printf 'extends: "%s.net.spec"\nsolver { epochs: 2 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.01 } }\n' \
    $n >"$out/$n.spec"
done
grep -q 'random_crop { size: 24 }' "$out/crop.net.spec" || fail "the import has no crop window"
run_in_out() {  # tag spec [flags]: emu_run, from $out (the spec's database paths are relative to it)
  local tag=$1 spec=$2; shift 2
  "$BUILD/trainc" build "$out/$spec.spec" -o "$out/$tag" "$@" >"$out/$tag.build" 2>&1 || { fail "$tag: build"; tail -5 "$out/$tag.build"; return 1; }
  (cd "$out" && ./$tag --out $tag.run) >"$out/$tag.log" 2>&1
}
run_in_out cpu crop || { fail "the CPU run"; tail -5 "$out/cpu.log"; }
run_in_out cuda crop --backend cuda || { fail "the CUDA run"; tail -5 "$out/cuda.log"; }
emu_compare "crop_size 24 of 28x28 LMDB records, CUDA vs CPU" cuda cpu 1e-5
if "$BUILD/trainc" build "$out/mean.spec" -o "$out/mean_cuda" --backend cuda >"$out/mean_cuda.build" 2>&1; then
  fail "a mean image on the CUDA backend was built"
else
  grep -q "the CUDA backend normalizes each channel on the device and cannot subtract Caffe's mean image" \
    "$out/mean_cuda.build" || { fail "the refusal"; tail -3 "$out/mean_cuda.build"; }
fi
[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "Caffe's crop window on the emulated CUDA backend: the CPU's losses; its mean image refused at build"
