# Shared by every test script (tests/*/*_test.sh): `source tests/lib.sh` right after `set`.
# The scripts run from the repository root, as tests/run_all.sh and `make test` start them.
#   BUILD   the build directory (make's BUILD; build by default)
#   TRAINC  the compiler under test, $BUILD/trainc
#   PY      Debian's python3, whose modules come from the packages mk/deps.mk installs (a
#           python3 earlier on PATH, such as a pyenv one, may lack them)
#   fail MSG        prints "FAIL: MSG", counts it in $failures and sets status=1
#   die MSG         prints "FAIL: MSG" on stderr and exits 1
#   need_trainc     stops (die) unless $TRAINC was built
#   fresh_dir DIR   an empty DIR
#   SAN_LIBS        link flags every sanitized binary takes (the Makefile's SAN_LDLIBS: why there)
BUILD=${BUILD:-build}
TRAINC=$BUILD/trainc
PY=/usr/bin/python3
SAN_LIBS="-Wl,--no-as-needed -l:libdnnl.so.2 -Wl,--as-needed"
# for the functions a test runs in child shells (export -f, xargs bash -c)
export BUILD TRAINC PY SAN_LIBS
status=0
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); status=1; }
die() { echo "FAIL: $*" >&2; exit 1; }
need_trainc() { [ -x "$TRAINC" ] || die "missing $TRAINC (run make trainc)"; }
fresh_dir() { rm -rf "$1" && mkdir -p "$1"; }
