# The trainc compiler: compiler/*.c and compiler/*/*.c (the stage folders; a file added flat
# in compiler/ builds too) plus the Flex/Bison output (generated under build/gen, never
# committed). Also a sanitized library of the compiler stages for unit tests and the fuzzer.

TRAINC         := $(BUILD)/trainc
COMPILER_MAIN  := $(firstword $(wildcard compiler/main.c compiler/*/main.c))
COMPILER_SRCS  := $(sort $(filter-out $(COMPILER_MAIN),$(wildcard $(COMPILER_DIRS:%=%/*.c))))
COMPILER_HDRS  := $(wildcard $(COMPILER_DIRS:%=%/*.h)) $(wildcard compiler/*/schema.def) runtime/include/rt_env.h runtime/include/rt_env.def \
                  $(BUILD)/gen/parser.h $(BUILD)/gen/lexer.h
PARSER_Y       := $(firstword $(wildcard compiler/parser.y compiler/*/parser.y))
LEXER_L        := $(firstword $(wildcard compiler/lexer.l compiler/*/lexer.l))
# Stages the compiler shares with the runtime (spec hashing, the TRAINC_* table), and `trainc pack` with the
# image decode path it shares with the loader (its libraries: PACK_LIBS in mk/data.mk).
COMPILER_SHARED_SRCS := $(wildcard runtime/core/sha256.c runtime/core/schedule*.c runtime/core/error.c runtime/core/devmem.c \
                          runtime/data/pack*.c runtime/data/image_set.c runtime/data/image_folder.c \
                          runtime/data/image_shards.c runtime/data/image_resample.c runtime/data/image_window.c \
                          runtime/data/jpeg_decode.c runtime/data/jpeg_region.c runtime/data/jpeg_opencv.c runtime/data/image_cv_resize.c runtime/data/image_exif.c runtime/data/png_decode.c runtime/data/idx.c runtime/data/dataset.c runtime/core/regular_file.c runtime/core/alloc.c runtime/core/rng.c runtime/core/env.c \
                          runtime/core/checkpoint_load.c runtime/core/checkpoint_format.c)
GEN_SRCS       := $(BUILD)/gen/parser.c $(BUILD)/gen/lexer.c $(BUILD)/gen/templates.c
# trainc export --format onnx: onnx.proto as Debian's python3-onnx ships it, compiled by
# protoc-c (protobuf-c-compiler) into build/gen/onnx/. WITH_ONNX=0 builds trainc without it
# (the format is then refused), for machines without protobuf-c.
WITH_ONNX      ?= 1
ONNX_PROTO     ?= /usr/lib/python3/dist-packages/onnx/onnx.proto
ifeq ($(WITH_ONNX),1)
GEN_SRCS       += $(BUILD)/gen/onnx/onnx.pb-c.c
ONNX_LIBS      := -lprotobuf-c
$(BUILD)/gen/onnx/onnx.pb-c.c $(BUILD)/gen/onnx/onnx.pb-c.h &: | deps-check
	@mkdir -p $(BUILD)/gen/onnx
	cp $(ONNX_PROTO) $(BUILD)/gen/onnx/onnx.proto
	cd $(BUILD)/gen/onnx && protoc-c --c_out=. onnx.proto
$(BUILD)/cobj/compiler/cmd/export_onnx.o $(BUILD)/casan/compiler/cmd/export_onnx.o: $(BUILD)/gen/onnx/onnx.pb-c.h
$(BUILD)/cobj/compiler/cmd/export_onnx.o $(BUILD)/casan/compiler/cmd/export_onnx.o \
  $(BUILD)/cobj/gen/onnx/onnx.pb-c.o $(BUILD)/casan/gen/onnx/onnx.pb-c.o: CFLAGS_COMMON += -DTRAINC_ONNX -I$(BUILD)/gen/onnx
endif
TRAINC_OBJS    := $(COMPILER_SRCS:%.c=$(BUILD)/cobj/%.o) $(GEN_SRCS:$(BUILD)/gen/%.c=$(BUILD)/cobj/gen/%.o)
TRAINC_OBJS_ASAN := $(COMPILER_SRCS:%.c=$(BUILD)/casan/%.o) $(GEN_SRCS:$(BUILD)/gen/%.c=$(BUILD)/casan/gen/%.o)
TRAINC_LIB_ASAN := $(BUILD)/casan/libtrainc.a

.PHONY: trainc
trainc: $(TRAINC)

# Grouped targets (&:): one run of bison (flex) makes both files; with plain multiple targets
# a parallel make ran it once per file, two runs writing the same files at once.
$(BUILD)/gen/parser.c $(BUILD)/gen/parser.h &: $(PARSER_Y) | deps-check
	@mkdir -p $(BUILD)/gen
	bison -Wall -Werror --defines=$(BUILD)/gen/parser.h -o $(BUILD)/gen/parser.c $<
$(BUILD)/gen/lexer.c $(BUILD)/gen/lexer.h &: $(LEXER_L) $(BUILD)/gen/parser.h | deps-check
	@mkdir -p $(BUILD)/gen
	flex --header-file=$(BUILD)/gen/lexer.h -o $(BUILD)/gen/lexer.c $<

# The code generators' templates (templates/*.in), embedded as C strings.
TEMPLATES := $(sort $(wildcard templates/*.in))
$(BUILD)/gen/templates.c: $(TEMPLATES) mk/embed_templates.awk
	@mkdir -p $(BUILD)/gen
	awk -f mk/embed_templates.awk $(TEMPLATES) > $@

# Generated scanner code trips a few warnings we cannot fix at the source.
GEN_CFLAGS := -Wno-sign-compare -Wno-unused-function

$(BUILD)/cobj/gen/%.o: $(BUILD)/gen/%.c $(COMPILER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(GEN_CFLAGS) -c $< -o $@
$(BUILD)/casan/gen/%.o: $(BUILD)/gen/%.c $(COMPILER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $(GEN_CFLAGS) -c $< -o $@
$(BUILD)/cobj/%.o: %.c $(COMPILER_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) -c $< -o $@
$(BUILD)/casan/%.o: %.c $(COMPILER_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -c $< -o $@

$(TRAINC): $(TRAINC_OBJS) $(COMPILER_MAIN:%.c=$(BUILD)/cobj/%.o) $(COMPILER_SHARED_SRCS:%.c=$(BUILD)/cobj/%.o)
	$(CC) $(CFLAGS) -fopenmp $^ -o $@ -lm $(PACK_LIBS) $(ONNX_LIBS)
$(TRAINC_LIB_ASAN): $(TRAINC_OBJS_ASAN)
	@rm -f $@; ar rcs $@ $^

# The compiler finds the runtime it links trainers against in this checkout (or $TRAINC_HOME),
# in the build directory it was built in, and links trainers with Open MPI, whose flags
# mpicc knows (none with WITH_MPI=0). What these say is recorded, so that a change rebuilds
# the objects that bake it in.
LINKERS := $(foreach d,cobj casan,$(patsubst %.c,$(BUILD)/$(d)/%.o,$(filter %/build.c %/build_cuda.c,$(COMPILER_SRCS))))
LINK_DEFINES = -DTRAINC_HOME='"$(abspath .)"' -DTRAINC_BUILD_DIR='"$(BUILD)"' -DTRAINC_MPI_LIBS='"$(MPI_LDFLAGS)"'
$(LINKERS): CFLAGS_COMMON += $(LINK_DEFINES)
$(LINKERS): $(BUILD)/cobj/.link-defines
$(BUILD)/cobj/.link-defines: FORCE
	@mkdir -p $(dir $@)
	@echo "$(LINK_DEFINES)" | cmp -s - $@ || echo "$(LINK_DEFINES)" > $@
