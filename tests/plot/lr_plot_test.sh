#!/usr/bin/env bash
# `trainc show --lr-plot`: the LR schedule of a step, a cosine and an iteration-measured
# polynomial spec, rendered by a real SVG renderer (rsvg-convert, Debian librsvg2-bin) to a
# PNG of the size the SVG declares, with the schedule's line drawn (tests/plot/png_check.py
# decodes the PNG). A bad output path fails with one message and leaves nothing behind.
set -eu
source tests/lib.sh
command -v rsvg-convert > /dev/null || { echo "rsvg-convert missing: apt-get install librsvg2-bin" >&2; exit 1; }
dir=$BUILD/test-plot/lr
rm -rf "$dir" && mkdir -p "$dir"
for spec in goyal_resnet50_256gpu juwels_resnet50_cosine_1024gpu intelcaffe_resnet50_448node; do
  "$BUILD/trainc" show --lr-plot "$dir/$spec.svg" "specs/published/$spec.spec"
  rsvg-convert -o "$dir/$spec.png" "$dir/$spec.svg"
  "$PY" tests/plot/png_check.py "$dir/$spec.png" 760 370 "#1f77b4:400"
done
if "$BUILD/trainc" show --lr-plot "$dir/no/such/dir/x.svg" specs/examples/fmnist_mlp.spec 2> "$dir/err.txt"; then
  echo "an unwritable path was accepted" >&2; exit 1
fi
grep -q "error: cannot write" "$dir/err.txt" && ! ls "$dir/no" 2> /dev/null
