# The CUDA backend without a GPU (tests/emu/): runtime/cuda/ and generated kernels.cu built
# with the host compiler against an emulated CUDA runtime with reference cuDNN, cuBLASLt and
# NCCL, under ASan and UBSan. `make test-emu` runs the op test and the example trainers on it.
#
#   make emu          # build/emu/: libcudaemu.a, libtrainrt_cuda.a, test_ops_gpu, cuda.env
#   make test-emu     # tests/emu/emu_test.sh
#
# build/emu/cuda.env makes `trainc build --backend cuda` compile through tests/emu/emu-nvcc:
#   TRAINC_CUDA_ENV=build/emu/cuda.env build/trainc build SPEC -o BIN --backend cuda

EMU_DIR      := $(BUILD)/emu
EMU_SAN      ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined
EMU_CUDA_INC := $(firstword $(wildcard /usr/local/cuda/include) $(CUDA_HOME)/include)
EMU_CXXFLAGS  = -std=c++20 -O1 -g1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter $(EMU_SAN) \
                -I$(EMU_CUDA_INC) $(MPI_CFLAGS)
EMU_LIB_SRCS := $(wildcard tests/emu/*.cpp)   # (tests/emu/traffic/: the traffic build's only)
EMU_LIB      := $(EMU_DIR)/libcudaemu.a
EMU_RT_LIB   := $(EMU_DIR)/libtrainrt_cuda.a
EMU_NVCC     := tests/emu/emu-nvcc
EMU_RT_OBJS  := $(RT_CUDA_SRCS:%.cu=$(EMU_DIR)/obj/%.o)
EMU_LINK     := $(EMU_RT_LIB) $(EMU_LIB) $(EMU_SAN) $(MPI_LDFLAGS) -lstdc++
EMU_TEST_BIN := $(EMU_DIR)/test_ops_gpu

.PHONY: emu test-emu
emu: $(EMU_LIB) $(EMU_RT_LIB) $(EMU_TEST_BIN) $(EMU_DIR)/cuda.env trainc runtime

# Each object and binary keeps its compiler's messages beside it (OBJ.msg, also shown on the
# console), so that tests/emu/emu_test.sh finds a warning whichever make built it (make test
# builds the emulator before the tests: mk/tests.mk). emu_msg CMD runs CMD that way. (The
# objects depend on this file: one built by an older recipe has no OBJ.msg.)
emu_msg = { $(1); } > $@.msg 2>&1; st=$$?; cat $@.msg >&2; [ $$st = 0 ] || { rm -f $@; exit $$st; }

$(EMU_DIR)/lib/%.o: tests/emu/%.cpp tests/emu/emu_cuda.h tests/emu/emu_internal.h tests/emu/emu_sdpa.h \
                     $(wildcard tests/emu/*.inc) mk/emu.mk
	@mkdir -p $(dir $@)
	$(call emu_msg,$(CXX) $(EMU_CXXFLAGS) -c $< -o $@)

# The library references are plain loops over every product: optimized, without sanitizers
# (the operands' bounds are checked against the device allocations before each call).
EMU_LIB_REFS := $(addprefix $(EMU_DIR)/lib/,emu_cudnn.o emu_cudnn_graph.o emu_cudnn_sdpa.o emu_cublaslt.o)
$(EMU_LIB_REFS): EMU_SAN :=
$(EMU_LIB_REFS): EMU_CXXFLAGS += -O2

$(EMU_LIB): $(EMU_LIB_SRCS:tests/emu/%.cpp=$(EMU_DIR)/lib/%.o)
	@rm -f $@; ar rcs $@ $^

$(EMU_DIR)/obj/%.o: %.cu $(RT_CUDA_HDRS) tests/emu/emu_cuda.h $(EMU_NVCC) mk/emu.mk
	@mkdir -p $(dir $@)
	$(call emu_msg,EMU_CXXFLAGS="$(EMU_SAN)" $(EMU_NVCC) -Iruntime/include -DRT_HAVE_NCCL=1 -c $< -o $@)

$(EMU_RT_LIB): $(EMU_RT_OBJS)
	@rm -f $@; ar rcs $@ $^

# (the ASan runtime by its path: mk/runtime.mk, which names it RT_LIB_ASAN, is read after
# this file, and a prerequisite is expanded as it is read)
$(EMU_TEST_BIN): tests/gpu/test_ops_gpu.c $(wildcard tests/gpu/*.inc) tests/op_cases.def $(EMU_RT_LIB) $(EMU_LIB) $(BUILD)/asan/libtrainrt.a
	@mkdir -p $(dir $@)
	$(call emu_msg,$(CC) $(CFLAGS_COMMON) -I$(EMU_CUDA_INC) -O1 $(EMU_SAN) -c $< -o $@.o && \
	  $(CXX) -fopenmp $@.o $(EMU_LINK) $(RT_LIB_ASAN) $(LDLIBS) $(SAN_LDLIBS) -lpthread -ldl -lrt -o $@)

# The toolchain trainc uses for `--backend cuda` under emulation (compiler/cmd/build_cuda.c).
$(EMU_DIR)/cuda.env: $(EMU_RT_LIB) $(EMU_LIB) mk/emu.mk
	@mkdir -p $(dir $@)
	@{ echo "NVCC=$(abspath $(EMU_NVCC))"; echo "NVCC_FLAGS=$(EMU_SAN)"; \
	   echo "CUDA_INCLUDES=$(abspath runtime/include) $(EMU_CUDA_INC)"; \
	   echo "CUDA_LIBS=$(abspath $(EMU_RT_LIB)) $(abspath $(EMU_LIB)) $(EMU_SAN) $(MPI_LDFLAGS) -lstdc++"; \
	   echo "CUDA_RPATH=$(abspath $(EMU_DIR))"; echo "CUDA_ARCHS=emu"; } > $@.tmp && mv $@.tmp $@

test-emu: emu
	@BUILD=$(BUILD) bash tests/emu/emu_test.sh

# The traffic build (tests/emu/emu_traffic.cpp): the same emulator without ASan, the CUDA
# sources compiled by clang++ with LLVM's ThreadSanitizer instrumentation (without its runtime;
# tests/emu/emu-nvcc --emu-traffic), whose calls on every load, store and memcpy
# tests/emu/traffic/hooks.cpp counts (tests/emu/traffic_forms_emu_test.sh checks the forms). A trainer built with
# TRAINC_CUDA_ENV=build/emu-traffic/cuda.env and run with EMU_TRAFFIC=FILE writes each kernel's
# and library call's device bytes read and written, and its geometry, to FILE.
#
#   make emu-traffic  # build/emu-traffic/: libcudaemu.a, libtrainrt_cuda.a, cuda.env
EMUT_DIR     := $(BUILD)/emu-traffic
EMUT_SAN     := --emu-traffic
EMUT_LIB     := $(EMUT_DIR)/libcudaemu.a
EMUT_RT_LIB  := $(EMUT_DIR)/libtrainrt_cuda.a
EMUT_RT_OBJS := $(RT_CUDA_SRCS:%.cu=$(EMUT_DIR)/obj/%.o)
EMUT_CXXFLAGS = -std=c++20 -O2 -g1 -Wall -Wextra -Wno-unused-parameter -I$(EMU_CUDA_INC) $(MPI_CFLAGS)

.PHONY: emu-traffic
emu-traffic: $(EMUT_LIB) $(EMUT_RT_LIB) $(EMUT_DIR)/cuda.env trainc runtime

$(EMUT_DIR)/lib/%.o: tests/emu/%.cpp tests/emu/emu_cuda.h tests/emu/emu_internal.h tests/emu/emu_sdpa.h \
                      $(wildcard tests/emu/*.inc)
	@mkdir -p $(dir $@)
	$(CXX) $(EMUT_CXXFLAGS) -c $< -o $@

# The library references are compiled alike in both builds (optimized, uninstrumented): the
# traffic build links emu's objects rather than compiling them a second time.
$(EMUT_LIB): $(filter-out $(EMU_LIB_REFS:$(EMU_DIR)/%=$(EMUT_DIR)/%),$(EMU_LIB_SRCS:tests/emu/%.cpp=$(EMUT_DIR)/lib/%.o)) \
             $(EMU_LIB_REFS) $(EMUT_DIR)/lib/traffic/hooks.o
	@rm -f $@; ar rcs $@ $^

$(EMUT_DIR)/obj/%.o: %.cu $(RT_CUDA_HDRS) tests/emu/emu_cuda.h $(EMU_NVCC) tests/emu/traffic/ir_check.py
	@mkdir -p $(dir $@)
	$(EMU_NVCC) $(EMUT_SAN) -Iruntime/include -DRT_HAVE_NCCL=1 -c $< -o $@

$(EMUT_RT_LIB): $(EMUT_RT_OBJS)
	@rm -f $@; ar rcs $@ $^

$(EMUT_DIR)/cuda.env: $(EMUT_RT_LIB) $(EMUT_LIB) mk/emu.mk
	@mkdir -p $(dir $@)
	@{ echo "NVCC=$(abspath $(EMU_NVCC))"; echo "NVCC_FLAGS=$(EMUT_SAN)"; \
	   echo "CUDA_INCLUDES=$(abspath runtime/include) $(EMU_CUDA_INC)"; \
	   echo "CUDA_LIBS=$(abspath $(EMUT_RT_LIB)) $(abspath $(EMUT_LIB)) $(MPI_LDFLAGS) -lstdc++"; \
	   echo "CUDA_RPATH=$(abspath $(EMUT_DIR))"; echo "CUDA_ARCHS=emu"; } > $@.tmp && mv $@.tmp $@
