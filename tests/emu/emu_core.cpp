/* The CUDA emulator's execution of one grid: blocks one after another, each block's threads
 * as fibers on one host thread (a fiber runs until it reaches __syncthreads, a warp shuffle
 * or its end). It stops the program, naming the source line, when a barrier is reached by
 * part of a block or a shuffle by part of the lanes its mask names: what hangs or computes
 * garbage on a GPU, and when two threads touch one element of a __shared__ array between
 * barriers with at least one write (emu_cuda.h). EMU_SCHEDULE=1 runs blocks and threads in
 * reverse order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string>
#include <vector>
#include "emu_cuda.h"
#include "emu_internal.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

namespace emu {

thread_state *cur;
uint3 block_idx;
dim3 block_dim, grid_dim;

void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "emu: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

int launcher_rank(void) {
    static const char *const names[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
    for (const char *n : names)
        if (const char *v = getenv(n)) return atoi(v);
    return 0;
}

int schedule(void) {
    static int s = -1;
    if (s < 0) {
        const char *e = getenv("EMU_SCHEDULE");
        s = e && *e ? atoi(e) : 0;
    }
    return s;
}

enum { RUNNABLE, AT_BARRIER, AT_SHUFFLE, DONE };

struct fiber {
    thread_state ts;
    void *sp;              /* saved stack pointer while switched out */
    char *stack;           /* lowest address of its stack (a guard page below) */
    int state;
    const char *file;      /* where it waits */
    int line;
    int shfl_kind, shfl_arg, shfl_width;
    unsigned shfl_mask;
    uint64_t shfl_in, shfl_out;
#if EMU_ASAN
    void *fake_stack;
#endif
};

static const size_t STACK_BYTES = EMU_ASAN ? (512u << 10) : (128u << 10);
static std::vector<fiber> fibers;
static fiber *running;
static void *sched_sp;
static const std::function<void()> *body;
#if EMU_ASAN
static const void *main_bottom;
static size_t main_size;
static void *main_fake;
#endif

extern "C" void emu_switch(void **save_sp, void *new_sp);
/* Saves the callee-saved registers of the System V x86-64 ABI on the current stack, stores
 * the stack pointer in *save_sp, loads new_sp and returns into what was saved there. */
__asm__(".text\n.globl emu_switch\n.type emu_switch,@function\nemu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
        ".size emu_switch,.-emu_switch\n");

static void to_scheduler(void) {
    fiber *f = running;
#if EMU_ASAN
    __sanitizer_start_switch_fiber(f->state == DONE ? NULL : &f->fake_stack, main_bottom, main_size);
#endif
    emu_switch(&f->sp, sched_sp);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, NULL, NULL);
#endif
}

static void fiber_entry(void) {
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &main_bottom, &main_size);
#endif
    (*body)();
    running->state = DONE;
    to_scheduler();
    fail("internal: a finished fiber was resumed");
}

static void start_fiber(fiber *f) {
    if (!f->stack) {
        char *m = (char *)mmap(NULL, STACK_BYTES + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) fail("cannot map a fiber stack");
        mprotect(m, 4096, PROT_NONE);   /* a stack overflow faults instead of corrupting */
        f->stack = m + 4096;
    }
    uintptr_t top = ((uintptr_t)f->stack + STACK_BYTES) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = NULL;                      /* fiber_entry's return address: never used */
    *--sp = (void *)fiber_entry;       /* where emu_switch's ret goes */
    for (int i = 0; i < 6; i++) *--sp = NULL;   /* rbp rbx r12-r15 */
    f->sp = sp;
    f->state = RUNNABLE;
}

static void resume(fiber *f) {
    running = f;
    cur = &f->ts;
#if EMU_ASAN
    __sanitizer_start_switch_fiber(&main_fake, f->stack, STACK_BYTES);
#endif
    emu_switch(&sched_sp, f->sp);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(main_fake, NULL, NULL);
#endif
}

void syncthreads(const char *file, int line) {
    fiber *f = running;
    if (!f) fail("__syncthreads outside a kernel (%s:%d)", file, line);
    f->state = AT_BARRIER, f->file = file, f->line = line;
    to_scheduler();
}

/* Two barriers: every thread's pred is in acc before the first, read by all before the
 * second; the two slots alternate by call, so a thread that runs ahead into the next call
 * never writes the slot the others still read (each slot is cleared before it comes back). */
int syncthreads_or(int pred, const char *file, int line) {
    static int acc[2];
    if (!running) fail("__syncthreads_or outside a kernel (%s:%d)", file, line);
    int k = (int)(cur->or_calls++ & 1);
    if (pred) acc[k] = 1;
    syncthreads(file, line);
    int any = acc[k];
    syncthreads(file, line);
    acc[k] = 0;
    return any;
}

uint64_t shuffle(int kind, unsigned mask, uint64_t bits, int arg, int width, const char *file, int line) {
    fiber *f = running;
    if (!f) fail("warp shuffle outside a kernel (%s:%d)", file, line);
    if (width <= 0 || width > 32 || (width & (width - 1))) fail("%s:%d: shuffle width %d is not a power of two up to 32", file, line, width);
    f->state = AT_SHUFFLE, f->file = file, f->line = line;
    f->shfl_kind = kind, f->shfl_mask = mask, f->shfl_in = bits, f->shfl_arg = arg, f->shfl_width = width;
    to_scheduler();
    return f->shfl_out;
}

void launch_bounds(const char *file, int line, int max_threads, int min_blocks) {
    unsigned threads = block_dim.x * block_dim.y * block_dim.z;
    if (threads > (unsigned)max_threads)
        fail("%s:%d: a block of %u threads launches a kernel declared __launch_bounds__(%d): the GPU refuses the "
             "launch (too many resources requested)", file, line, threads, max_threads);
}

/* Barrier intervals, numbered across all blocks: a new block starts a new one too. */
static unsigned long shared_interval = 1;

void shared_index_error(const shared_where &w, long i, size_t n) {
    fail("%s:%d: __shared__ %s: index %ld is outside [0, %zu) (block %u, thread %d)", w.file, w.line, w.name, i, n,
         block_idx.x, cur ? cur->linear : -1);
}

void shared_access(shared_meta &m, bool write, const shared_where &w, long index) {
    if (!running) fail("__shared__ %s (%s:%d) used outside a kernel", w.name, w.file, w.line);
    int t = running->ts.linear, other = -1;
    const char *what = NULL;
    if (m.interval != shared_interval) m = shared_meta{ shared_interval, -1, -1, false };
    if (m.writer >= 0 && m.writer != t) other = m.writer, what = write ? "written by thread %d and by thread %d" : "written by thread %d and read by thread %d";
    else if (write && m.many_readers && m.reader != t) other = m.reader, what = "read by thread %d (and others) and written by thread %d";
    else if (write && m.many_readers) other = t, what = "read by thread %d and others and written by thread %d";
    else if (write && m.reader >= 0 && m.reader != t) other = m.reader, what = "read by thread %d and written by thread %d";
    if (what) {
        char both[160];
        snprintf(both, sizeof both, what, other, t);
        fprintf(stderr, "emu: error: shared-memory race: %s[%ld] (declared at %s:%d) %s of block (%u,%u,%u) with no "
                        "__syncthreads between them; the access of thread %d:\n",
                w.name, index, w.file, w.line, both, block_idx.x, block_idx.y, block_idx.z, t);
#if EMU_ASAN
        __sanitizer_print_stack_trace();
#endif
        fail("shared-memory race on %s[%ld] (%s:%d)", w.name, index, w.file, w.line);
    }
    if (write) m.writer = t;
    else if (m.reader < 0) m.reader = t;
    else if (m.reader != t) m.many_readers = true;
}

static const char *state_name(int s) {
    return s == AT_BARRIER ? "waits at __syncthreads" : s == AT_SHUFFLE ? "waits at a shuffle" : s == DONE ? "has exited" : "runs";
}

/* Every lane of a warp that waits at a shuffle gets its value once every lane its mask
 * names waits at one too; returns how many lanes it released. */
static int release_shuffles(int nthreads, const launch_desc &d) {
    int released = 0;
    for (int w = 0; w * 32 < nthreads; w++) {
        int base = w * 32, lanes = nthreads - base < 32 ? nthreads - base : 32;
        int at = 0;
        for (int l = 0; l < lanes; l++) at += fibers[base + l].state == AT_SHUFFLE;
        if (!at) continue;
        /* The common case: the whole warp at one shuffle with one mask naming every lane. */
        const fiber *f0 = &fibers[base];
        int uniform = at == lanes && f0->shfl_mask == (lanes == 32 ? 0xffffffffu : (1u << lanes) - 1);
        for (int l = 1; l < lanes && uniform; l++) {
            const fiber *f = &fibers[base + l];
            uniform = f->shfl_mask == f0->shfl_mask && f->line == f0->line && f->file == f0->file &&
                      f->shfl_kind == f0->shfl_kind;
        }
        int all_there = 1;
        for (int l = 0; l < lanes && all_there && !uniform; l++) {
            fiber *f = &fibers[base + l];
            if (f->state != AT_SHUFFLE) continue;
            for (int m = 0; m < 32; m++) {
                if (!(f->shfl_mask >> m & 1)) continue;
                if (m >= lanes) fail("%s:%d: shuffle mask 0x%08x names lane %d of a warp of %d threads (launch at %s:%d)",
                                     f->file, f->line, f->shfl_mask, m, lanes, d.file, d.line);
                fiber *o = &fibers[base + m];
                if (o->state != AT_SHUFFLE) {
                    if (o->state == RUNNABLE) { all_there = 0; break; }
                    fail("%s:%d: shuffle reached by part of a warp: lane %d of warp %d (block %u,%u,%u) waits there "
                         "with mask 0x%08x, lane %d %s%s%s (launch at %s:%d)",
                         f->file, f->line, l, w, block_idx.x, block_idx.y, block_idx.z, f->shfl_mask, m,
                         state_name(o->state), o->state == AT_BARRIER ? " at line " : "",
                         o->state == AT_BARRIER ? std::to_string(o->line).c_str() : "", d.file, d.line);
                }
                if (o->file != f->file || o->line != f->line || o->shfl_kind != f->shfl_kind)
                    fail("%s:%d: lanes %d and %d of warp %d meet at different shuffles (%s:%d) (launch at %s:%d)",
                         f->file, f->line, l, m, w, o->file, o->line, d.file, d.line);
            }
        }
        if (!all_there) continue;
        for (int l = 0; l < lanes; l++) {
            fiber *f = &fibers[base + l];
            if (f->state != AT_SHUFFLE) continue;
            int width = f->shfl_width, seg = l & ~(width - 1), src;
            switch (f->shfl_kind) {
            case 0: src = (l - seg) + f->shfl_arg < width ? l + f->shfl_arg : l; break;
            case 1: src = seg + (((l - seg) ^ f->shfl_arg) & (width - 1)); break;
            case 2: src = seg + (f->shfl_arg & (width - 1)); break;
            default: src = (l - seg) - f->shfl_arg >= 0 ? l - f->shfl_arg : l; break;
            }
            if (src >= lanes || !(f->shfl_mask >> src & 1))
                fail("%s:%d: lane %d reads lane %d, which is not in the shuffle's mask 0x%08x (launch at %s:%d)", f->file,
                     f->line, l, src, f->shfl_mask, d.file, d.line);
            f->shfl_out = fibers[base + src].shfl_in;
        }
        for (int l = 0; l < lanes; l++)
            if (fibers[base + l].state == AT_SHUFFLE) fibers[base + l].state = RUNNABLE, released++;
    }
    return released;
}

static void run_block(int nthreads, const launch_desc &d) {
    int reverse = schedule() == 1;
    for (int t = 0; t < nthreads; t++) {
        fiber *f = &fibers[t];
        start_fiber(f);
        f->ts.tid = make_uint3((unsigned)(t % block_dim.x), (unsigned)(t / block_dim.x % block_dim.y),
                               (unsigned)(t / (block_dim.x * block_dim.y)));
        f->ts.linear = t;
        f->ts.or_calls = 0;
    }
    shared_interval++;
    for (;;) {
        for (int i = 0; i < nthreads; i++) {
            fiber *f = &fibers[reverse ? nthreads - 1 - i : i];
            if (f->state == RUNNABLE) resume(f);
        }
        running = NULL, cur = NULL;
        if (release_shuffles(nthreads, d)) continue;
        int done = 0, waiting = 0;
        const fiber *exited = NULL, *waiter = NULL;
        for (int t = 0; t < nthreads; t++) {
            if (fibers[t].state == DONE) done++, exited = exited ? exited : &fibers[t];
            else waiting++, waiter = waiter ? waiter : &fibers[t];
        }
        if (waiting == 0) return;
        for (int t = 0; t < nthreads; t++)
            if (fibers[t].state == AT_SHUFFLE)
                fail("%s:%d: shuffle reached by part of a warp (thread %d of block %u; launch at %s:%d)", fibers[t].file,
                     fibers[t].line, t, block_idx.x, d.file, d.line);
        if (done)
            fail("%s:%d: __syncthreads reached by part of the block: thread (%u,%u,%u) of block (%u,%u,%u) waits there, "
                 "thread (%u,%u,%u) has exited (launch at %s:%d)",
                 waiter->file, waiter->line, waiter->ts.tid.x, waiter->ts.tid.y, waiter->ts.tid.z, block_idx.x,
                 block_idx.y, block_idx.z, exited->ts.tid.x, exited->ts.tid.y, exited->ts.tid.z, d.file, d.line);
        for (int t = 0; t < nthreads; t++) {
            fiber *f = &fibers[t];
            if (f->file != waiter->file || f->line != waiter->line)
                fail("threads of block (%u,%u,%u) wait at different barriers: %s:%d and %s:%d (launch at %s:%d)",
                     block_idx.x, block_idx.y, block_idx.z, waiter->file, waiter->line, f->file, f->line, d.file, d.line);
            f->state = RUNNABLE;
        }
        shared_interval++;   /* every thread passed the barrier */
    }
}

void run_grid(const launch_desc &d, const std::function<void()> &fn) {
    long nthreads = (long)d.block.x * d.block.y * d.block.z;
    if (nthreads < 1 || nthreads > 1024 || d.block.z > 64)
        fail("launch at %s:%d: block of %ux%ux%u threads (the limit is 1024, z at most 64)", d.file, d.line, d.block.x,
             d.block.y, d.block.z);
    if (d.grid.x < 1 || d.grid.y < 1 || d.grid.z < 1 || d.grid.y > 65535 || d.grid.z > 65535)
        fail("launch at %s:%d: grid of %ux%ux%u blocks", d.file, d.line, d.grid.x, d.grid.y, d.grid.z);
    if (d.smem > 48 * 1024) fail("launch at %s:%d: %zu bytes of dynamic shared memory (more than 48 KiB needs an opt-in)", d.file, d.line, d.smem);
    if (fibers.size() < (size_t)nthreads) fibers.resize((size_t)nthreads);
    traffic_kernel(d);
    body = &fn;
    block_dim = d.block, grid_dim = d.grid;
    long nblocks = (long)d.grid.x * d.grid.y * d.grid.z;
    int reverse = schedule() == 1;
    for (long i = 0; i < nblocks; i++) {
        long b = reverse ? nblocks - 1 - i : i;
        block_idx = make_uint3((unsigned)(b % d.grid.x), (unsigned)(b / d.grid.x % d.grid.y),
                               (unsigned)(b / ((long)d.grid.x * d.grid.y)));
        run_block((int)nthreads, d);
    }
    body = NULL;
}

}   // namespace emu
