# `make test`: every tests/unit/test_*.c becomes a sanitized binary; tests/run_all.sh runs
# those binaries and every tests/*/*_test.sh script, and prints "N passed, N failed".

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testlib.h tests/op_cases.def $(RT_LIB_ASAN) $(RT_LIB_F64) $(TRAINC_LIB_ASAN) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Itests/unit $< -o $@ \
	  $(TRAINC_LIB_ASAN) $(RT_LIB_ASAN) $(RT_LIB_F64) $(LDLIBS) $(SAN_LDLIBS)

# The libraries tests would otherwise build through make at their start are built here, at
# one job per core beside the rest, so that no test waits on another's build (the make lock
# of tests/run_all.sh) and each test's time is its own work: the CUDA emulator and its traffic
# build where the CUDA headers are (the emulated tests' condition), and the CUDA runtime for
# sm_80 + sm_90 (the compile checks' CUDA_ARCHS) with test_ops_gpu where nvcc and cuDNN are
# (without them the compile checks skip, or fail and say why). The checks for warnings read
# each object's messages, kept beside it (OBJ.ptxas: mk/cuda.mk; OBJ.msg: mk/emu.mk). Should
# one of them fail to build, make test still runs the tests: the ones that need it build it
# again, and fail saying why, while the others run.
TEST_PREBUILD := $(if $(wildcard /usr/local/cuda/include/cuda_runtime.h $(CUDA_HOME)/include/cuda_runtime.h),emu emu-traffic)
ifeq ($(strip $(CUDA_ARCHS)),80 90)
TEST_PREBUILD += $(if $(and $(shell command -v $(NVCC) 2>/dev/null),$(CUDNN_LIB),$(CUBLASLT_LIB)),$(RT_CUDA_LIB) $(GPU_TEST_BIN))
endif

.PHONY: test-build test-prebuild
TEST_EXTRA_DEPS += $(RT_LIB_PINNED)
test-build: all $(UNIT_BINS) $(TEST_EXTRA_DEPS)
test-prebuild: $(TEST_PREBUILD)

# The build first, one job per core (CI calls plain `make test`), then the tests, which
# tests/run_all.sh also runs one per core. Both builds in one make, -k: when one fails, the
# second make stops make test only if test-build itself failed.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test:
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) test-build test-prebuild || \
	  { echo "make test: a part of the build failed (above); the tests that need it will fail and say why" >&2; \
	    $(MAKE) --no-print-directory -j$(TEST_JOBS) test-build; }
	@BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) bash tests/run_all.sh

# The last run's per-test seconds (without waits for another test's build) as the schedule
# tests/run_all.sh reads: longest first. Run after a `make test` on the 2-core machine. The
# "wait" marks (a test that mostly waits: run_all.sh runs one beside the others) carry over
# from the run; mark a new one by hand, when its CPU seconds (run_all.sh prints them) are
# well under its wall seconds.
.PHONY: test-durations
test-durations:
	@test -s $(BUILD)/test-logs/durations.txt || { echo "error: no $(BUILD)/test-logs/durations.txt: run make test first" >&2; exit 1; }
	@{ echo "# seconds per test in one make test run (tests/run_all.sh schedules the longest first;"; \
	   echo "# \"wait\": one that mostly waits, run beside the others); rewritten by make test-durations"; \
	   sort -k2,2nr -k1,1 $(BUILD)/test-logs/durations.txt; } > tests/durations.txt
	@echo "wrote tests/durations.txt ($$(grep -vc '^#' tests/durations.txt) tests)"

# The CPU-path-dependent tests again with OpenBLAS's AVX2 kernels, the BF16 and 1-channel
# convolutions off, and one OpenMP thread (tests/cpu_paths.sh). .ci/run runs it after make test.
.PHONY: test-cpu-paths
test-cpu-paths:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) test-build
	@BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) bash tests/cpu_paths.sh
