# libtrainrt: every .c under runtime/ (except cuda/, and mpi/ or solo/) goes into the
# library, built twice: optimized (build/obj) and sanitized (build/asan, for unit tests).
# Files under runtime/cpu/ops/ are type-generic (rt_real.h) and are also built in double
# precision (symbols suffixed _f64) for the central-difference gradient checks.

# runtime/mpi/ (Open MPI) or, built with WITH_MPI=0, runtime/solo/ (a world of one rank).
RT_NOT_HERE := runtime/cuda/% $(if $(filter 1,$(WITH_MPI)),runtime/solo/%,runtime/mpi/%)
RT_SRCS     := $(sort $(filter-out $(RT_NOT_HERE),$(wildcard runtime/*/*.c runtime/*/*/*.c)))
RT_OPS_SRCS := $(sort $(wildcard runtime/cpu/ops/*.c))
RT_HDRS     := $(wildcard runtime/include/*.h runtime/include/*.def runtime/*/*.h runtime/*/*/*.h)

RT_LIB      := $(BUILD)/libtrainrt.a
RT_LIB_ASAN := $(BUILD)/asan/libtrainrt.a
RT_LIB_F64  := $(BUILD)/asan/libtrainrt_f64.a
# The pinned-arithmetic runtime: FP32 products by gemm_pinned.c instead of OpenBLAS/oneDNN,
# and compiled for a fixed x86-64 level with generic tuning and no contraction into FMA, so
# that a trainer linked to it computes the same bits on every CPU of the project's kind
# (tests/lower/params_hash_test.sh). -march=native would let GCC's tuning for the build
# CPU decide where a*b+c becomes one FMA, and OpenBLAS picks its kernels by CPU.
RT_LIB_PINNED := $(BUILD)/pinned/libtrainrt.a
PINNED_FLAGS  := -O3 -march=x86-64-v4 -mtune=generic -ffp-contract=off -DRT_PINNED_ARITH

.PHONY: runtime
runtime: $(RT_LIB)

# The optimized objects also depend on the flags they were built with, so that changing
# CFLAGS or RT_ARCH rebuilds them instead of silently linking stale code.
RT_OBJ_FLAGS := $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH)
$(BUILD)/obj/.flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(RT_OBJ_FLAGS)' | cmp -s - $@ || echo '$(RT_OBJ_FLAGS)' > $@
.PHONY: FORCE
FORCE:

$(BUILD)/obj/%.o: %.c $(RT_HDRS) $(BUILD)/obj/.flags | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) -c $< -o $@
$(BUILD)/asan/%.o: %.c $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -c $< -o $@
$(BUILD)/pinned/.flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CFLAGS_COMMON) $(PINNED_FLAGS)' | cmp -s - $@ || echo '$(CFLAGS_COMMON) $(PINNED_FLAGS)' > $@
$(BUILD)/pinned/%.o: %.c $(RT_HDRS) $(BUILD)/pinned/.flags | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(PINNED_FLAGS) -c $< -o $@
$(BUILD)/asan-f64/%.o: %.c $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -DRT_REAL_DOUBLE -c $< -o $@

# Only runtime/mpi/ sees mpi.h; the rest of the runtime and generated code do not.
$(BUILD)/obj/runtime/mpi/%.o $(BUILD)/asan/runtime/mpi/%.o $(BUILD)/pinned/runtime/mpi/%.o: CFLAGS_COMMON += $(MPI_CFLAGS)

# Which of runtime/mpi/ and runtime/solo/ the libraries hold: switching WITH_MPI in one build
# directory re-archives them even though every object is already there.
$(BUILD)/.with-mpi: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WITH_MPI)' | cmp -s - $@ || echo '$(WITH_MPI)' > $@

$(RT_LIB): $(RT_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/.with-mpi
	@rm -f $@; ar rcs $@ $(filter %.o,$^)
$(RT_LIB_ASAN): $(RT_SRCS:%.c=$(BUILD)/asan/%.o) $(BUILD)/.with-mpi
	@rm -f $@; ar rcs $@ $(filter %.o,$^)
$(RT_LIB_PINNED): $(RT_SRCS:%.c=$(BUILD)/pinned/%.o) $(BUILD)/.with-mpi
	@rm -f $@; ar rcs $@ $(filter %.o,$^)
$(RT_LIB_F64): $(RT_OPS_SRCS:%.c=$(BUILD)/asan-f64/%.o)
	@rm -f $@; ar rcs $@ $^
