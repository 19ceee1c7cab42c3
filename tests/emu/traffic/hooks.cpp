/* The access hooks of the emulator's traffic build (`make emu-traffic`, mk/emu.mk): the CUDA
 * sources are compiled by clang++ with LLVM's -fsanitize=thread instrumentation (without its
 * runtime, which this file replaces; tests/emu/emu-nvcc --emu-traffic), so every load and store
 * of the kernel code calls __tsan_{read,write}N, and every memcpy / memmove / memset it calls
 * or its copies of aggregates become (renamed in the object) calls __emu_traffic_mem*; while a
 * piece of device work is recorded (emu_traffic.cpp), each access is counted against the device
 * allocation it falls in. The instrumentation keeps both the read and the write of a
 * read-modify-write (-tsan-instrument-read-before-write), so in-place updates count both. A
 * form of access the instrumentation emits and this file lacks fails the link, not the count.
 * tests/emu/traffic_forms_emu_test.sh checks each form's count. Kept out of libcudaemu.a of the
 * ASan build. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "../emu_internal.h"

static inline void touch(const void *p, size_t n, bool write) {
    if (emu::traffic_recording()) emu::traffic_touch(p, n, write);
}
#define EMU_HOOK(size)                                                                   \
    extern "C" void __tsan_read##size(void *p) { touch(p, size, false); }               \
    extern "C" void __tsan_write##size(void *p) { touch(p, size, true); }               \
    extern "C" void __tsan_unaligned_read##size(void *p) { touch(p, size, false); }     \
    extern "C" void __tsan_unaligned_write##size(void *p) { touch(p, size, true); }
EMU_HOOK(1)
EMU_HOOK(2)
EMU_HOOK(4)
EMU_HOOK(8)
EMU_HOOK(16)
extern "C" void __tsan_read_range(void *p, size_t n) { touch(p, n, false); }
extern "C" void __tsan_write_range(void *p, size_t n) { touch(p, n, true); }
extern "C" void *__emu_traffic_memcpy(void *d, const void *s, size_t n) {
    touch(s, n, false), touch(d, n, true);
    return memcpy(d, s, n);
}
extern "C" void *__emu_traffic_memmove(void *d, const void *s, size_t n) {
    touch(s, n, false), touch(d, n, true);
    return memmove(d, s, n);
}
extern "C" void *__emu_traffic_memset(void *d, int c, size_t n) {
    touch(d, n, true);
    return memset(d, c, n);
}
extern "C" void *__tsan_memcpy(void *d, const void *s, size_t n) { return __emu_traffic_memcpy(d, s, n); }
extern "C" void *__tsan_memmove(void *d, const void *s, size_t n) { return __emu_traffic_memmove(d, s, n); }
extern "C" void *__tsan_memset(void *d, int c, size_t n) { return __emu_traffic_memset(d, c, n); }
extern "C" void __tsan_vptr_update(void **, void *) {}
extern "C" void __tsan_vptr_read(void **) {}
extern "C" void __tsan_func_entry(void *) {}
extern "C" void __tsan_func_exit(void) {}
extern "C" void __tsan_init(void) {}
/* Atomic loads and stores (a function-local static's initialization guard): host memory,
 * done as they are written, not counted. */
#define EMU_ATOMIC(bits, type)                                                                      \
    extern "C" type __tsan_atomic##bits##_load(const volatile type *a, int) {                        \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                 \
    }                                                                                                \
    extern "C" void __tsan_atomic##bits##_store(volatile type *a, type v, int) {                     \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                    \
    }
EMU_ATOMIC(8, uint8_t)
EMU_ATOMIC(16, uint16_t)
EMU_ATOMIC(32, uint32_t)
EMU_ATOMIC(64, uint64_t)
