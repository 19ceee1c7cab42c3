#!/usr/bin/env bash
# Builds the fuzzer's seed corpus in DIR (default $BUILD/fuzz/seeds) from the repo's own
# specs: models, examples, published runs and their recipes, the golden error specs, and
# the regression reproducers. The corpus is a build product: never committed.
set -eu
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
dir=${1:-$BUILD/fuzz/seeds}
rm -rf "$dir"; mkdir -p "$dir"
i=0
while IFS= read -r f; do
  i=$((i + 1))
  cp "$f" "$dir/$(printf '%03d' "$i")-$(basename "$f")"
done < <(find specs tests/golden/errors $(ls -d tests/fuzz/regressions 2>/dev/null) -type f \
           \( -name '*.spec' -o -name '*.inc' -o -name 'crash-*' -o -name '*.repro' \) | sort)
echo "$i seeds in $dir"
