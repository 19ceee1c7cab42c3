# CPU speed benchmarks (not part of `make test`): `make bench-gemm` measures the matrix-multiply
# rates the CPU runtime can reach here (bench/gemm_peak.c: OpenBLAS under the core type it
# detects and under SKYLAKEX, oneDNN's sgemm and BF16 GEMM) on the example nets' conv GEMM
# shapes; bench/bench_cpu.sh runs it as the peak that `make bench-cpu` compares against.

GEMM_PEAK := $(BUILD)/bench/gemm_peak

.PHONY: bench-gemm bench-cpu
$(GEMM_PEAK): bench/gemm_peak.c $(BUILD)/libtrainrt.a   # (RT_LIB: runtime.mk is read after this file)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) $< -o $@ $(RT_LIB) $(LDLIBS)

bench-gemm: $(GEMM_PEAK)
	@$(GEMM_PEAK)
	@echo "OpenBLAS with OPENBLAS_CORETYPE=SKYLAKEX:"
	@OPENBLAS_CORETYPE=SKYLAKEX $(GEMM_PEAK) | grep OpenBLAS

# bench/bench_cpu.sh reads the sgemm peak of the same run from gemm_peak --peak.
bench-cpu: $(GEMM_PEAK)

# bench/winograd_bf16_error.py: BF16 rounding error of direct vs Winograd 3x3 convolutions
# (numpy: the bench's torch venv has it, else python3's own).
.PHONY: bench-wino-bf16
bench-wino-bf16:
	@py=$(BUILD)/bench/torch2-venv/bin/python; [ -x $$py ] || py=python3; \
	$$py -c 'import numpy' 2>/dev/null || { echo "error: bench-wino-bf16 needs numpy (make bench-cpu installs a venv with it, or apt-get install python3-numpy)" >&2; exit 1; }; \
	$$py bench/winograd_bf16_error.py
