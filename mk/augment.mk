# The modern-recipe data and loss features (runtime/data/augment_*.c, sampler_repeat.c,
# runtime/cpu/ops/target_loss.c): a sanitized driver that tests/augment/*_test.sh compare
# against torch and torchvision.
AUGMENT_TOOLS := $(BUILD)/tests/augment/augment_dump
$(BUILD)/tests/augment/%: tests/augment/%.c $(BUILD)/asan/libtrainrt.a $(wildcard runtime/include/*.h runtime/data/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $< -o $@ $(BUILD)/asan/libtrainrt.a $(LDLIBS) -lpng -lopenblas $(SAN_LDLIBS)

.PHONY: augment-tools
augment-tools: $(AUGMENT_TOOLS)
TEST_EXTRA_DEPS += $(AUGMENT_TOOLS)

# `make train-augment`: the LeNet example with mixup, cutmix and random erasing trains on all of
# Fashion-MNIST for 5 epochs and must reach TRAIN_AUGMENT_MIN top-1 (too long for `make test`:
# about 4 minutes on 2 quiet cores). The figure is recorded in bench/RESULTS.md.
TRAIN_AUGMENT_MIN ?= 91.0
.PHONY: train-augment
train-augment: all
	@mkdir -p $(BUILD)/train-augment
	$(BUILD)/trainc build tests/augment/fmnist_lenet_mix.spec -o $(BUILD)/train-augment/lenet_mix
	rm -rf $(BUILD)/train-augment/run
	time $(BUILD)/train-augment/lenet_mix --out $(BUILD)/train-augment/run | tee $(BUILD)/train-augment/log.txt
	@grep '^final:' $(BUILD)/train-augment/log.txt | awk -v min=$(TRAIN_AUGMENT_MIN) \
	  '{ v = $$4 + 0; if (v >= min) print "train-augment: " v "% >= " min "%"; else { print "train-augment: FAIL " v "% < " min "%"; exit 1 } }'
