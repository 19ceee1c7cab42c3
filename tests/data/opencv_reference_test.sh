#!/usr/bin/env bash
# Caffe's image path (sanitized build) against OpenCV itself (Debian's python3-opencv): the linear
# resize bit for bit on several sizes up and down, gray and colour decodes of JPEG and PNG files
# as cv::imread makes them, and whole ImageData samples (resize, crop, mirror); a mutant (Pillow's
# filter in the sampler) must differ. See opencv_reference.py.
set -eu
source "$(dirname "$0")/../lib.sh"
[ -x "$BUILD/tests/data-tools/image_dump" ] || die "missing $BUILD/tests/data-tools/image_dump (make data-tools)"
dir=$BUILD/test-data/opencv
fresh_dir "$dir"
"$PY" tests/data/opencv_reference.py "$BUILD/tests/data-tools/image_dump" "$dir"
