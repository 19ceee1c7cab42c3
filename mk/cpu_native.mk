# Tests of CPU ops built as the trainers link them (RT_ARCH, e.g. AVX-512), beside the unit tests'
# portable sanitized build: tests/cpu_native/*_test.sh make and run these. (Prerequisites are
# spelled out: this file is read before runtime.mk defines RT_LIB and RT_HDRS.)
$(BUILD)/tests-native/%: tests/cpu_native/%.c tests/unit/gradcheck.h tests/unit/testlib.h \
                         $(BUILD)/libtrainrt.a $(wildcard runtime/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) $(RT_ARCH) -Itests/unit $< -o $@ $(BUILD)/libtrainrt.a $(LDLIBS)

# batchnorm.c hands 16-lane vectors between its static inline helpers; where a build has no
# AVX-512 (the sanitized and double test builds, RT_ARCH=) GCC warns that such arguments' ABI
# changed in GCC 4.6, which cannot matter for functions that never leave the object file.
BN_OBJS := $(addsuffix /runtime/cpu/ops/batchnorm.o,$(BUILD)/obj $(BUILD)/asan $(BUILD)/asan-f64)
$(BN_OBJS): CFLAGS_COMMON += -Wno-psabi
