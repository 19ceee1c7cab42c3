#!/usr/bin/env bash
# Sourced by bench/bench_cpu.sh: a current PyTorch 2.x from PyPI in its own virtual
# environment under $BUILD/bench/torch2-venv (never used by `make test`). Sets TORCH2_PY and
# the LD_LIBRARY_PATH it needs, or returns non-zero with a message.
# PyPI's Linux x86-64 torch wheel is the CUDA build: its default dependencies are several GB
# of NVIDIA wheels. The CPU bench installs the wheel with --no-deps, its pure-Python
# dependencies, and only the small NVIDIA wheels whose libraries the CUDA 13 toolkit under
# /usr/local/cuda (which the CUDA backend's build needs anyway) does not have or has too old
# (cuFile, cuSPARSELt, NVSHMEM, NCCL); the libraries are linked in, never run on a GPU here.
# The versions are the ones torch's own metadata pins.
TORCH2_VERSION=${TORCH2_VERSION:-2.15.0}
TORCH2_VENV=$BUILD/bench/torch2-venv
TORCH2_PY=$TORCH2_VENV/bin/python
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}

torch2_site() { echo "$(cd "$TORCH2_VENV" && pwd)/lib/python$("$TORCH2_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')/site-packages"; }

torch2_setup() {
  if [ ! -x "$TORCH2_PY" ] || ! "$TORCH2_PY" -c "import importlib.metadata as m; assert m.version('torch').startswith('$TORCH2_VERSION')" 2>/dev/null; then
    echo "bench-cpu: installing torch $TORCH2_VERSION from PyPI into $TORCH2_VENV (once; about 0.8 GB)" >&2
    /usr/bin/python3 -m venv "$TORCH2_VENV" || return 1
    "$TORCH2_PY" -m pip install -q --no-deps "torch==$TORCH2_VERSION" filelock typing-extensions setuptools \
      sympy mpmath networkx jinja2 markupsafe fsspec numpy \
      nvidia-cufile "nvidia-cusparselt-cu13==0.8.1" "nvidia-nvshmem-cu13==3.7.2" "nvidia-nccl-cu13==2.30.7" >&2 || return 1
  fi
  if [ ! -e "$CUDA_LIB/libcudart.so.13" ]; then
    echo "error: torch $TORCH2_VERSION's wheel links CUDA 13 libraries, not found in $CUDA_LIB" >&2
    echo "HINT: install the CUDA 13 toolkit (with cuDNN 9) there, or set CUDA_LIB to its lib64" >&2
    return 1
  fi
  local sp; sp=$(torch2_site)
  export LD_LIBRARY_PATH=$sp/nvidia/nccl/lib:$sp/nvidia/cusparselt/lib:$sp/nvidia/cu13/lib:$sp/nvidia/nvshmem/lib:$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  "$TORCH2_PY" -c 'import torch; torch.ones(2) @ torch.ones(2)' || {
    echo "error: 'import torch' fails in $TORCH2_VENV (above)" >&2
    echo "HINT: rm -rf $TORCH2_VENV and run make bench-cpu again" >&2; return 1; }
}
