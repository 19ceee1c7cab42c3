# The image pipeline (runtime/data/ JPEG decode, folders, shards; trainc pack): its link
# libraries, the tools its tests drive, and the data benchmarks.

# Trainers and unit tests decode JPEGs with libjpeg-turbo.
LDLIBS += -lturbojpeg

# `trainc pack` links the packer and the decode path it shares with the loader (the sources:
# COMPILER_SHARED_SRCS in mk/compiler.mk, which is read first) with these.
PACK_LIBS = -lturbojpeg -lpng -lz -lpthread

# A sanitized driver of the decode path for tests/data/: prints a sample's window and writes
# its bytes, so a Python reference (Pillow, djpeg) can redo the same sample.
DATA_TOOLS := $(BUILD)/tests/data-tools/image_dump $(BUILD)/tests/data-tools/pack $(BUILD)/tests/data-tools/loader_dump
# (runtime.mk comes later in the include order: its variables are not set yet here)
$(BUILD)/tests/data-tools/%: tests/data/%.c $(BUILD)/asan/libtrainrt.a $(wildcard runtime/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $< -o $@ $(BUILD)/asan/libtrainrt.a $(LDLIBS) -lpng

.PHONY: data-tools
data-tools: $(DATA_TOOLS)
TEST_EXTRA_DEPS += $(DATA_TOOLS)
