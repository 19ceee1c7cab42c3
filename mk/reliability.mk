# Reliability: `make soak` is the long crash-and-resume soak (make test runs a short one);
# `make fuzz-long` fuzzes every target for FUZZ_SECONDS (default 600) per target, growing the
# corpus kept in tests/fuzz/corpus/ (see tests/fuzz/fuzz_long.sh).
SOAK_KILLS ?= 300
.PHONY: soak fuzz-long
soak: all
	SOAK_KILLS=$(SOAK_KILLS) BUILD=$(BUILD) bash tests/reliability/soak_test.sh
