# Benchmarks (not part of `make test`): `make bench-cpu` compares training throughput with
# PyTorch on the CPU (bench/bench_cpu.sh; figures go in bench/RESULTS.md); `make bench-resnet`
# trains specs/examples/fmnist_resnet.spec to its 93.5% bar and reports accuracy and time;
# `make bench-loader` times the data loader's host work per GPU-benchmark batch.

RESNET_SPEC := specs/examples/fmnist_resnet.spec
RESNET_BIN  := $(BUILD)/bench/fmnist_resnet
RESNET_OUT  := $(BUILD)/bench/resnet-run
RESNET_BAR  := 0.935

.PHONY: bench-resnet bench-loader
bench: bench-cpu

bench-cpu: all
	@BUILD=$(BUILD) bash bench/bench_cpu.sh

bench-resnet: all
	@mkdir -p $(BUILD)/bench
	$(TRAINC) build $(RESNET_SPEC) -o $(RESNET_BIN)
	rm -rf $(RESNET_OUT)
	@t0=$$(date +%s); $(RESNET_BIN) --out $(RESNET_OUT) || exit 1; \
	  secs=$$(( $$(date +%s) - t0 )); \
	  top1=$$(grep '"event":"summary"' $(RESNET_OUT)/metrics.jsonl | tail -n 1 | sed 's/.*"top1":\([0-9.e+-]*\).*/\1/'); \
	  awk -v t="$$top1" -v s="$$secs" -v bar=$(RESNET_BAR) 'BEGIN { \
	    printf "bench-resnet: test top-1 %.2f%% (bar %.1f%%) in %d s (%.1f min): %s\n", \
	      100 * t, 100 * bar, s, s / 60, (t >= bar ? "PASS" : "FAIL"); exit !(t >= bar) }'

bench-loader: $(BUILD)/libtrainrt.a   # (RT_LIB: runtime.mk is read after this file)
	@mkdir -p $(BUILD)/bench
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) bench/loader_rate.c -o $(BUILD)/bench/loader_rate $(RT_LIB) $(LDLIBS)
	@$(BUILD)/bench/loader_rate

# Projection (trainc project) against measured epochs here and published times: bench/project.sh.
.PHONY: bench-project
bench-project: all
	@BUILD=$(BUILD) bash bench/project.sh

# The modeled ResNet-50 step on an H100 and an H200 from the lowered schedule, CPU only
# (bench/gpu_model.sh, trainc show --gpu-cost).
.PHONY: bench-gpu-model
bench-gpu-model: trainc
	@BUILD=$(BUILD) bash bench/gpu_model.sh
