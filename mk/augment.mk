# The modern-recipe data and loss features (runtime/data/augment_*.c, sampler_repeat.c,
# runtime/cpu/ops/target_loss.c): a sanitized driver that tests/augment/*_test.sh compare
# against torch and torchvision.
AUGMENT_TOOLS := $(BUILD)/tests/augment/augment_dump
$(BUILD)/tests/augment/%: tests/augment/%.c $(BUILD)/asan/libtrainrt.a $(wildcard runtime/include/*.h runtime/data/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $< -o $@ $(BUILD)/asan/libtrainrt.a $(LDLIBS) -lpng -lopenblas

.PHONY: augment-tools
augment-tools: $(AUGMENT_TOOLS)
TEST_EXTRA_DEPS += $(AUGMENT_TOOLS)
