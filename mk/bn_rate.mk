# Batch norm, residual add and ReLU rates (not part of `make test`): `make bench-bn` times the
# ops between a ResNet block's convolutions at the example ResNet's shapes, separate and fused
# (bench/bn_rate.c).

BN_RATE := $(BUILD)/bench/bn_rate

.PHONY: bench-bn
# (RT_LIB is set by runtime.mk, which is read after this file)
$(BN_RATE): bench/bn_rate.c $(BUILD)/libtrainrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) $< -o $@ $(BUILD)/libtrainrt.a $(LDLIBS)

bench-bn: $(BN_RATE)
	@$(BN_RATE)
