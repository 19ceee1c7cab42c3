/* One-line JSON writer: escaping per RFC 8259 and null for non-finite numbers, so every
 * metrics line parses with any JSON reader. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "rt_metrics.h"

static void reserve(rt_json *j, size_t more) {
    if (j->len + more + 1 <= j->cap) return;
    size_t cap = j->cap ? j->cap : 256;
    while (cap < j->len + more + 1) cap *= 2;
    char *b = realloc(j->buf, cap);
    if (!b) rt_die("json: out of memory growing a line to %zu bytes", cap);
    j->buf = b;
    j->cap = cap;
}

static void put(rt_json *j, const char *s, size_t n) {
    reserve(j, n);
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void putf(rt_json *j, const char *fmt, ...) RT_PRINTF(2, 3);
static void putf(rt_json *j, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_string(rt_json *j, const char *s) {
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': put(j, "\\\"", 2); break;
        case '\\': put(j, "\\\\", 2); break;
        case '\n': put(j, "\\n", 2); break;
        case '\r': put(j, "\\r", 2); break;
        case '\t': put(j, "\\t", 2); break;
        default:
            /* Other control characters must be \u-escaped; bytes >= 0x80 pass through
             * (UTF-8 is valid JSON as is). */
            if (*p < 0x20) putf(j, "\\u%04x", *p);
            else put(j, (const char *)p, 1);
        }
    }
    put(j, "\"", 1);
}

static void put_key(rt_json *j, const char *key) {
    if (j->fields++) put(j, ",", 1);
    put_string(j, key);
    put(j, ":", 1);
}

void rt_json_init(rt_json *j) { memset(j, 0, sizeof *j); }

void rt_json_free(rt_json *j) {
    free(j->buf);
    memset(j, 0, sizeof *j);
}

void rt_json_begin(rt_json *j) {
    j->len = 0;
    j->fields = 0;
    put(j, "{", 1);
}

void rt_json_str(rt_json *j, const char *key, const char *value) {
    put_key(j, key);
    if (value) put_string(j, value);
    else put(j, "null", 4);
}

void rt_json_num(rt_json *j, const char *key, double value) {
    put_key(j, key);
    if (isfinite(value)) putf(j, "%.9g", value);
    else put(j, "null", 4);
}

void rt_json_int(rt_json *j, const char *key, int64_t value) {
    put_key(j, key);
    putf(j, "%" PRId64, value);
}

void rt_json_bool(rt_json *j, const char *key, int value) {
    put_key(j, key);
    if (value) put(j, "true", 4);
    else put(j, "false", 5);
}

const char *rt_json_end(rt_json *j) {
    put(j, "}", 1);
    return j->buf;
}
