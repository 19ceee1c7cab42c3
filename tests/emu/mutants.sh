#!/usr/bin/env bash
# Shows the emulator catching broken CUDA code: each mutant is a copy of one runtime file
# with one deliberate mistake, compiled by emu-nvcc and linked ahead of libtrainrt_cuda into
# tests/gpu/test_ops_gpu, which must then fail. Not part of `make test` (three relinks and
# runs, about two minutes); run after `make emu`:  bash tests/emu/mutants.sh
#   index:    relu.cu writes out[i + 1] (ASan: heap-buffer-overflow, with the line)
#   barrier:  cuda_common.cuh's block_sum without its second __syncthreads (softmax_xent.cu's
#             batch-mean loss reads other warps' partial sums before they are written)
#   layout:   conv2d.cu describes the KCRS weights as KRSC (filter format NHWC)
set -u
BUILD=${BUILD:-build}
tmp=$BUILD/emu/mutants
rm -rf "$tmp" && mkdir -p "$tmp"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
status=0
mutant() {  # name, file (under runtime/cuda), perl substitution, compiled file, expected text
  local name=$1 file=$2 subst=$3 unit=$4 want=$5 d=$tmp/$1
  mkdir -p "$d/cuda/ops" && cp runtime/cuda/*.cu runtime/cuda/*.cuh "$d/cuda/" && cp runtime/cuda/ops/* "$d/cuda/ops/"
  perl -0pi -e "$subst" "$d/cuda/$file"
  if cmp -s "$d/cuda/$file" "runtime/cuda/$file"; then echo "FAIL: mutant $name did not change $file"; status=1; return; fi
  EMU_CXXFLAGS="$san" tests/emu/emu-nvcc -Iruntime/include -DRT_HAVE_NCCL=1 -c "$d/cuda/$unit" -o "$d/mutant.o" &&
    c++ -fopenmp "$BUILD/emu/test_ops_gpu.o" "$d/mutant.o" "$BUILD/emu/libtrainrt_cuda.a" "$BUILD/emu/libcudaemu.a" $san \
      "$BUILD/asan/libtrainrt.a" -lopenblas -lz -lm $(mpicc --showme:link) -lpthread -ldl -lrt -o "$d/test_ops_gpu" ||
    { echo "FAIL: building mutant $name"; status=1; return; }
  (ASAN_OPTIONS=detect_leaks=0 exec "$d/test_ops_gpu") > "$d/log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && grep -q "$want" "$d/log"; then
    echo "caught mutant $name (exit $rc): $(grep -m1 "$want" "$d/log" | cut -c1-160)"
  else
    echo "FAIL: mutant $name was not caught (exit $rc):"; tail -5 "$d/log"; status=1
  fi
}
mutant index ops/relu.cu 's/out\[i\] = rt_st<T>\(x > 0/out[i + 1] = rt_st<T>(x > 0/' ops/relu.cu "heap-buffer-overflow"
mutant barrier cuda_common.cuh 's/(warp_part\[warp\] = v;\n)    __syncthreads\(\);\n/$1/' ops/softmax_xent.cu "FAIL .*softmax"
mutant layout ops/conv2d.cu 's/cudnnSetFilter4dDescriptor\(c->w, dt, f,/cudnnSetFilter4dDescriptor(c->w, dt, CUDNN_TENSOR_NHWC,/' \
  ops/conv2d.cu "FAIL .*conv"
exit $status
