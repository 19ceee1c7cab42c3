# The BF16 convolutions' layout conversions (not part of `make test`): `make bench-bf16-convert`
# times them cold and hot beside a plain pass over the same floats, and the kernels'
# conversions per ResNet step (bench/bf16_convert_rate.c; it reads the runtime's internal
# conv2d_dnnl_bf16_internal.h).

BF16_CONVERT_RATE := $(BUILD)/bench/bf16_convert_rate

.PHONY: bench-bf16-convert
$(BF16_CONVERT_RATE): bench/bf16_convert_rate.c $(BUILD)/libtrainrt.a runtime/cpu/conv2d_dnnl_bf16_internal.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) -Iruntime/cpu $< -o $@ $(BUILD)/libtrainrt.a $(LDLIBS)

bench-bf16-convert: $(BF16_CONVERT_RATE)
	@$(BF16_CONVERT_RATE)
