# Golden and fuzz tests of the front end. The fuzzer is the compiler's stages (all of
# compiler/ except main.c, the Flex/Bison output, and runtime/core for what sema shares)
# built with clang -fsanitize=fuzzer,address,undefined into one archive, so that the
# harness links only the objects it reaches.

FUZZ_CC      := clang
FUZZ_BIN     := $(BUILD)/fuzz/fuzz_spec
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
                -Iruntime/include $(addprefix -I,$(COMPILER_DIRS)) -I$(BUILD)/gen -Wno-unused-command-line-argument
FUZZ_LIB_SRCS := $(COMPILER_SRCS) $(sort $(wildcard runtime/core/*.c))
FUZZ_OBJS    := $(FUZZ_LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o) \
                $(GEN_SRCS:$(BUILD)/gen/%.c=$(BUILD)/fuzz/obj/gen/%.o)
FUZZ_LIB     := $(BUILD)/fuzz/libtrainc_fuzz.a

$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c $(COMPILER_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-unused-function -c $< -o $@
$(BUILD)/fuzz/obj/%.o: %.c $(COMPILER_HDRS) $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_LIB): $(FUZZ_OBJS)
	@rm -f $@; ar rcs $@ $^
# Sema joins the harness as soon as it exists.
FUZZ_SEMA := $(if $(shell grep -l '^int sema_analyze' $(COMPILER_DIRS:%=%/*.c) 2>/dev/null),-DFUZZ_WITH_SEMA)
$(FUZZ_BIN): tests/fuzz/fuzz_spec.c $(FUZZ_LIB) $(COMPILER_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SEMA) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ -lm

.PHONY: fuzz
fuzz: $(FUZZ_BIN)

TEST_EXTRA_DEPS += $(FUZZ_BIN)
