# CUDA backend: build/libtrainrt_cuda.a from runtime/cuda/**/*.cu (nvcc), and build/cuda.env,
# which tells `trainc build --backend cuda` how to compile and link a GPU trainer.
#
#   make cuda                         # default architectures sm_80 and sm_90
#   make cuda CUDA_ARCHS="90"         # one architecture (faster to build)
#   make cuda CUDNN_HOME=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn
#
# cuDNN and NCCL are looked for in CUDA_HOME, then /usr, then PyTorch's nvidia-* wheels of
# the python3 on PATH (many GPU machines have them only there); CUDNN_HOME / NCCL_HOME win.
# Without NCCL (or with NCCL=0) the runtime is built for one GPU per run.
# Without nvcc, `make cuda` says so and stops; the CPU build never needs any of this.

CUDA_HOME  ?= $(firstword $(patsubst %/bin/nvcc,%,$(wildcard /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc)) /usr/local/cuda)
NVCC       ?= $(if $(wildcard $(CUDA_HOME)/bin/nvcc),$(CUDA_HOME)/bin/nvcc,nvcc)
CUDA_ARCHS ?= 80 90
CUDA_WERROR ?= 1
PY_NVIDIA  := $(shell python3 -c "import nvidia, sys; print(' '.join(nvidia.__path__))" 2>/dev/null)
CUDNN_HOME ?= $(firstword $(patsubst %/include/cudnn.h,%,$(wildcard $(CUDA_HOME)/include/cudnn.h /usr/include/cudnn.h \
                $(PY_NVIDIA:%=%/cudnn/include/cudnn.h))))
NCCL_HOME  ?= $(firstword $(patsubst %/include/nccl.h,%,$(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h \
                $(PY_NVIDIA:%=%/nccl/include/nccl.h))))
# A library by its path (wheels ship libcudnn.so.9 without the libcudnn.so link).
cuda_lib = $(firstword $(wildcard $(foreach d,lib64 lib lib/x86_64-linux-gnu,$(foreach f,lib$(2).so lib$(2).so.*,$(1)/$(d)/$(f)))))

CUDNN_LIB   := $(call cuda_lib,$(CUDNN_HOME),cudnn)
# NCCL is optional: without it the trainers run on one GPU (runtime/cuda/nccl.cu refuses more
# ranks with a clear message). NCCL=0 builds without it even when it is there.
NCCL        ?= 1
NCCL_LIB    := $(if $(filter 1,$(NCCL)),$(if $(NCCL_HOME),$(call cuda_lib,$(NCCL_HOME),nccl)))
NCCL_FLAGS  := $(if $(NCCL_LIB),-DRT_HAVE_NCCL=1 -I$(NCCL_HOME)/include,-DRT_HAVE_NCCL=0)
CUBLASLT_LIB := $(firstword $(call cuda_lib,$(CUDA_HOME),cublasLt) $(call cuda_lib,$(CUDA_HOME)/targets/x86_64-linux,cublasLt) \
                  $(foreach d,$(PY_NVIDIA),$(call cuda_lib,$(d)/cublas,cublasLt)))
CUDART_LIB  := $(firstword $(call cuda_lib,$(CUDA_HOME),cudart) $(call cuda_lib,$(CUDA_HOME)/targets/x86_64-linux,cudart))
CUDA_RPATH  := $(sort $(foreach l,$(CUDNN_LIB) $(CUBLASLT_LIB) $(CUDART_LIB) $(NCCL_LIB),$(dir $(l))))

# Machine code for each architecture, plus PTX of the newest one, which the driver compiles
# at load time for any newer GPU (without it, a GPU outside the list fails at its first launch).
CUDA_PTX_ARCH ?= $(lastword $(CUDA_ARCHS))
CUDA_GENCODE := $(foreach a,$(CUDA_ARCHS),-gencode=arch=compute_$(a),code=sm_$(a)) \
                -gencode=arch=compute_$(CUDA_PTX_ARCH),code=compute_$(CUDA_PTX_ARCH)
# ptxas: a register spill or any local memory is an error (both are silent slowdowns);
# CUDA_PTXAS_VERBOSE=1 also prints each kernel's registers, stack and shared memory. (The
# runtime's objects always keep that report beside them, OBJ.ptxas, which
# tests/cuda/kernel_budget_test.sh checks against the budget.)
NVCC_PTXAS   := -Xptxas -warn-spills,-warn-lmem-usage,--warning-as-error$(if $(filter 1,$(CUDA_PTXAS_VERBOSE)),$(strip ,)-v)
CUDA_INCLUDES := -Iruntime/include $(addprefix -I,$(sort $(CUDA_HOME)/include $(CUDNN_HOME)/include))
NVCC_WARN    := -Xcompiler -Wall,-Wextra,-Wno-unused-parameter $(if $(filter 1,$(CUDA_WERROR)),-Werror all-warnings -Xcompiler -Werror)
NVCC_FLAGS   := -std=c++17 -O3 -g -lineinfo $(CUDA_GENCODE) $(NVCC_PTXAS) $(NVCC_WARN) $(CUDA_INCLUDES) $(NCCL_FLAGS)

RT_CUDA_SRCS := $(sort $(wildcard runtime/cuda/*.cu runtime/cuda/*/*.cu))
RT_CUDA_HDRS := $(wildcard runtime/cuda/*.cuh runtime/cuda/*/*.cuh runtime/include/*.cuh) runtime/include/rt_cuda.h $(RT_HDRS)
# Objects per architecture list (and with or without NCCL), so a one-architecture check build
# never mixes with the default.
CUDA_OBJDIR  := $(BUILD)/cuda/sm$(subst $(eval) ,_,$(strip $(CUDA_ARCHS)))$(if $(NCCL_LIB),,-nonccl)
RT_CUDA_LIB  := $(CUDA_OBJDIR)/libtrainrt_cuda.a
# trainc reads $(BUILD)/cuda.env, or the file named by TRAINC_CUDA_ENV (the compile check in
# `make test` writes its own, so a one-architecture check never replaces the real one).
CUDA_ENV     ?= $(BUILD)/cuda.env

.PHONY: cuda cuda-check cuda-env-force cuda-flags cuda-objdir
cuda-flags:   # the nvcc flags of the runtime, for scripts that compile a file on their own
	@echo $(NVCC_FLAGS)
cuda-objdir:  # where the runtime's objects and ptxas reports go for these CUDA_ARCHS
	@echo $(CUDA_OBJDIR)

cuda: cuda-check $(RT_CUDA_LIB) $(CUDA_ENV) trainc runtime

cuda-check:
	@command -v $(NVCC) >/dev/null 2>&1 || { echo "error: nvcc not found (looked for $(NVCC))" >&2; \
	  echo "HINT: install the CUDA toolkit or set CUDA_HOME=/path/to/cuda" >&2; exit 1; }
	@[ -n "$(CUDNN_HOME)" ] || { echo "error: cuDNN headers (cudnn.h) not found in $(CUDA_HOME), /usr or python3's nvidia wheels" >&2; \
	  echo "HINT: set CUDNN_HOME=/path/with/include/cudnn.h (e.g. .../site-packages/nvidia/cudnn)" >&2; exit 1; }
	@[ -n "$(CUDNN_LIB)" ] || { echo "error: libcudnn.so not found under $(CUDNN_HOME)" >&2; \
	  echo "HINT: set CUDNN_HOME to the directory holding include/cudnn.h and lib/libcudnn.so*" >&2; exit 1; }
	@[ -n "$(CUBLASLT_LIB)" ] || { echo "error: libcublasLt.so not found under $(CUDA_HOME)" >&2; \
	  echo "HINT: set CUDA_HOME to a full CUDA toolkit" >&2; exit 1; }

# Each object with its ptxas report (-Xptxas -v: every kernel's registers, stack frame and
# shared memory per architecture) in OBJ.ptxas, so that the kernel budget check reads the
# build's own report instead of compiling every file again; the console shows the rest.
# (Also the committed generated/<name>/cuda/kernels.cu, which only that check asks for.)
$(CUDA_OBJDIR)/%.o $(CUDA_OBJDIR)/%.ptxas: %.cu $(RT_CUDA_HDRS) | cuda-check
	@mkdir -p $(dir $@)
	@rm -f $(CUDA_OBJDIR)/$*.o $(CUDA_OBJDIR)/$*.ptxas
	$(NVCC) $(NVCC_FLAGS) -Xptxas -v -c $< -o $(CUDA_OBJDIR)/$*.o > $(CUDA_OBJDIR)/$*.ptxas.tmp 2>&1 || \
	  { cat $(CUDA_OBJDIR)/$*.ptxas.tmp >&2; rm -f $(CUDA_OBJDIR)/$*.o $(CUDA_OBJDIR)/$*.ptxas.tmp; exit 1; }
	@grep -vE '^ptxas info|^ +[0-9]+ bytes stack frame' $(CUDA_OBJDIR)/$*.ptxas.tmp >&2 || true
	@mv $(CUDA_OBJDIR)/$*.ptxas.tmp $(CUDA_OBJDIR)/$*.ptxas

$(RT_CUDA_LIB): $(RT_CUDA_SRCS:%.cu=$(CUDA_OBJDIR)/%.o)
	@rm -f $@; ar rcs $@ $^

# Read by compiler/cmd/build.c: how to compile generated kernels and link a GPU trainer.
# Rewritten on every `make cuda` (it is cheap), so switching CUDA_ARCHS always takes effect.
# CUDA_KERNEL_ARCHS (default CUDA_ARCHS): the architectures trainers compile their generated
# kernels for, a subset of the library's; the compile checks in `make test` link one-arch
# trainers against the default two-arch library, which they then build only once.
CUDA_KERNEL_ARCHS ?= $(CUDA_ARCHS)
CUDA_KERNEL_SUBSET := $(foreach a,$(CUDA_KERNEL_ARCHS),-gencode=arch=compute_$(a),code=sm_$(a)) \
  -gencode=arch=compute_$(lastword $(CUDA_KERNEL_ARCHS)),code=compute_$(lastword $(CUDA_KERNEL_ARCHS))
CUDA_KERNEL_GENCODE := $(if $(filter-out $(CUDA_ARCHS),$(CUDA_KERNEL_ARCHS))$(filter-out $(CUDA_KERNEL_ARCHS),$(CUDA_ARCHS)),$(CUDA_KERNEL_SUBSET),$(CUDA_GENCODE))
$(CUDA_ENV): cuda-env-force $(RT_CUDA_LIB) | cuda-check
	@mkdir -p $(dir $@)
	@$(if $(filter-out $(CUDA_ARCHS),$(CUDA_KERNEL_ARCHS)),echo "error: CUDA_KERNEL_ARCHS ($(CUDA_KERNEL_ARCHS)) must be among CUDA_ARCHS ($(CUDA_ARCHS))" >&2; exit 1)
	@{ echo "NVCC=$(NVCC)"; echo "NVCC_FLAGS=-std=c++17 -O3 -lineinfo $(CUDA_KERNEL_GENCODE) $(NVCC_PTXAS) $(NVCC_WARN)"; \
	   echo "CUDA_INCLUDES=$(abspath runtime/include) $(sort $(CUDA_HOME)/include $(CUDNN_HOME)/include)"; \
	   echo "CUDA_LIBS=$(abspath $(RT_CUDA_LIB)) $(CUDNN_LIB) $(CUBLASLT_LIB) $(NCCL_LIB) $(CUDART_LIB)"; \
	   echo "CUDA_RPATH=$(CUDA_RPATH)"; echo "CUDA_ARCHS=$(CUDA_KERNEL_ARCHS)"; } > $@.tmp && mv $@.tmp $@
	@echo "cuda: wrote $@ (archs $(CUDA_KERNEL_ARCHS)$(if $(filter-out $(CUDA_KERNEL_ARCHS),$(CUDA_ARCHS)), of the library's $(CUDA_ARCHS)); cuDNN $(CUDNN_HOME); NCCL $(if $(NCCL_LIB),$(NCCL_HOME),absent: one GPU per run))"

# ---- GPU tests: `make test-gpu` (needs a GPU; fails loudly without one) --------------------
comma        := ,
GPU_TEST_BIN := $(CUDA_OBJDIR)/tests/test_ops_gpu
CUDA_LINK    := $(RT_CUDA_LIB) $(CUDNN_LIB) $(CUBLASLT_LIB) $(NCCL_LIB) $(CUDART_LIB) $(BUILD)/libtrainrt.a \
                $(addprefix -Wl$(comma)-rpath$(comma),$(CUDA_RPATH)) $(LDLIBS) -lpthread -ldl -lrt

$(GPU_TEST_BIN): tests/gpu/test_ops_gpu.c $(wildcard tests/gpu/*.inc) tests/op_cases.def $(RT_CUDA_LIB) $(BUILD)/libtrainrt.a runtime/include/rt_cuda.h | cuda-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CUDA_INCLUDES) -O2 -Werror -c $< -o $@.o
	$(CXX) -fopenmp $@.o $(CUDA_LINK) -o $@

.PHONY: test-gpu-build
test-gpu-build: cuda $(GPU_TEST_BIN)

test-gpu: test-gpu-build
	@BUILD=$(BUILD) GPU_TEST_BIN=$(GPU_TEST_BIN) bash tests/gpu/run_gpu_tests.sh

# ---- The lent GPU's one prepared command: `make device-check` (tests/gpu/device_check.sh) ----
# Builds and runs test_ops_gpu, the ResNet-50/ConvNeXt-Tiny benchmark against torch.compile,
# the old/new kernel A/B, one step's profile against `show --gpu-cost`, and the single-GPU
# test-gpu steps, within DEVICE_CHECK_BUDGET seconds (default 450) with the build included.
# No prerequisites: the GPU machine has none of the Debian packages until the script sources
# tests/gpu/device_prep.sh.
.PHONY: device-check
device-check:
	@BUILD=$(BUILD) CUDA_ARCHS="$(if $(filter command line,$(origin CUDA_ARCHS)),$(CUDA_ARCHS),90)" bash tests/gpu/device_check.sh

# ---- GPU benchmark: `make bench-gpu` (needs a GPU; fails loudly without one) ---------------
.PHONY: bench-gpu
bench-gpu: cuda
	@BUILD=$(BUILD) bash bench/bench_gpu.sh
