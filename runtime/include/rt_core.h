/* libtrainrt core: errors with hints, checked aligned allocation, an arena, monotonic time,
 * stop signals, tty detection and hashing. Everything else in the runtime builds on this. */
#ifndef RT_CORE_H
#define RT_CORE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "rt_sha256.h"

/* ---- Errors ----------------------------------------------------------------------------
 * Two ways to fail, by audience:
 *  - rt_die / rt_die_hint: the trainer cannot go on; prints "error: ..." (+ "HINT: ...") on
 *    stderr and exits 1.
 *  - Library calls that a user can make fail (bad data, bad checkpoint) take `rt_err *err`
 *    and return an rt_status. If err is NULL they die with the same message instead, so the
 *    generated trainer passes NULL and tests pass a struct and check the text.
 * A message names what went wrong and where (path, offset); the hint says what to do. */
typedef enum {
    RT_OK = 0,
    RT_E_IO,          /* open/read/write/fsync/rename failed (errno text in message) */
    RT_E_NOT_FOUND,   /* file or directory missing */
    RT_E_FORMAT,      /* not the expected kind of file: bad magic, not gzip, corrupt gzip */
    RT_E_VERSION,     /* a format version this build does not read */
    RT_E_TRUNCATED,   /* fewer bytes than the header promises */
    RT_E_CHECKSUM,    /* CRC mismatch: the file is corrupt */
    RT_E_MISMATCH,    /* two things that must agree do not (counts, spec hash, sizes) */
    RT_E_RANGE,       /* a value outside its allowed range */
    RT_E_ARG,         /* the caller passed something invalid */
} rt_status;

typedef struct {
    rt_status code;
    char msg[768];    /* one line, no "error:" prefix */
    char hint[384];   /* what to do; may be empty */
} rt_err;

#if defined(__GNUC__)
#define RT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define RT_NORETURN __attribute__((noreturn))
#else
#define RT_PRINTF(a, b)
#define RT_NORETURN
#endif

RT_NORETURN void rt_die(const char *fmt, ...) RT_PRINTF(1, 2);
/* hint may be NULL or "" for none. */
RT_NORETURN void rt_die_hint(const char *hint, const char *fmt, ...) RT_PRINTF(2, 3);
/* rt_die_hint with another exit status (2: a bad command line). */
RT_NORETURN void rt_die_status(int status, const char *hint, const char *fmt, ...) RT_PRINTF(3, 4);
/* Prints "error: PREFIXmsg" (+ "HINT: hint") on stderr, after flushing stdout. */
void rt_print_error(const char *msg, const char *hint);
/* Where a fatal error goes when set: an MPI run ends its ranks with one message instead of
 * one per rank (runtime/mpi/fail.c). The hook prints (or not) and exits; it never returns. */
typedef void (*rt_die_hook)(const char *msg, const char *hint, int status);
void rt_set_die_hook(rt_die_hook hook);
void rt_warn(const char *fmt, ...) RT_PRINTF(1, 2);
/* Text put after "error: " / "warning: " in every message ("rank 3: " in an MPI run). The
 * string must outlive the process's messages. */
void rt_set_error_prefix(const char *prefix);
/* Fills err (code, message, hint) and returns code; if err is NULL, dies with that message. */
rt_status rt_fail(rt_err *err, rt_status code, const char *hint, const char *fmt, ...)
    RT_PRINTF(4, 5);
/* Prints err as "error: msg\nHINT: hint" on stderr and exits 1. */
RT_NORETURN void rt_die_err(const rt_err *err);
const char *rt_status_name(rt_status s);
/* Fails (RT_E_FORMAT, naming the kind: FIFO, device, directory...) unless path is a regular
 * file; never blocks, even on a FIFO. what names the input ("checkpoint", "IDX file"). */
rt_status rt_require_regular_file(const char *path, const char *what, const char *hint, rt_err *err);
const char *rt_file_kind(unsigned mode);   /* "regular file", "FIFO", "character device", ... */

/* ---- Memory ----------------------------------------------------------------------------
 * rt_alloc_aligned: 64-byte aligned (cache line / AVX-512), zeroed, dies with the size on
 * failure. Free with rt_free_aligned (plain free() also works on glibc, but say what you mean). */
#define RT_ALIGN 64
void *rt_alloc_aligned(size_t bytes);
/* Whole pages of their own, zeroed (free with rt_free_aligned): a buffer a GPU trainer
 * page-locks, which works page by page, so it must share no page with another buffer. */
void *rt_alloc_pages(size_t bytes);
void rt_free_aligned(void *p);
void *rt_xmalloc(size_t bytes);            /* malloc that dies with the size on failure */
void *rt_xcalloc(size_t n, size_t size);   /* calloc that dies, and checks n*size overflow */

/* Bump allocator over one aligned block: sizes are known up front (the compiler's static
 * plan), so one allocation and pointer offsets replace many mallocs. */
typedef struct {
    uint8_t *base;
    size_t cap;
    size_t used;
    const char *name;   /* for the out-of-space message */
} rt_arena;
void rt_arena_init(rt_arena *a, size_t cap, const char *name);
void rt_arena_free(rt_arena *a);
void *rt_arena_alloc(rt_arena *a, size_t bytes);   /* 64-aligned; dies if the arena is full */
void rt_arena_reset(rt_arena *a);

/* ---- Time ------------------------------------------------------------------------------ */
double rt_time_s(void);        /* monotonic seconds (CLOCK_MONOTONIC), for rates and ETAs */
double rt_wall_time_s(void);   /* seconds since the epoch, for log timestamps */
/* Formats a duration as "1h07m51s" / "3m05s" / "12.3s" into out (>= 16 chars). */
char *rt_format_duration(double seconds, char *out, size_t cap);

/* ---- Stop signals ----------------------------------------------------------------------
 * SIGTERM / SIGINT set a flag; the trainer polls rt_stop_requested() between steps,
 * checkpoints and exits. A second signal of the same kind gets the default action, so a
 * stuck run can still be killed with a second Ctrl-C. A listener thread takes them: the
 * calling thread and the threads it starts afterwards block SIGTERM, SIGINT and SIGHUP. */
void rt_install_stop_signals(void);
/* For a process a launcher started (an MPI rank): when the launcher's process ends, stop as
 * at SIGTERM, with SIGHUP as the signal (exit status 129). */
void rt_stop_on_launcher_exit(void);
int rt_stop_requested(void);   /* 0, or the signal number that asked us to stop */
void rt_stop_reset(void);      /* for tests */

/* ---- Terminal --------------------------------------------------------------------------- */
int rt_is_tty(FILE *f);

/* ---- Hashing ---------------------------------------------------------------------------
 * rt_params_hash: FNV-1a 64 over the raw bytes of p[0..n), as 16 lowercase hex digits.
 * Cheap fingerprint for the metrics summary: two runs with identical weights agree, bit for
 * bit. out must hold 17 chars; returns out. */
#define RT_PARAMS_HASH_LEN 16
char *rt_params_hash(const float *p, long n, char out[RT_PARAMS_HASH_LEN + 1]);
uint64_t rt_fnv1a64(const void *data, size_t n, uint64_t h);
#define RT_FNV1A64_INIT 0xcbf29ce484222325ull

#endif
