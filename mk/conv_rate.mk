# Convolution rates (not part of `make test`): `make bench-conv` times conv2d forward, input
# gradient and weight gradient on the ResNet example's Winograd, strided and 1x1 shapes,
# LeNet's Winograd 5x5 and the published ResNet-50's stem, strided and 1x1 shapes
# (bench/conv_rate.c).

CONV_RATE := $(BUILD)/bench/conv_rate

.PHONY: bench-conv
# (RT_LIB is set by runtime.mk, which is read after this file)
$(CONV_RATE): bench/conv_rate.c $(BUILD)/libtrainrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) $< -o $@ $(BUILD)/libtrainrt.a $(LDLIBS)

bench-conv: $(CONV_RATE)
	@$(CONV_RATE)
