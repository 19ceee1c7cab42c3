# `make demo`: build the compiler and runtime, compile the default example spec into a
# trainer, and train it on Fashion-MNIST; the trainer prints the final accuracy and wall time.

DEMO_SPEC ?= specs/examples/fmnist_lenet.spec
DEMO_BIN  := $(BUILD)/demo/fmnist_lenet
DEMO_OUT  := $(BUILD)/demo/run

demo: all
	@mkdir -p $(BUILD)/demo
	$(TRAINC) build $(DEMO_SPEC) -o $(DEMO_BIN)
	rm -rf $(DEMO_OUT)
	@t0=$$(date +%s); $(DEMO_BIN) --out $(DEMO_OUT) && \
	  echo "demo: total wall time $$(( $$(date +%s) - t0 )) s (metrics: $(DEMO_OUT)/metrics.jsonl)"
