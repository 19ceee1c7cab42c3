# `make test`: every tests/unit/test_*.c becomes a sanitized binary; tests/run_all.sh runs
# those binaries and every tests/*/*_test.sh script, and prints "N passed, N failed".

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/testlib.h $(RT_LIB_ASAN) $(RT_LIB_F64) $(TRAINC_LIB_ASAN) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -Itests/unit $< -o $@ \
	  $(TRAINC_LIB_ASAN) $(RT_LIB_ASAN) $(RT_LIB_F64) $(LDLIBS)

.PHONY: test-build
test-build: all $(UNIT_BINS) $(TEST_EXTRA_DEPS)

# The build first, one job per core (CI calls plain `make test`), then the tests, which
# tests/run_all.sh also runs one per core.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) test-build
	@BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) bash tests/run_all.sh
