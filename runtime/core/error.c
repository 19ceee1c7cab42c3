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

void rt_print_error(const char *msg, const char *hint) {
    fflush(stdout);   /* so the error lands after any progress already printed */
    fprintf(stderr, "error: %s%s\n", error_prefix, msg);
    if (hint && hint[0]) fprintf(stderr, "HINT: %s\n", hint);
    fflush(stderr);
}

RT_NORETURN static void die_v(int status, const char *hint, const char *fmt, va_list ap) {
    char msg[2048];
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
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "warning: %s", error_prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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
