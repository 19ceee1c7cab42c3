#!/usr/bin/env bash
# Prepares a GPU machine that has CUDA and PyTorch but none of the build's Debian packages and
# no network (the project's lent H100/H200 machines): on the development machine, `fetch`
# downloads the .deb files the build links against plus Fashion-MNIST into DIR (default
# .devdeps, git-ignored: carry it); on the GPU machine, `source tests/gpu/device_prep.sh
# install DIR` unpacks them under DIR/root (never into /) and exports the paths that cc, the
# linker and the trainers need, and WITH_MPI=0 where there is no mpicc (the build then has no
# MPI: one GPU per run). Used on a lent H100 on 2026-11-24 (tests/gpu/on_device.sh drives it).
set -u
cmd=${1:-}; dir=${2:-.devdeps}
pkgs="libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0 libgfortran5 libquadmath0 zlib1g-dev flex bison libfl-dev libfl2 m4
      libturbojpeg0-dev libturbojpeg0 libjpeg62-turbo-dev libjpeg62-turbo libpng-dev libpng16-16 libdnnl-dev libdnnl2"
case "$cmd" in
fetch)
  mkdir -p "$dir/debs" "$dir/fashion-mnist"
  (cd "$dir/debs" && apt-get download $pkgs) || { echo "error: apt-get download failed" >&2; exit 1; }
  cp /usr/share/datasets/fashion-mnist/*.gz "$dir/fashion-mnist/" ||
    { echo "error: Fashion-MNIST not found in /usr/share/datasets/fashion-mnist" >&2; exit 1; }
  exclude=$(git rev-parse --git-path info/exclude)   # keep DIR out of git status and commits
  mkdir -p "$(dirname "$exclude")"
  grep -qx "/$dir/" "$exclude" 2>/dev/null || echo "/$dir/" >> "$exclude"
  echo "fetched into $dir; carry it (run tool: carry [\"$dir\"]) and 'source tests/gpu/device_prep.sh install $dir' there"
  ;;
install)
  root=$(cd "$dir" && pwd)/root
  mkdir -p "$root"
  for f in "$dir"/debs/*.deb; do dpkg -x "$f" "$root"; done
  lib=$root/usr/lib/x86_64-linux-gnu
  # openblas ships as an alternative: give the linker the names it looks for
  [ -e "$lib/libopenblas.so" ] || ln -sf "$(ls "$lib"/openblas-pthread/libopenblas.so* | head -1)" "$lib/libopenblas.so"
  export PATH=$root/usr/bin:$PATH
  export LIBRARY_PATH=$lib:$lib/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export C_INCLUDE_PATH=$root/usr/include:$root/usr/include/x86_64-linux-gnu/openblas-pthread${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
  export BISON_PKGDATADIR=$root/usr/share/bison M4=$root/usr/bin/m4
  export FMNIST_DIR=$(cd "$dir" && pwd)/fashion-mnist
  # No Open MPI there: build trainc and the runtime without it (one process per GPU run)
  command -v mpicc >/dev/null 2>&1 || export WITH_MPI=0
  # nor liblmdb and protobuf-c (Caffe's LMDBs): build without the LMDB reader (mk/lmdb.mk)
  command -v protoc-c >/dev/null 2>&1 || export WITH_LMDB=0 WITH_ONNX=0
  # nor libhdf5 (Caffe's HDF5Data): build without the HDF5 reader (mk/hdf5.mk)
  pkg-config --exists hdf5 >/dev/null 2>&1 || export WITH_HDF5=0
  mkdir -p build && touch build/.deps-ok   # the packages are here, not in dpkg's database
  echo "device_prep: build dependencies under $root; FMNIST_DIR=$FMNIST_DIR; WITH_MPI=${WITH_MPI:-1}; WITH_LMDB=${WITH_LMDB:-1}; WITH_HDF5=${WITH_HDF5:-1}"
  ;;
*) echo "usage: tests/gpu/device_prep.sh fetch|install [DIR]" >&2; exit 2 ;;
esac
