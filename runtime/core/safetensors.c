/* safetensors reader (rt_safetensors.h): the header's JSON is parsed by the few rules the
 * format uses (objects, arrays, strings, integers; other values skipped), every tensor's
 * offsets checked against its dtype, shape and the file's size. */
#include "rt_safetensors.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ST_MAX_HEADER (100u << 20)   /* the format's own limit on the header */
#define ST_HINT "pass a .safetensors file (safetensors.torch.save_file, or trainc export)"

typedef struct {
    const char *p, *end;
    int bad;
} json_in;

static void ws(json_in *j) {
    while (j->p < j->end && isspace((unsigned char)*j->p)) j->p++;
}
static int eat(json_in *j, char c) {
    ws(j);
    if (j->p < j->end && *j->p == c) return j->p++, 1;
    return 0;
}

/* A string into a malloc'd buffer (escapes \" \\ \/ \uXXXX below 0x80 kept simple). */
static char *str(json_in *j) {
    ws(j);
    if (j->p >= j->end || *j->p != '"') return j->bad = 1, NULL;
    j->p++;
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            c = *j->p++;
            if (c == 'u') {   /* keys are ASCII in practice; keep a '?' for anything else */
                unsigned v = 0;
                for (int k = 0; k < 4 && j->p < j->end; k++) v = v * 16 + (unsigned)(isdigit((unsigned char)*j->p) ? *j->p - '0' : (tolower(*j->p) - 'a' + 10)), j->p++;
                c = v < 0x80 ? (char)v : '?';
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        if (n + 2 > cap) s = realloc(s, cap *= 2);
        s[n++] = c;
    }
    if (j->p >= j->end) return free(s), j->bad = 1, NULL;
    j->p++;
    s[n] = '\0';
    return s;
}

static long long integer(json_in *j) {
    ws(j);
    char *e;
    errno = 0;
    long long v = strtoll(j->p, &e, 10);
    if (e == j->p || e > j->end || errno) return j->bad = 1, 0;
    j->p = e;
    return v;
}

static void skip_value(json_in *j, int depth) {
    ws(j);
    if (depth > 64 || j->p >= j->end) { j->bad = 1; return; }
    char c = *j->p;
    if (c == '"') free(str(j));
    else if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (eat(j, close)) return;
        do {
            if (c == '{') { free(str(j)); if (!eat(j, ':')) { j->bad = 1; return; } }
            skip_value(j, depth + 1);
        } while (!j->bad && eat(j, ','));
        if (!eat(j, close)) j->bad = 1;
    } else {
        while (j->p < j->end && (isalnum((unsigned char)*j->p) || strchr("+-.", *j->p))) j->p++;
    }
}

static int dtype_bytes(const char *d) {
    if (!strcmp(d, "F64") || !strcmp(d, "I64") || !strcmp(d, "U64")) return 8;
    if (!strcmp(d, "F32") || !strcmp(d, "I32") || !strcmp(d, "U32")) return 4;
    if (!strcmp(d, "F16") || !strcmp(d, "BF16") || !strcmp(d, "I16") || !strcmp(d, "U16")) return 2;
    if (!strcmp(d, "I8") || !strcmp(d, "U8") || !strcmp(d, "BOOL")) return 1;
    return 0;
}

long rt_st_numel(const rt_st_tensor *t) {
    long n = 1;
    for (int k = 0; k < t->ndim; k++) n *= t->shape[k];
    return n;
}

/* One tensor's description: {"dtype": .., "shape": [..], "data_offsets": [b, e]}. */
static void tensor(json_in *j, rt_st_tensor *t) {
    if (!eat(j, '{')) { j->bad = 1; return; }
    int seen = 0;
    if (eat(j, '}')) { j->bad = 1; return; }
    do {
        char *k = str(j);
        if (!k || !eat(j, ':')) { free(k); j->bad = 1; return; }
        if (!strcmp(k, "dtype")) {
            char *d = str(j);
            if (d) snprintf(t->dtype, sizeof t->dtype, "%s", d), seen |= 1;
            free(d);
        } else if (!strcmp(k, "shape") || !strcmp(k, "data_offsets")) {
            int shape = k[0] == 's', n = 0;
            long long v[RT_ST_MAX_DIMS];
            if (!eat(j, '[')) { free(k); j->bad = 1; return; }
            if (!eat(j, ']')) {
                do {
                    long long x = integer(j);
                    if (n >= (shape ? RT_ST_MAX_DIMS : 2) || x < 0 || x > (1LL << 40)) j->bad = 1;
                    else v[n++] = x;
                } while (!j->bad && eat(j, ','));
                if (!eat(j, ']')) j->bad = 1;
            }
            if (shape) {
                t->ndim = n;
                for (int d = 0; d < n; d++) t->shape[d] = (long)v[d];
                seen |= 2;
            } else if (n == 2) t->begin = (uint64_t)v[0], t->end = (uint64_t)v[1], seen |= 4;
            else j->bad = 1;
        } else skip_value(j, 1);
        free(k);
    } while (!j->bad && eat(j, ','));
    if (!eat(j, '}') || seen != 7) j->bad = 1;
}

int rt_safetensors_sniff(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char b[9];
    int ok = fread(b, 1, 9, f) == 9;
    fclose(f);
    uint64_t n = 0;
    for (int k = 7; k >= 0; k--) n = n << 8 | b[k];
    return ok && n > 1 && n < ST_MAX_HEADER && b[8] == '{';
}

rt_status rt_safetensors_open(rt_safetensors *s, const char *path, rt_err *err) {
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    rt_status st = rt_require_regular_file(path, "safetensors file", ST_HINT, err);
    if (st != RT_OK) return st;
    FILE *f = fopen(path, "rb");
    if (!f) return rt_fail(err, RT_E_NOT_FOUND, ST_HINT, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    fstat(fileno(f), &sb);
    uint64_t size = (uint64_t)sb.st_size;
    unsigned char b[8];
    uint64_t n = 0;
    if (fread(b, 1, 8, f) != 8) {
        fclose(f);
        return rt_fail(err, RT_E_TRUNCATED, ST_HINT, "%s is too short for a safetensors file (%llu bytes)", path,
                       (unsigned long long)size);
    }
    for (int k = 7; k >= 0; k--) n = n << 8 | b[k];
    if (n < 2 || n > ST_MAX_HEADER || 8 + n > size) {
        fclose(f);
        return rt_fail(err, RT_E_FORMAT, ST_HINT, "%s is not a safetensors file: its header length %llu does not fit "
                       "its %llu bytes", path, (unsigned long long)n, (unsigned long long)size);
    }
    char *h = malloc(n);
    if (!h || fread(h, 1, n, f) != n) {
        free(h), fclose(f);
        return rt_fail(err, RT_E_IO, ST_HINT, "cannot read the header of %s", path);
    }
    json_in j = { h, h + n, 0 };
    int cap = 0;
    if (!eat(&j, '{')) j.bad = 1;
    if (!j.bad && !eat(&j, '}')) {
        do {
            char *key = str(&j);
            if (!key || !eat(&j, ':')) { free(key); j.bad = 1; break; }
            if (!strcmp(key, "__metadata__")) { skip_value(&j, 1); free(key); continue; }
            if (s->n == cap) s->t = realloc(s->t, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *s->t);
            rt_st_tensor *t = &s->t[s->n++];
            memset(t, 0, sizeof *t);
            t->name = key;
            tensor(&j, t);
        } while (!j.bad && eat(&j, ','));
        if (!j.bad && !eat(&j, '}')) j.bad = 1;
    }
    long at = (long)n - (long)(j.end - j.p);   /* where the parse stopped */
    free(h);
    s->f = f, s->data_start = 8 + n, s->data_bytes = size - 8 - n;
    if (j.bad) {
        rt_safetensors_close(s);
        return rt_fail(err, RT_E_FORMAT, ST_HINT, "%s is not a safetensors file: its JSON header is malformed near "
                       "byte %ld", path, at + 8);
    }
    for (int i = 0; i < s->n; i++) {
        const rt_st_tensor *t = &s->t[i];
        int eb = dtype_bytes(t->dtype);
        uint64_t want = eb, values = 1;   /* in 64 bits, refusing what overflows: shapes are the file's word */
        int huge = 0;
        for (int k = 0; k < t->ndim; k++) huge |= __builtin_mul_overflow(values, (uint64_t)t->shape[k], &values);
        huge |= __builtin_mul_overflow(want, values, &want) || values > (1ull << 50);
        rt_status code = RT_OK;
        if (!eb)
            code = rt_fail(err, RT_E_FORMAT, ST_HINT, "%s: tensor '%s' has dtype '%s', not one of the format's", path,
                           t->name, t->dtype);
        else if (huge)
            code = rt_fail(err, RT_E_FORMAT, ST_HINT, "%s: tensor '%s' has a shape too large for any file", path,
                           t->name);
        else if (t->end < t->begin || t->end > s->data_bytes)
            code = rt_fail(err, RT_E_TRUNCATED, ST_HINT, "%s: tensor '%s' lies at bytes [%llu, %llu) of data that has "
                           "%llu (a truncated file?)", path, t->name, (unsigned long long)t->begin,
                           (unsigned long long)t->end, (unsigned long long)s->data_bytes);
        else if (t->end - t->begin != want)
            code = rt_fail(err, RT_E_FORMAT, ST_HINT, "%s: tensor '%s' (%s, %llu values) needs %llu bytes but its "
                           "data_offsets span %llu", path, t->name, t->dtype, (unsigned long long)values,
                           (unsigned long long)want, (unsigned long long)(t->end - t->begin));
        if (code != RT_OK) {
            rt_safetensors_close(s);
            return code;
        }
    }
    return RT_OK;
}

const rt_st_tensor *rt_safetensors_find(const rt_safetensors *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name)) return &s->t[i];
    return NULL;
}

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
    if (e == 0) {
        if (!m) bits = sign;
        else {   /* subnormal: normalize */
            e = 113;
            while (!(m & 1024)) m <<= 1, e--;
            bits = sign | (e << 23) | ((m & 1023) << 13);
        }
    } else if (e == 31) bits = sign | 0x7f800000u | (m << 13);
    else bits = sign | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

rt_status rt_safetensors_read_f32(const rt_safetensors *s, const rt_st_tensor *t, float *dst, rt_err *err) {
    long n = rt_st_numel(t);
    int eb = dtype_bytes(t->dtype);
    int kind = !strcmp(t->dtype, "F32") ? 0 : !strcmp(t->dtype, "F16") ? 1 : !strcmp(t->dtype, "BF16") ? 2
             : !strcmp(t->dtype, "F64") ? 3 : -1;
    if (kind < 0)
        return rt_fail(err, RT_E_FORMAT, "weights must be floating point (F32, F16, BF16 or F64)",
                       "%s: tensor '%s' is %s, not a floating-point type", s->path, t->name, t->dtype);
    unsigned char *raw = malloc((size_t)(n ? n : 1) * (size_t)eb);
    if (fseeko(s->f, (off_t)(s->data_start + t->begin), SEEK_SET) != 0 ||
        fread(raw, (size_t)eb, (size_t)n, s->f) != (size_t)n) {
        free(raw);
        return rt_fail(err, RT_E_IO, ST_HINT, "cannot read tensor '%s' of %s", t->name, s->path);
    }
    for (long i = 0; i < n; i++) {   /* little-endian, as x86-64 */
        const unsigned char *p = raw + (size_t)i * (size_t)eb;
        if (kind == 0) memcpy(&dst[i], p, 4);
        else if (kind == 3) { double d; memcpy(&d, p, 8); dst[i] = (float)d; }
        else {
            uint16_t h = (uint16_t)(p[0] | p[1] << 8);
            if (kind == 1) dst[i] = half_to_float(h);
            else { uint32_t bits = (uint32_t)h << 16; memcpy(&dst[i], &bits, 4); }
        }
    }
    free(raw);
    return RT_OK;
}

void rt_safetensors_close(rt_safetensors *s) {
    if (s->f) fclose(s->f);
    for (int i = 0; i < s->n; i++) free(s->t[i].name);
    free(s->t);
    memset(s, 0, sizeof *s);
}
