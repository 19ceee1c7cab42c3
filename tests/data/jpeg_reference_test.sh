#!/usr/bin/env bash
# The JPEG decode and sample path (sanitized build) against Pillow and djpeg on generated
# JPEGs: 4:2:0, 4:4:4, progressive, grayscale and CMYK files; see reference_test.py.
set -eu
source tests/lib.sh
dir=$BUILD/test-data/reference
rm -rf "$dir" && mkdir -p "$dir"
"$PY" tests/data/reference_test.py "$BUILD" "$dir"
