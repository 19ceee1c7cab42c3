#!/usr/bin/env bash
# Golden generated code: regenerates model.c, plan.txt and buckets.txt for every example spec and fails on
# any difference from generated/<name>/, so every codegen change shows up in review.
# UPDATE=1 rewrites generated/ instead.
set -u
source tests/lib.sh
status=0
for spec in specs/examples/*.spec; do
  name=$(basename "$spec" .spec)
  out=$BUILD/test-generated/$name
  rm -rf "$out" && mkdir -p "$out"
  if ! "$BUILD/trainc" build "$spec" -o "$out/trainer" --emit-dir "$out/src" > "$out/build.log" 2>&1; then
    echo "trainc build failed for $spec:"; cat "$out/build.log"; status=1; continue
  fi
  if [ "${UPDATE:-0}" = 1 ]; then
    mkdir -p "generated/$name" && cp "$out/src/model.c" "$out/src/plan.txt" "$out/src/buckets.txt" "generated/$name/"
    continue
  fi
  for f in model.c plan.txt buckets.txt; do
    if ! diff -u "generated/$name/$f" "$out/src/$f" > "$out/$f.diff"; then
      echo "generated/$name/$f differs from what trainc emits now (UPDATE=1 to accept):"
      head -40 "$out/$f.diff"; status=1
    fi
  done
done
exit $status
