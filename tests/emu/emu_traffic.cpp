/* The emulator's device-memory traffic count (EMU_TRAFFIC=FILE): for every piece of device
 * work (a kernel's grid, a cuDNN / cuBLASLt / NCCL call, a copy or memset), the distinct
 * device bytes it read and the distinct device bytes it wrote, with a kernel's name and
 * launch geometry, one line each, appended to FILE as the work runs. cudaProfilerStart and
 * cudaProfilerStop write marker lines, so a consumer can cut out one bracketed training step
 * (TRAINC_CUDA_PROFILE_STEP).
 *
 * Kernels are counted access by access: the traffic build (`make emu-traffic`) compiles the
 * CUDA sources with GCC's -fsanitize=thread instrumentation, so every load and store of the
 * kernel code calls __tsan_{read,write}N (traffic/hooks.cpp), which lands here. A byte counts once per piece of work however often it is touched (what a
 * GPU's caches make of repeated reads within a kernel), reads and writes separately. The
 * libraries' reference implementations are not instrumented: they report the operand ranges
 * their loops address (emu_cudnn.cpp etc. call traffic_touch), which is what the real
 * library must at least move. Work outside a recorded piece (host code) is not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include <vector>
#include "emu_internal.h"

namespace emu {

namespace {
struct shadow {
    size_t bytes;
    std::vector<unsigned char> mark;    /* per byte: 1 read, 2 written, in the current work */
    std::vector<unsigned char> page;    /* per 4 KiB page: marks to clear */
    std::vector<size_t> dirty;          /* pages marked */
};
std::map<uintptr_t, shadow> shadows;    /* by allocation base, made on first touch */
FILE *out;
int enabled = -1;
bool active;
long long reads, writes;
char what[256];
}   // namespace

bool traffic_enabled(void) {
    if (enabled < 0) {
        const char *p = getenv("EMU_TRAFFIC");
        enabled = p && *p;
        if (enabled && !(out = fopen(p, "a"))) fail("EMU_TRAFFIC=%s: cannot open it for appending", p);
    }
    return enabled;
}

void traffic_begin(const char *kind) {
    if (!traffic_enabled()) return;
    active = true, reads = writes = 0;
    snprintf(what, sizeof what, "%s", kind);
}

void traffic_kernel(const launch_cfg &d) {
    if (!active) return;
    const char *base = strrchr(d.file, '/');
    snprintf(what, sizeof what, "kernel %s %s:%d grid=%u,%u,%u block=%u,%u,%u smem=%zu", d.name ? d.name : "?",
             base ? base + 1 : d.file, d.line, d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z, d.smem);
}

void traffic_end(void) {
    if (!active) return;
    active = false;
    for (auto &kv : shadows) {
        shadow &s = kv.second;
        for (size_t p : s.dirty) {
            size_t lo = p << 12, hi = lo + 4096 < s.bytes ? lo + 4096 : s.bytes;
            memset(&s.mark[lo], 0, hi - lo);
            s.page[p] = 0;
        }
        s.dirty.clear();
    }
    /* a graph's launch only starts its nodes, each a piece of its own */
    if (!reads && !writes && strncmp(what, "kernel ", 7) != 0) return;
    fprintf(out, "%s read=%lld write=%lld\n", what, reads, writes);
    fflush(out);
}

void traffic_mark(const char *line) {
    if (!traffic_enabled()) return;
    fprintf(out, "# %s\n", line);
    fflush(out);
}

void traffic_forget(const void *base) { shadows.erase((uintptr_t)base); }

void traffic_touch(const void *p, size_t bytes, bool write) {
    if (!active || bytes == 0) return;
    uintptr_t a = (uintptr_t)p;
    uintptr_t base;
    size_t size;
    if (!device_range(p, &base, &size)) return;   /* host memory: the stack, the library's own */
    shadow &s = shadows[base];
    if (s.bytes != size) s.bytes = size, s.mark.assign(size, 0), s.page.assign((size >> 12) + 1, 0), s.dirty.clear();
    size_t lo = a - base, hi = lo + bytes < size ? lo + bytes : size;
    unsigned char bit = write ? 2 : 1;
    long long n = 0;
    for (size_t i = lo; i < hi; i++) {
        if (s.mark[i] & bit) continue;
        s.mark[i] |= bit, n++;
        if (!s.page[i >> 12]) s.page[i >> 12] = 1, s.dirty.push_back(i >> 12);
    }
    (write ? writes : reads) += n;
}

bool traffic_recording(void) { return active; }

}   // namespace emu
