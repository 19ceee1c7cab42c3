# The image pipeline (runtime/data/ JPEG decode, folders, shards; trainc pack): its link
# libraries, the tools its tests drive, and the data benchmarks.

# Trainers and unit tests decode JPEGs with libjpeg-turbo (and PNGs in image folders with libpng).
LDLIBS += -lturbojpeg -ljpeg -lpng

# `trainc pack` links the packer and the decode path it shares with the loader (the sources:
# COMPILER_SHARED_SRCS in mk/compiler.mk, which is read first) with these.
PACK_LIBS = -lturbojpeg -ljpeg -lpng -lz -lpthread

# A sanitized driver of the decode path for tests/data/: prints a sample's window and writes
# its bytes, so a Python reference (Pillow, djpeg) can redo the same sample.
DATA_TOOLS := $(BUILD)/tests/data-tools/image_dump $(BUILD)/tests/data-tools/pack $(BUILD)/tests/data-tools/loader_dump
# (runtime.mk comes later in the include order: its variables are not set yet here)
$(BUILD)/tests/data-tools/%: tests/data/%.c $(BUILD)/asan/libtrainrt.a $(wildcard runtime/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $< -o $@ $(BUILD)/asan/libtrainrt.a $(LDLIBS) $(SAN_LDLIBS)

.PHONY: data-tools
data-tools: $(DATA_TOOLS)
TEST_EXTRA_DEPS += $(DATA_TOOLS)

# `make bench-data`: our decode + RRC 224 + flip + normalize against Pillow + torchvision on the
# same ~500x375 q90 photographs (crops of Debian's mate-backgrounds), per core and on every
# core, and the cores one H100 needs at 7,000 img/s. `make bench-jpeg`: bench/specs/
# fmnist_jpeg.spec trained on all of Fashion-MNIST as a JPEG tree. Figures: bench/RESULTS.md.
BENCH_DATA_PACKAGES := mate-backgrounds python3-torchvision
.PHONY: bench-data bench-jpeg bench-data-deps
bench-data-deps:
	@for p in $(BENCH_DATA_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || \
	  { echo "installing $$p"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$p > /dev/null || exit 1; }; done

# Pillow-SIMD, the stronger Pillow, from PyPI into build/ (skipped where PyPI is unreachable).
$(BUILD)/pillow-simd:
	-/usr/bin/python3 -m pip install -q --no-deps --target $@ pillow-simd

# DALI's CPU pipeline (no GPU needed) from PyPI into build/ with its dependencies (~0.9 GB).
$(BUILD)/dali:
	-/usr/bin/python3 -m pip install -q --target $@ nvidia-dali-cuda120

bench-data: $(BUILD)/libtrainrt.a bench-data-deps $(BUILD)/pillow-simd $(BUILD)/dali
	@mkdir -p $(BUILD)/bench
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) bench/jpeg_rate.c -o $(BUILD)/bench/jpeg_rate $(BUILD)/libtrainrt.a $(LDLIBS)
	@BUILD=$(BUILD) PILLOW_SIMD_PATH=$(if $(wildcard $(BUILD)/pillow-simd/PIL),$(BUILD)/pillow-simd) \
	  DALI_PATH=$(if $(wildcard $(BUILD)/dali/nvidia/dali),$(BUILD)/dali) bash bench/bench_data.sh

bench-jpeg: all bench-data-deps
	@BUILD=$(BUILD) bash bench/bench_jpeg.sh
