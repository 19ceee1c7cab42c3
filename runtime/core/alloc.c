/* Checked allocation: every failure names the size, so "out of memory" is actionable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rt_core.h"

static void die_oom(size_t bytes, const char *what) {
    rt_die_hint("reduce batch_per_rank or the model size, or run on a machine with more memory",
                "%s of %zu bytes (%.1f MiB) failed: out of memory", what, bytes,
                bytes / (1024.0 * 1024.0));
}

static void *zeroed_aligned(size_t bytes, size_t align) {
    /* aligned_alloc requires a multiple of the alignment; round up (and never ask for 0). */
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    if (rounded < bytes) die_oom(bytes, "aligned allocation");
    void *p = aligned_alloc(align, rounded);
    if (!p) die_oom(bytes, "aligned allocation");
    memset(p, 0, rounded);
    return p;
}

void *rt_alloc_aligned(size_t bytes) { return zeroed_aligned(bytes, RT_ALIGN); }

void *rt_alloc_pages(size_t bytes) {
    long page = sysconf(_SC_PAGESIZE);
    return zeroed_aligned(bytes, page > 0 ? (size_t)page : 4096);
}

void rt_free_aligned(void *p) { free(p); }

void *rt_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die_oom(bytes, "allocation");
    return p;
}

void *rt_xcalloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) die_oom(SIZE_MAX, "allocation (size overflow)");
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die_oom(n * size, "allocation");
    return p;
}
