# trainc — top-level build. `make` builds the compiler and runtime; `make demo` trains the
# default example; `make test` runs the suite. Each area keeps its rules in mk/<area>.mk.

BUILD      ?= build
CC         ?= cc
# compiler/ and its stage folders (front, check, lower, emit, cmd; see README's code map)
COMPILER_DIRS := compiler $(patsubst %/,%,$(sort $(dir $(wildcard compiler/*/))))
# -Werror=switch: the switches over op kinds list every kind without default:, so a new op
# that one of them lacks fails the build there (README, "Adding an op touches").
CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -fno-math-errno -Wall -Wextra -Werror=switch -Wno-unused-parameter -g -fopenmp \
                 -Iruntime/include $(addprefix -I,$(COMPILER_DIRS)) -I$(BUILD)/gen
CFLAGS     ?= -O3
# The runtime is built for the CPU it is built on (AVX-512 where present): set RT_ARCH= for
# a binary that must run on older CPUs than the build machine.
RT_ARCH    ?= -march=native
# Sanitized build used by unit tests (address + undefined behaviour). -g1: line tables only,
# which is all a sanitizer's stack trace reads (function, file:line, inlined frames too), and
# a quarter less compile time than -g; `make SAN_DEBUG=-g` for a debugger's local variables.
SAN_DEBUG  ?= -g1
SAN_FLAGS  := -O1 $(SAN_DEBUG) -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# Every sanitized binary links oneDNN at start-up, where the runtime would dlopen it. A
# dlopen'ed library's thread-local storage lives in blocks that each thread mallocs, and
# GCC 12's LeakSanitizer reads a block that happens to start 16 bytes past a 4 KiB boundary
# as one with glibc 2.19's header: it takes the two words before it for the block's address
# and size, scans that range at exit and faults ("Tracer caught signal 11", after a test
# passed). Loaded at start-up, libdnnl's TLS is part of each thread's static TLS, which the
# tracer scans correctly. tests/lib.sh's SAN_LIBS is the same for scripts that link by hand.
SAN_LDLIBS := -Wl,--no-as-needed -l:libdnnl.so.2 -Wl,--as-needed
# Open MPI (data parallelism, runtime/mpi/): flags as its compiler wrapper reports them,
# asked when a rule needs them (deps-check may have just installed it). WITH_MPI=0 builds
# without MPI (runtime/solo/: one process per run), e.g. on a GPU machine that has none.
WITH_MPI   ?= 1
MPI_CFLAGS  = $(if $(filter 1,$(WITH_MPI)),$(shell mpicc --showme:compile 2>/dev/null))
MPI_LDFLAGS = $(if $(filter 1,$(WITH_MPI)),$(shell mpicc --showme:link 2>/dev/null))
LDLIBS      = -lopenblas -lz -lm -lgomp $(MPI_LDFLAGS)

.PHONY: all demo test test-gpu bench bench-cpu deps clean
all: deps-check trainc runtime

include $(sort $(wildcard mk/[a-z]*.mk))

clean:
	rm -rf $(BUILD)
