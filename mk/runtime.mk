# libtrainrt: every .c under runtime/ (except cuda/) goes into the library, built twice:
# optimized (build/obj) and sanitized (build/asan, for unit tests). Files under
# runtime/cpu/ops/ are type-generic (rt_real.h) and are also built in double precision
# (symbols suffixed _f64) for the central-difference gradient checks.

RT_SRCS     := $(sort $(filter-out runtime/cuda/%,$(wildcard runtime/*/*.c runtime/*/*/*.c)))
RT_OPS_SRCS := $(sort $(wildcard runtime/cpu/ops/*.c))
RT_HDRS     := $(wildcard runtime/include/*.h runtime/*/*.h)

RT_LIB      := $(BUILD)/libtrainrt.a
RT_LIB_ASAN := $(BUILD)/asan/libtrainrt.a
RT_LIB_F64  := $(BUILD)/asan/libtrainrt_f64.a

.PHONY: runtime
runtime: $(RT_LIB)

$(BUILD)/obj/%.o: %.c $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS) -c $< -o $@
$(BUILD)/asan/%.o: %.c $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -c $< -o $@
$(BUILD)/asan-f64/%.o: %.c $(RT_HDRS) | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -DRT_REAL_DOUBLE -c $< -o $@

# Only runtime/mpi/ sees mpi.h; the rest of the runtime and generated code do not.
$(BUILD)/obj/runtime/mpi/%.o $(BUILD)/asan/runtime/mpi/%.o: CFLAGS_COMMON += $(MPI_CFLAGS)

$(RT_LIB): $(RT_SRCS:%.c=$(BUILD)/obj/%.o)
	@rm -f $@; ar rcs $@ $^
$(RT_LIB_ASAN): $(RT_SRCS:%.c=$(BUILD)/asan/%.o)
	@rm -f $@; ar rcs $@ $^
$(RT_LIB_F64): $(RT_OPS_SRCS:%.c=$(BUILD)/asan-f64/%.o)
	@rm -f $@; ar rcs $@ $^
