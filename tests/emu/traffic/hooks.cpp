/* The access hooks of the emulator's traffic build (`make emu-traffic`, mk/emu.mk): the CUDA
 * sources compiled with GCC's -fsanitize=kernel-address and out-of-line checks call these on
 * every load and store; while a piece of device work is recorded (emu_traffic.cpp), each
 * access is counted against the device allocation it falls in. Kept out of libcudaemu.a of
 * the ASan build, whose runtime defines the same names. */
#include <stddef.h>
#include <stdint.h>
#include "../emu_internal.h"

#define EMU_HOOK(kind, size, write)                                                   \
    extern "C" void __asan_##kind##size##_noabort(uintptr_t p) {                      \
        if (emu::traffic_recording()) emu::traffic_touch((const void *)p, size, write); \
    }
EMU_HOOK(load, 1, false)
EMU_HOOK(load, 2, false)
EMU_HOOK(load, 4, false)
EMU_HOOK(load, 8, false)
EMU_HOOK(load, 16, false)
EMU_HOOK(store, 1, true)
EMU_HOOK(store, 2, true)
EMU_HOOK(store, 4, true)
EMU_HOOK(store, 8, true)
EMU_HOOK(store, 16, true)
extern "C" void __asan_loadN_noabort(uintptr_t p, size_t n) {
    if (emu::traffic_recording()) emu::traffic_touch((const void *)p, n, false);
}
extern "C" void __asan_storeN_noabort(uintptr_t p, size_t n) {
    if (emu::traffic_recording()) emu::traffic_touch((const void *)p, n, true);
}
extern "C" void __asan_handle_no_return(void) {}
