/* Bump arena: one aligned block, carved by offsets, freed at once. */
#include "rt_core.h"

void rt_arena_init(rt_arena *a, size_t cap, const char *name) {
    a->base = rt_alloc_aligned(cap);
    a->cap = cap;
    a->used = 0;
    a->name = name ? name : "arena";
}

void rt_arena_free(rt_arena *a) {
    rt_free_aligned(a->base);
    a->base = NULL;
    a->cap = a->used = 0;
}

void *rt_arena_alloc(rt_arena *a, size_t bytes) {
    size_t start = (a->used + RT_ALIGN - 1) / RT_ALIGN * RT_ALIGN;
    if (start > a->cap || bytes > a->cap - start)
        rt_die_hint("this is a bug in the memory plan: the arena size should cover every allocation",
                    "%s: out of space allocating %zu bytes (%zu of %zu used)", a->name, bytes,
                    a->used, a->cap);
    a->used = start + bytes;
    return a->base + start;
}

void rt_arena_reset(rt_arena *a) { a->used = 0; }
