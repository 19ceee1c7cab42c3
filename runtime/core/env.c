/* The TRAINC_* environment variables (rt_env.h): the table built from rt_env.def, the typed
 * accessors that validate a value on every read, the start-up check and the listings. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"
#include "rt_env.h"

extern char **environ;

const rt_env_var rt_env_table[RT_ENV_COUNT] = {
#define RT_ENV(name, kind, values, lo, hi, dflt, readers, meaning) \
    { #name, RT_ENV_KIND_##kind, values, lo, hi, dflt, readers, meaning },
#include "rt_env.def"
#undef RT_ENV
};

static const char *const kind_names[] = { "BOOL", "ENUM", "INT", "NUM", "PATH" };

static void default_error(const char *msg, const char *hint) { rt_die_status(2, hint, "%s", msg); }
static void default_warning(const char *msg) { rt_warn("%s", msg); }

static rt_env_error_fn on_error = default_error;
static rt_env_warn_fn on_warning = default_warning;

void rt_env_on_error(rt_env_error_fn fn) { on_error = fn ? fn : default_error; }
void rt_env_on_warning(rt_env_warn_fn fn) { on_warning = fn ? fn : default_warning; }

/* A call that does not match the table is a bug in the caller, found at its first run. */
RT_NORETURN static void misuse(const rt_env_var *v, const char *what) {
    fprintf(stderr, "internal error: %s (%s in runtime/include/rt_env.def) %s\n", v->name, kind_names[v->kind], what);
    abort();
}

static const rt_env_var *var_of(rt_env_id id, rt_env_kind kind, const char *as) {
    if ((int)id < 0 || id >= RT_ENV_COUNT) {
        fprintf(stderr, "internal error: environment variable id %d is not in rt_env.def\n", (int)id);
        abort();
    }
    const rt_env_var *v = &rt_env_table[id];
    if (v->kind != kind) misuse(v, as);
    return v;
}

/* The n-th of "a|b|c" into out; 0 past the last. */
static int nth_value(const char *values, int n, char *out, size_t cap) {
    const char *p = values;
    for (int i = 0; i < n; i++) {
        p = strchr(p, '|');
        if (!p) return 0;
        p++;
    }
    size_t len = strcspn(p, "|");
    if (len >= cap) len = cap - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    return 1;
}

/* Index of text among v's values, or -1. */
static int value_index(const rt_env_var *v, const char *text) {
    char word[64];
    for (int i = 0; nth_value(v->values, i, word, sizeof word); i++)
        if (!strcmp(word, text)) return i;
    return -1;
}

/* "auto, openblas or onednn" (quote around each value, last_sep before the last). */
static void list_values(const rt_env_var *v, const char *quote, const char *last_sep, char *out, size_t cap) {
    char word[64];
    int n = 0;
    while (nth_value(v->values, n, word, sizeof word)) n++;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        nth_value(v->values, i, word, sizeof word);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s%s%s", i == 0 ? "" : i == n - 1 ? last_sep : ", ", quote, word, quote);
    }
}

/* What v allows, as words: "0 or 1", "a whole number from 0 to 100000", ... */
static void describe_allowed(const rt_env_var *v, char *out, size_t cap) {
    char list[256];
    switch (v->kind) {
    case RT_ENV_KIND_BOOL:
    case RT_ENV_KIND_ENUM:
        list_values(v, "", " or ", list, sizeof list);
        snprintf(out, cap, "%s", list);
        break;
    case RT_ENV_KIND_INT: snprintf(out, cap, "a whole number from %.0f to %.0f", v->lo, v->hi); break;
    case RT_ENV_KIND_NUM: snprintf(out, cap, "a number from %g to %g", v->lo, v->hi); break;
    case RT_ENV_KIND_PATH: snprintf(out, cap, "a path"); break;
    }
}

typedef union { int index; long i; double d; } parsed;

static int parse_as(const rt_env_var *v, const char *text, parsed *out) {
    char *end;
    errno = 0;
    switch (v->kind) {
    case RT_ENV_KIND_BOOL:
    case RT_ENV_KIND_ENUM:
        out->index = value_index(v, text);
        return out->index >= 0 ? 0 : -1;
    case RT_ENV_KIND_INT: {
        long x = strtol(text, &end, 10);
        if (errno || end == text || *end || x < v->lo || x > v->hi) return -1;
        out->i = x;
        return 0;
    }
    case RT_ENV_KIND_NUM: {
        double x = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(x) || x < v->lo || x > v->hi) return -1;
        out->d = x;
        return 0;
    }
    case RT_ENV_KIND_PATH: return 0;
    }
    return -1;
}

int rt_env_parse(rt_env_id id, const char *text, char *why, size_t why_cap, char *hint, size_t hint_cap) {
    const rt_env_var *v = &rt_env_table[id];
    parsed p;
    if (!text || !*text || parse_as(v, text, &p) == 0) return 0;
    char allowed[256];
    describe_allowed(v, allowed, sizeof allowed);
    snprintf(why, why_cap, "environment variable %s='%s' is not allowed: %s takes %s", v->name, text, v->name, allowed);
    snprintf(hint, hint_cap, "give %s %s, or unset it for the default (%s); --help-env lists every TRAINC_* "
             "variable", v->name, v->kind == RT_ENV_KIND_BOOL || v->kind == RT_ENV_KIND_ENUM ? "one of those values"
             : "such a number", v->dflt);
    return -1;
}

/* The value of v, parsed; 0 when unset or empty, and a bad value stops the program. */
static int read_var(rt_env_id id, parsed *out) {
    const char *text = getenv(rt_env_table[id].name);
    if (!text || !*text) return 0;
    char why[512], hint[512];
    if (rt_env_parse(id, text, why, sizeof why, hint, sizeof hint) != 0) {
        on_error(why, hint);
        abort();   /* on_error must not return */
    }
    parse_as(&rt_env_table[id], text, out);
    return 1;
}

int rt_env_bool(rt_env_id id) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_BOOL, "read as a bool");
    parsed p;
    return read_var(id, &p) ? p.index : value_index(v, v->dflt);
}

const char *rt_env_enum(rt_env_id id) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_ENUM, "read as an enum");
    parsed p;
    return read_var(id, &p) ? getenv(v->name) : v->dflt;
}

int rt_env_is(rt_env_id id, const char *value) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_ENUM, "read as an enum");
    if (value_index(v, value) < 0) misuse(v, "asked about a value it does not allow");
    return !strcmp(rt_env_enum(id), value);
}

long rt_env_long(rt_env_id id) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_INT, "read as an integer");
    parsed p;
    if (read_var(id, &p)) return p.i;
    char *end;
    long d = strtol(v->dflt, &end, 10);
    return *end || end == v->dflt ? -1 : d;
}

double rt_env_num(rt_env_id id) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_NUM, "read as a number");
    parsed p;
    if (read_var(id, &p)) return p.d;
    char *end;
    double d = strtod(v->dflt, &end);
    return *end || end == v->dflt ? 0 : d;
}

const char *rt_env_path(rt_env_id id) {
    const rt_env_var *v = var_of(id, RT_ENV_KIND_PATH, "read as a path");
    const char *text = getenv(v->name);
    return text && *text ? text : NULL;
}

/* Edit distance of two short names (for "did you mean"). */
static int distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Under a launcher, the ranks share one environment: only rank 0 warns. */
static int quiet_rank(void) {
    static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        const char *r = getenv(ranks[i]);
        if (r && *r && strcmp(r, "0") != 0) return 1;
    }
    return 0;
}

static void warn_unknown(const char *entry) {
    char name[128];
    size_t len = strcspn(entry, "=");
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, entry, len);
    name[len] = '\0';
    /* a likely typo: a known name within one edit per four letters after TRAINC_ */
    int limit = (int)(len - 7) / 4 > 1 ? (int)(len - 7) / 4 : 1;
    int best = -1, best_d = limit + 1;
    for (int i = 0; i < RT_ENV_COUNT; i++) {
        if (!strcmp(rt_env_table[i].name, name)) return;
        int d = distance(name, rt_env_table[i].name);
        if (d < best_d) best = i, best_d = d;
    }
    char msg[512];
    if (best >= 0)
        snprintf(msg, sizeof msg, "%s is not a TRAINC_* variable this program knows, so it has no effect; "
                 "did you mean %s? (--help-env lists them)", name, rt_env_table[best].name);
    else
        snprintf(msg, sizeof msg, "%s is not a TRAINC_* variable this program knows, so it has no effect "
                 "(--help-env lists them)", name);
    on_warning(msg);
}

void rt_env_check(unsigned readers) {
    /* the warnings first: a misspelt name may explain the error that follows */
    if (!quiet_rank())
        for (char **e = environ; e && *e; e++)
            if (!strncmp(*e, "TRAINC_", 7)) warn_unknown(*e);
    for (int i = 0; i < RT_ENV_COUNT; i++) {
        parsed p;
        if (rt_env_table[i].readers & readers) read_var((rt_env_id)i, &p);
    }
}

static void readers_text(unsigned r, char *out, size_t cap) {
    static const struct { unsigned bit; const char *name; } names[] = {
        { RT_ENV_TRAINER, "every trainer" }, { RT_ENV_CPU, "CPU trainer" }, { RT_ENV_CUDA, "CUDA trainer" },
        { RT_ENV_MPI, "trainer (MPI)" }, { RT_ENV_COMPILER, "trainc" },
    };
    out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (r & names[i].bit) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "%s%s", len ? ", " : "", names[i].name);
        }
}

/* The values column: "auto|openblas|onednn", "0..100000", "PATH". */
static void values_text(const rt_env_var *v, int markdown, char *out, size_t cap) {
    switch (v->kind) {
    case RT_ENV_KIND_BOOL:
    case RT_ENV_KIND_ENUM:
        if (markdown) list_values(v, "`", ", ", out, cap);
        else snprintf(out, cap, "%s", v->values);
        break;
    case RT_ENV_KIND_INT: snprintf(out, cap, "%.0f..%.0f", v->lo, v->hi); break;
    case RT_ENV_KIND_NUM: snprintf(out, cap, "%g..%g", v->lo, v->hi); break;
    case RT_ENV_KIND_PATH: snprintf(out, cap, "PATH"); break;
    }
}

/* text in lines of at most width columns (a longer word gets its own), each indented. */
static void print_wrapped(FILE *out, const char *text, int indent, int width) {
    const char *p = text;
    while (*p) {
        int room = width - indent, len = (int)strlen(p);
        if (len > room) {
            len = room;
            while (len > 0 && p[len] != ' ') len--;
            if (len == 0) len = (int)strcspn(p, " ");
        }
        fprintf(out, "%*s%.*s\n", indent, "", len, p);
        p += len;
        while (*p == ' ') p++;
    }
}

void rt_env_print(FILE *out, int markdown) {
    char values[320], readers[128];
    if (markdown) {
        fputs("| variable | values | default | read by | meaning |\n|---|---|---|---|---|\n", out);
        for (int i = 0; i < RT_ENV_COUNT; i++) {
            const rt_env_var *v = &rt_env_table[i];
            values_text(v, 1, values, sizeof values);
            readers_text(v->readers, readers, sizeof readers);
            fprintf(out, "| `%s` | %s | %s | %s | %s |\n", v->name, values, v->dflt, readers, v->meaning);
        }
        return;
    }
    fputs("TRAINC_* environment variables (unset or empty: the default). A value outside those\n"
          "allowed stops the program with a message; an unknown TRAINC_* name draws a warning.\n", out);
    for (int i = 0; i < RT_ENV_COUNT; i++) {
        const rt_env_var *v = &rt_env_table[i];
        values_text(v, 0, values, sizeof values);
        readers_text(v->readers, readers, sizeof readers);
        fprintf(out, "\n  %s=%s  (default %s; read by %s)\n", v->name, values, v->dflt, readers);
        print_wrapped(out, v->meaning, 6, 92);
    }
}
