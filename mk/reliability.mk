# Reliability: `make soak` is the long crash-and-resume soak (make test runs a short one);
# `make fuzz-long` fuzzes every target for FUZZ_SECONDS in all (default 600), growing the
# corpus kept in tests/fuzz/corpus/ (see tests/fuzz/fuzz_long.sh).
SOAK_KILLS ?= 300
.PHONY: soak fuzz-long
soak: all
	SOAK_KILLS=$(SOAK_KILLS) BUILD=$(BUILD) bash tests/reliability/soak_test.sh

# Fuzz targets beside the spec fuzzer (mk/golden.mk): the checkpoint reader and the IDX reader,
# built the same way (clang, libFuzzer, address + undefined sanitizers).
FUZZ_CKPT_BIN := $(BUILD)/fuzz/fuzz_ckpt
FUZZ_IDX_BIN  := $(BUILD)/fuzz/fuzz_idx
FUZZ_IDX_OBJS := $(BUILD)/fuzz/obj/runtime/data/idx.o
$(FUZZ_CKPT_BIN): tests/fuzz/fuzz_ckpt.c tests/fuzz/fuzz_input_file.h $(FUZZ_LIB) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ -lz -lm
$(FUZZ_IDX_BIN): tests/fuzz/fuzz_idx.c tests/fuzz/fuzz_input_file.h $(FUZZ_IDX_OBJS) $(FUZZ_LIB) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_IDX_OBJS) $(FUZZ_LIB) -o $@ -lz -lm
# The image decoder (JPEG, and PNG under any name) as the loader and `trainc pack` call it; libjpeg-turbo and libpng are the
# system's (not instrumented), our window, scale and resample code around them is.
FUZZ_JPEG_BIN  := $(BUILD)/fuzz/fuzz_jpeg
FUZZ_JPEG_OBJS := $(addprefix $(BUILD)/fuzz/obj/runtime/data/,jpeg_decode.o png_decode.o jpeg_region.o jpeg_opencv.o image_cv_resize.o image_exif.o image_window.o image_resample.o)
$(FUZZ_JPEG_BIN): tests/fuzz/fuzz_jpeg.c $(FUZZ_JPEG_OBJS) $(FUZZ_LIB) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_JPEG_OBJS) $(FUZZ_LIB) -o $@ -lturbojpeg -ljpeg -lpng -lz -lm
# The torch.save reader (--init-from FILE.pth): the zip and the pickle machine.
FUZZ_PT_BIN := $(BUILD)/fuzz/fuzz_pt
$(FUZZ_PT_BIN): tests/fuzz/fuzz_pt.c tests/fuzz/fuzz_input_file.h $(FUZZ_LIB) $(RT_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ -lz -lm
fuzz: $(FUZZ_CKPT_BIN) $(FUZZ_IDX_BIN) $(FUZZ_JPEG_BIN) $(FUZZ_PT_BIN)
TEST_EXTRA_DEPS += $(FUZZ_CKPT_BIN) $(FUZZ_IDX_BIN) $(FUZZ_JPEG_BIN) $(FUZZ_PT_BIN)

FUZZ_SECONDS ?= 600
fuzz-long: fuzz fuzz-caffe
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) bash tests/fuzz/fuzz_long.sh
