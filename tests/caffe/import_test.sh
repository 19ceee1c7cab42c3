#!/usr/bin/env bash
# trainc import caffe: the Caffe LeNet, AlexNet and ResNet of tests/caffe import WITHOUT
# --approximate (lr_mult / decay_mult, ceil-mode pooling and BatchNorm + Scale all map
# exactly), the spec equals its golden, checks, shows Caffe's learnable parameter count
# (tests/caffe/caffe_params.py, an independent count over the prototxt) and builds a CPU
# trainer; with their solvers (in iterations) they import exactly too, Caffe's SGD (the LR
# inside the velocity) as sgd.lr_in_velocity. Every construct in
# tests/caffe/accepted (once refused) imports without --approximate to its golden spec and
# checks with Caffe's parameter count; every one in tests/caffe/errors gives its golden error (exit 1) and leaves -o's
# file as it was. UPDATE=1 rewrites the goldens (review the diff).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
TRAINC=$root/$BUILD/trainc
need_trainc
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd tests/caffe
n=0
has_iterations=0
"$TRAINC" schema --markdown | grep -q 'every_iterations' && has_iterations=1

for net in lenet alexnet resnet; do
  n=$((n + 1))
  # the net alone, exact: stable text whatever the solver fields
  "$TRAINC" import caffe $net.prototxt -o "$tmp/$net.net.spec" >/dev/null 2>"$tmp/err" || { fail "$net: import without --approximate"; cat "$tmp/err"; continue; }
  grep -q "approximated" "$tmp/$net.net.spec" && fail "$net: the exact import notes an approximation"
  # with its solver, exact too: Caffe's SGD is sgd.lr_in_velocity (the LR inside the velocity)
  if ! "$TRAINC" import caffe $net.prototxt ${net}_solver.prototxt -o "$tmp/$net.spec" >/dev/null 2>"$tmp/err"; then
    fail "$net with its solver: import without --approximate"; head -3 "$tmp/err"
  elif ! grep -q "lr_in_velocity: true" "$tmp/$net.spec" || grep -q "approximated" "$tmp/$net.spec"; then
    fail "$net with its solver: expected Caffe's SGD form (lr_in_velocity) and no approximation"; grep sgd "$tmp/$net.spec"
  fi
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/$net.net.spec" golden/$net.spec
  cmp -s golden/$net.spec "$tmp/$net.net.spec" || { fail "$net: spec differs from tests/caffe/golden/$net.spec"; diff -u golden/$net.spec "$tmp/$net.net.spec" | head -20; }
  spec=$tmp/$net.net.spec
  if [ $has_iterations = 1 ]; then
    "$TRAINC" import caffe $net.prototxt ${net}_solver.prototxt -o "$tmp/$net.spec" >/dev/null 2>"$tmp/err" \
      || { fail "$net with its solver: import"; cat "$tmp/err"; continue; }
    grep -q '^  iterations: ' "$tmp/$net.spec" || fail "$net: no solver.iterations in the spec"
    spec=$tmp/$net.spec
  elif "$TRAINC" import caffe --approximate $net.prototxt ${net}_solver.prototxt -o "$tmp/$net.spec" >/dev/null 2>"$tmp/err" \
       || ! grep -q "error: Caffe's [a-z_]* counts iterations, and this trainc has no '[a-z_.]*iterations'" "$tmp/err"; then
    fail "$net with its solver: expected the error naming the missing *iterations field"; head -3 "$tmp/err"
  else
    # build needs a solver: one in epochs, by hand, over the imported net
    printf 'extends: "%s"\nsolver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }\n' "$net.net.spec" >"$tmp/$net.run.spec"
    spec=$tmp/$net.run.spec
  fi
  "$TRAINC" check "$spec" || { fail "$net: the imported spec does not check"; continue; }
  want=$("$PY" caffe_params.py $net.prototxt)
  got=$("$TRAINC" show "$spec" | sed -nE 's/^params ([0-9]+) .*/\1/p')
  [ "$got" = "$want" ] || fail "$net: show gives $got params, Caffe has $want"
  "$TRAINC" build "$spec" -o "$tmp/$net.bin" >/dev/null 2>"$tmp/err" && [ -x "$tmp/$net.bin" ] \
    || { fail "$net: build"; tail -5 "$tmp/err"; continue; }
  echo "$net: $got params (Caffe: $want), checks and builds ($(basename "$spec"))"
done

# Unsupported constructs: the net ones alone, the solver ones with the LeNet net.
for input in errors/*.prototxt; do
  n=$((n + 1))
  name=$(basename "$input" .prototxt)
  args=(--approximate "$input")
  case $name in
    filler|scale_filler|scale_bias_filler) args=("$input") ;;
    *.solver) args=(--approximate lenet.prototxt "$input"); name=${name%.solver} ;;
  esac
  echo "written before the import" >"$tmp/out.spec"
  rc=0
  "$TRAINC" import caffe "${args[@]}" -o "$tmp/out.spec" >"$tmp/stdout" 2>"$tmp/err" || rc=$?
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/err" errors/$name.err
  [ $rc = 1 ] || fail "$name: exit status $rc, expected 1"
  [ -s "$tmp/stdout" ] && fail "$name: wrote to stdout"
  [ "$(cat "$tmp/out.spec")" = "written before the import" ] || fail "$name: the -o file was changed"
  cmp -s errors/$name.err "$tmp/err" || { fail "$name: stderr differs from tests/caffe/errors/$name.err"; diff -u errors/$name.err "$tmp/err" | head -12; }
done

# Once refused, now exact: the net ones alone, the solver ones with the LeNet net.
for input in accepted/*.prototxt; do
  n=$((n + 1))
  name=$(basename "$input" .prototxt)
  args=("$input")
  case $name in *.solver) args=(lenet.prototxt "$input") ;; esac
  "$TRAINC" import caffe "${args[@]}" -o "$tmp/acc.spec" >/dev/null 2>"$tmp/err" || { fail "$name: import"; head -5 "$tmp/err"; continue; }
  [ "${UPDATE:-0}" = 1 ] && cp "$tmp/acc.spec" accepted/$name.spec
  cmp -s accepted/$name.spec "$tmp/acc.spec" || { fail "$name: spec differs from tests/caffe/accepted/$name.spec"; diff -u accepted/$name.spec "$tmp/acc.spec" | head -12; }
  case $name in
    *.solver) printf 'extends: "%s"\ndata { train { source: "synthetic" samples: 64 } }\n' "$tmp/acc.spec" >"$tmp/acc.run.spec" ;;
    *) printf 'extends: "%s"\nsolver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }\n' "$tmp/acc.spec" >"$tmp/acc.run.spec" ;;
  esac
  "$TRAINC" check "$tmp/acc.run.spec" >"$tmp/err" 2>&1 || { fail "$name: the imported spec does not check"; head -5 "$tmp/err"; continue; }
  case $name in *.solver) continue ;; esac
  want=$("$PY" caffe_params.py "$input") got=$("$TRAINC" show "$tmp/acc.run.spec" | sed -nE 's/^params ([0-9]+) .*/\1/p')
  [ -n "$want" ] && [ "$got" = "$want" ] || fail "$name: show gives $got params, Caffe has $want"
done

# Usage errors exit 2, and an -o naming an input is refused with the input intact.
n=$((n + 1))
cp lenet.prototxt "$tmp/net.prototxt"
rc=0; "$TRAINC" import caffe "$tmp/net.prototxt" -o "$tmp/net.prototxt" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "would overwrite an input" "$tmp/err" || fail "-o over the input: exit $rc, $(head -1 "$tmp/err")"
cmp -s lenet.prototxt "$tmp/net.prototxt" || fail "-o over the input changed it"
# An -o into a folder that does not exist: the import fails (1, not the usage status 2) and
# says which folder; nothing is written.
n=$((n + 1))
rc=0; "$TRAINC" import caffe lenet.prototxt -o "$tmp/no/such/dir/x.spec" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc = 1 ] && grep -q "^trainc: error: cannot write the spec to '$tmp/no/such/dir/x.spec'" "$tmp/err" &&
  grep -q "create it first" "$tmp/err" && [ ! -e "$tmp/no" ] || fail "-o into a missing folder: exit $rc, $(head -2 "$tmp/err")"
for args in "caffe lenet.prototxt" "caffe -o $tmp/x.spec" "onnx lenet.prototxt -o $tmp/x.spec" "caffe a b c -o $tmp/x.spec"; do
  n=$((n + 1))
  rc=0; "$TRAINC" import $args 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] && grep -q "^trainc: error: " "$tmp/err" || fail "trainc import $args: exit $rc, $(head -1 "$tmp/err")"
done

# Data layers over LMDBs (50 Fashion-MNIST images a split, written as Caffe's convert_mnist_data
# does): BVLC's LeNet imports its input shape and training-set size from the database; a
# mean_file (written as compute_image_mean does) imports exactly as normalize.mean_file in both
# splits (the trainer subtracts the image), and crop_size below the stored 28x28 as a random
# window in training and the center one in test (tests/caffe/caffe_transform_test.sh runs them);
# a crop larger than the images is refused.
n=$((n + 1))
mkdir -p "$tmp/caffe_root/examples/mnist"
cp bvlc_mnist/*.prototxt "$tmp/caffe_root/examples/mnist/"
"$PY" write_mnist_lmdb.py "${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}" "$tmp/caffe_root/examples/mnist" --small 50 >/dev/null
sed 's|    scale: 0.00390625|    scale: 0.00390625\n    mean_file: "examples/mnist/mean.binaryproto"|' bvlc_mnist/lenet_train_test.prototxt \
  >"$tmp/caffe_root/examples/mnist/mean_file.prototxt"
sed 's|    scale: 0.00390625|    scale: 0.00390625\n    crop_size: 24|' bvlc_mnist/lenet_train_test.prototxt \
  >"$tmp/caffe_root/examples/mnist/crop.prototxt"
sed 's|    scale: 0.00390625|    scale: 0.00390625\n    crop_size: 30|' bvlc_mnist/lenet_train_test.prototxt \
  >"$tmp/caffe_root/examples/mnist/crop_large.prototxt"
sed 's|    scale: 0.00390625|    scale: 0.00390625\n    crop_size: 28|' bvlc_mnist/lenet_train_test.prototxt \
  >"$tmp/caffe_root/examples/mnist/crop_whole.prototxt"
sed 's|    batch_size: 64|    batch_size: 64\n    cache: true\n    shuffle: true\n    threads: 4|' bvlc_mnist/lenet_train_test.prototxt \
  >"$tmp/caffe_root/examples/mnist/nvcaffe_cache.prototxt"
(
  cd "$tmp/caffe_root" || exit 1
  "$TRAINC" import caffe examples/mnist/lenet_train_test.prototxt -o lmdb.spec >summary 2>err || { cat err; exit 1; }
  grep -q '^  input_shape: \[1, 28, 28\]$' lmdb.spec && grep -q '^  train_samples: 50 ' lmdb.spec &&
    grep -q 'data TRAIN: Data "mnist" -> data.train, lmdb examples/mnist/mnist_train_lmdb (50 records of 1x28x28)' summary ||
    { echo "the LMDB import:"; sed -n '/^data/,$p' lmdb.spec; cat summary; exit 1; }
  "$TRAINC" check lmdb.spec >/dev/null || exit 1
  "$TRAINC" import caffe examples/mnist/mean_file.prototxt -o mean.spec >summary 2>err || { echo "mean_file:"; cat err; exit 1; }
  [ "$(grep -c 'normalize { mean_file: "examples/mnist/mean.binaryproto" scale: 0.00390625 }' mean.spec)" = 2 ] &&
    ! grep -q approximated mean.spec && grep -q 'mean image examples/mnist/mean.binaryproto' summary ||
    { echo "mean_file, exact in both splits:"; sed -n '/^data/,$p' mean.spec; exit 1; }
  "$TRAINC" check mean.spec >/dev/null || exit 1
  "$TRAINC" import caffe examples/mnist/crop.prototxt -o crop.spec >summary 2>err || { echo "crop_size:"; cat err; exit 1; }
  grep -q '^  input_shape: \[1, 24, 24\]$' crop.spec && grep -q 'augment { random_crop { size: 24 } }' crop.spec &&
    grep -q 'center_crop: 24' crop.spec && grep -q '(50 records of 1x28x28), batch 64, random crop 24' summary ||
    { echo "crop_size 24 of 28x28:"; sed -n '/^net/,$p' crop.spec; cat summary; exit 1; }
  "$TRAINC" check crop.spec >/dev/null || exit 1
  # crop_size at the stored size is the whole image; Caffe reads a database in key order, NVCaffe's
  # cache + shuffle reorders it every epoch as trainc does (no note then), its threads are notes
  "$TRAINC" import caffe examples/mnist/crop_whole.prototxt -o whole.spec >/dev/null 2>err &&
    grep -q '^  input_shape: \[1, 28, 28\]$' whole.spec && ! grep -q 'random_crop\|center_crop' whole.spec &&
    grep -q 'Caffe reads the database in key order' whole.spec || { echo "crop_size 28 of 28x28:"; cat err; cat whole.spec; exit 1; }
  "$TRAINC" import caffe examples/mnist/nvcaffe_cache.prototxt -o cache.spec >/dev/null 2>err &&
    ! grep -q 'key order' cache.spec && grep -q 'threads: how NVCaffe reads in parallel' cache.spec ||
    { echo "NVCaffe's cache + shuffle:"; cat err; head -8 cache.spec; exit 1; }
  rc=0; "$TRAINC" import caffe examples/mnist/crop_large.prototxt -o large.spec 2>err || rc=$?
  [ $rc = 1 ] && grep -q 'crop_size 30 is larger than the database.s 28x28 images' err || { echo "crop 30 of 28: exit $rc"; cat err; exit 1; }
) >"$tmp/lmdb.log" 2>&1 || fail "Data layers over LMDBs: $(cat "$tmp/lmdb.log")"

# An Adam solver with a poly policy and weight decay: exact as adamw.caffe_form (Caffe adds the
# decay to the gradient and delta to the uncorrected sqrt(v)), without --approximate.
n=$((n + 1))
printf 'net: "lenet.prototxt"\ntype: "Adam"\nbase_lr: 0.001\nmomentum: 0.9\nmomentum2: 0.999\ndelta: 1e-8\nweight_decay: 0.0005\nlr_policy: "poly"\npower: 1\nmax_iter: 100\n' \
  >"$tmp/adam.solver.prototxt"
"$TRAINC" import caffe lenet.prototxt "$tmp/adam.solver.prototxt" -o "$tmp/adam.spec" >/dev/null 2>"$tmp/err" &&
  grep -q "adamw { beta1: 0.9 beta2: 0.999 eps: 1e-08 weight_decay: 0.0005 caffe_form: true }" "$tmp/adam.spec" &&
  ! grep -q "approximated" "$tmp/adam.spec" || { fail "Adam solver:"; cat "$tmp/err"; grep adamw "$tmp/adam.spec"; }

if [ $failures -gt 0 ]; then echo "$failures failure(s) in $n cases"; exit 1; fi
echo "caffe import: $n cases pass"
