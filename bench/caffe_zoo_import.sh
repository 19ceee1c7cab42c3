#!/usr/bin/env bash
# The public Caffe model zoos' classification training nets through `trainc import caffe` as
# they are (no --approximate): the rate of nets that import, with their solver where one names
# them, and the failures' reasons tallied. A bench, not a test: the zoos are not in the tree
# (their licenses), so it reads Caffe checkouts or git directories given on the command line:
#   bash bench/caffe_zoo_import.sh [ZOO ...]     (default: the mirrors under /work/.mirror)
# ZOO is a checkout or a git dir (its HEAD is exported). Each zoo is copied under
# build/caffe_zoo/NAME, which is where the imports run (Caffe's paths are relative to its root);
# the databases the nets read are the user's, so bench/caffe_zoo.py stands in small ones at the
# size Caffe's scripts write (see there). Which nets count: bench/caffe_zoo.py list.
# Output: one line a net (ok / FAIL and the first error) and a solver (with its net), the per-zoo
# and overall rates (the nets alone, the nets with the first solver that names them, every
# solver with its net), and the reasons tallied (names and numbers blanked).
set -u
cd "$(dirname "$0")/.."
TRAINC=${TRAINC:-$PWD/build/trainc}
PY=/usr/bin/python3
[ -x "$TRAINC" ] || { echo "missing $TRAINC (make trainc)" >&2; exit 1; }
if [ $# = 0 ]; then
  set --
  for r in BVLC+caffe NVIDIA+caffe intel+caffe KaimingHe+deep-residual-networks lim0606+caffe-googlenet-bn \
           yihui-he+resnet-cifar10-caffe; do
    for g in /work/.mirror/$r/repo/.git /work/.mirror/$r/repo; do [ -e "$g/HEAD" ] && { set -- "$@" "$g"; break; }; done
  done
fi
out=build/caffe_zoo
mkdir -p "$out"
log=$out/results.txt
: >"$log"
for zoo in "$@"; do
  case $zoo in */repo|*/repo/.git) name=$(echo "$zoo" | sed -E 's|.*/([^/]+)/repo(/\.git)?$|\1|') ;; *) name=$(basename "$zoo") ;; esac
  root=$out/$name
  rm -rf "$root" && mkdir -p "$root"
  if [ -f "$zoo/HEAD" ]; then
    # file by file: a mirror may lack some blobs (its largest files), which stops git archive
    git --git-dir="$zoo" ls-tree -r --name-only HEAD | grep -E '\.(prototxt|txt)$' | while read -r f; do
      mkdir -p "$root/$(dirname "$f")" && git --git-dir="$zoo" show "HEAD:$f" >"$root/$f" 2>/dev/null || rm -f "$root/$f"
    done
  else
    (cd "$zoo" && find . -name '*.prototxt' -print0 | cpio -0pdm --quiet "$OLDPWD/$root")
  fi
  "$PY" bench/caffe_zoo.py list "$root" >"$root.list"
  while read -r kind net rest; do
    if [ "$kind" = skip ]; then echo "$name skip $net $rest" >>"$log"; continue; fi
    net=$("$PY" bench/caffe_zoo.py standin "$root" "$net")
    # the net alone, then each solver that names it, with it
    (cd "$root" && "$TRAINC" import caffe "$net" -o "$PWD/../$name.out.spec") >/dev/null 2>"$root.err"
    if [ $? = 0 ]; then
      echo "$name ok $net" >>"$log"
    else
      echo "$name FAIL $net :: $(grep -m1 'error:' "$root.err" | sed -E 's/^.*error: //')" >>"$log"
    fi
    first=1
    for s in $rest; do
      if (cd "$root" && "$TRAINC" import caffe "$net" "$s" -o "$PWD/../$name.out.spec") >/dev/null 2>"$root.err"; then
        echo "$name solver-ok $s $first" >>"$log"
      else
        echo "$name solver-FAIL $s $first :: $(grep -m1 'error:' "$root.err" | sed -E 's/^.*error: //')" >>"$log"
      fi
      first=0
    done
  done <"$root.list"
done
grep -E ' (ok|FAIL|solver-ok|solver-FAIL) ' "$log"
echo
for zoo in $(awk '{print $1}' "$log" | sort -u); do
  ok=$(grep -c "^$zoo ok " "$log"); bad=$(grep -c "^$zoo FAIL " "$log"); sk=$(grep -c "^$zoo skip " "$log")
  echo "$zoo: $ok of $((ok + bad)) classification training nets import ($sk other nets skipped)"
done
ok=$(grep -c ' ok ' "$log"); bad=$(grep -c ' FAIL ' "$log")
sok=$(grep -c ' solver-ok ' "$log"); sbad=$(grep -c ' solver-FAIL ' "$log")
fok=$(grep -c ' solver-ok .* 1$' "$log"); fbad=$(grep -c ' solver-FAIL [^ ]* 1 ::' "$log")
pct() { echo $(( $1 * 100 / ($2 > 0 ? $2 : 1) )); }
echo "nets: $ok of $((ok + bad)) classification training nets import as they are, without --approximate ($(pct $ok $((ok + bad)))%)"
echo "nets with their solver (the first that names them): $fok of $((fok + fbad)) ($(pct $fok $((fok + fbad)))%)"
echo "solvers: $sok of $((sok + sbad)) import with their net ($(pct $sok $((sok + sbad)))%)"
echo
echo "reasons (first error of each failing net, names and numbers blanked):"
grep ' FAIL ' "$log" | sed -E 's/.* :: //; s/"[^"]*"/"_"/g; s/[0-9]+(\.[0-9]+)?/N/g' | sort | uniq -c | sort -rn
echo
echo "solver reasons:"
grep ' solver-FAIL ' "$log" | sed -E 's/.* :: //; s/"[^"]*"/"_"/g; s/[0-9]+(\.[0-9]+)?/N/g' | sort | uniq -c | sort -rn
echo
echo "skipped (not classification training nets):"
grep ' skip ' "$log" | sed -E 's/^[^ ]+ skip [^ ]+ //; s/\(.*//' | sort | uniq -c | sort -rn
