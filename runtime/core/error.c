/* Error reporting: fatal messages with hints on stderr, and rt_err for recoverable failures. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"

/* "rank 3: " in a multi-rank run, so a message says which process it comes from. */
static const char *error_prefix = "";

void rt_set_error_prefix(const char *prefix) { error_prefix = prefix ? prefix : ""; }

static rt_die_hook die_hook;

void rt_set_die_hook(rt_die_hook hook) { die_hook = hook; }

/* A message is written to stderr with one call, whole: stderr is unbuffered, so a message
 * printed in pieces is several writes, and in a multi-rank run (mpirun and srun forward each
 * rank's stderr as it comes) another rank's line lands between them, mid-line. */
#define MESSAGE_MAX 4096

void rt_print_error(const char *msg, const char *hint) {
    char text[2 * MESSAGE_MAX + 64];   /* the message, its hint and the prefixes, whole */
    int has_hint = hint && hint[0];
    snprintf(text, sizeof text, "error: %s%s\n%s%s%s", error_prefix, msg, has_hint ? "HINT: " : "",
             has_hint ? hint : "", has_hint ? "\n" : "");
    fflush(stdout);   /* so the error lands after any progress already printed */
    fputs(text, stderr);
    fflush(stderr);
}

RT_NORETURN static void die_v(int status, const char *hint, const char *fmt, va_list ap) {
    char msg[MESSAGE_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (die_hook) die_hook(msg, hint, status);
    rt_print_error(msg, hint);
    exit(status);
}

void rt_die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(1, NULL, fmt, ap);
}

void rt_die_hint(const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(1, hint, fmt, ap);
}

void rt_die_status(int status, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(status, hint, fmt, ap);
}

void rt_warn(const char *fmt, ...) {
    char msg[MESSAGE_MAX], text[MESSAGE_MAX + 64];   /* + "warning: " and the rank prefix */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(text, sizeof text, "warning: %s%s\n", error_prefix, msg);
    fputs(text, stderr);
}

rt_status rt_fail(rt_err *err, rt_status code, const char *hint, const char *fmt, ...) {
    rt_err local;
    rt_err *e = err ? err : &local;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    snprintf(e->hint, sizeof e->hint, "%s", hint ? hint : "");
    e->code = code;
    if (!err) rt_die_err(e);
    return code;
}

void rt_die_err(const rt_err *err) {
    rt_die_hint(err->hint, "%s", err->msg);
}

const char *rt_status_name(rt_status s) {
    switch (s) {
    case RT_OK: return "ok";
    case RT_E_IO: return "i/o error";
    case RT_E_NOT_FOUND: return "not found";
    case RT_E_FORMAT: return "bad format";
    case RT_E_VERSION: return "unsupported version";
    case RT_E_TRUNCATED: return "truncated";
    case RT_E_CHECKSUM: return "checksum mismatch";
    case RT_E_MISMATCH: return "mismatch";
    case RT_E_RANGE: return "out of range";
    case RT_E_ARG: return "invalid argument";
    }
    return "unknown";
}
