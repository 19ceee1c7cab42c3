#!/usr/bin/env bash
# Every external program and Python module that the tests, the demo and CI run comes from a
# Debian package mk/deps.mk installs (external_commands.py says how each is found): a program
# installed by hand on the development machine fails here, not on the next fresh machine.
# The check must also fail on a copy of the tree whose list lacks libjpeg-turbo-progs (djpeg,
# which the data tests run and which a fresh machine once lacked).
set -eu
source tests/lib.sh
"$PY" tests/deps/external_commands.py .
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r tests mk Makefile .ci "$copy"/
sed -i 's/ libjpeg-turbo-progs//' "$copy/mk/deps.mk"
if "$PY" tests/deps/external_commands.py "$copy" > "$copy/out" 2>&1; then
  die "with libjpeg-turbo-progs left out of DEB_PACKAGES the check still passed"
fi
grep -q "program 'djpeg' comes from package libjpeg-turbo-progs" "$copy/out" ||
  { cat "$copy/out"; die "the check failed without naming djpeg's package"; }
echo "ok: a list without libjpeg-turbo-progs is refused, naming djpeg"
