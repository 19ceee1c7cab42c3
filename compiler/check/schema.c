/* Schema tables built from schema.def, lookups, and the Markdown field reference. */
#include "schema.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const schema_msg schema_msgs[SM_COUNT] = {
#define SCHEMA_MESSAGE(id, name, doc) { id, name, doc },
#include "schema.def"
#undef SCHEMA_MESSAGE
};

const schema_field schema_fields[] = {
#define SCHEMA_FIELD(msg, name, type, sub, flags, group, def, lo, hi, n, values, units, doc) \
    { msg, name, type, sub, flags, group, def, lo, hi, n, values, units, doc },
#include "schema.def"
#undef SCHEMA_FIELD
};

/* Counting the rows a second way catches a .def edit that breaks the table's shape. */
enum {
    SCHEMA_FIELD_ROWS = 0
#define SCHEMA_FIELD(...) + 1
#include "schema.def"
#undef SCHEMA_FIELD
};
static_assert(sizeof schema_fields / sizeof schema_fields[0] == SCHEMA_FIELD_ROWS,
              "schema.def: field table and row count disagree");
const int schema_field_count = SCHEMA_FIELD_ROWS;

static const char *const type_names[] = {
    [SF_INT] = "int", [SF_FLOAT] = "float", [SF_BOOL] = "bool", [SF_STRING] = "string",
    [SF_ENUM] = "enum", [SF_INT_PAIR] = "int or [int, int]", [SF_INT_LIST] = "list of int",
    [SF_FLOAT_LIST] = "list of float", [SF_STRING_LIST] = "list of string", [SF_MSG] = "message",
};
static_assert(sizeof type_names / sizeof type_names[0] == SF_TYPE_COUNT,
              "schema: every schema_type needs a name");

const char *schema_type_name(schema_type type) {
    return (unsigned)type < SF_TYPE_COUNT ? type_names[type] : "?";
}

const schema_field *schema_find(schema_msg_id msg, const char *name) {
    for (int i = 0; i < schema_field_count; i++)
        if (schema_fields[i].msg == msg && strcmp(schema_fields[i].name, name) == 0)
            return &schema_fields[i];
    return NULL;
}

#define SCHEMA_MAX_FIELDS_PER_MSG 64

const char *const *schema_field_names(schema_msg_id msg) {
    static const char *names[SM_COUNT][SCHEMA_MAX_FIELDS_PER_MSG + 1];
    static int filled[SM_COUNT];
    if ((unsigned)msg >= SM_COUNT) return NULL;
    if (!filled[msg]) {
        int n = 0;
        for (int i = 0; i < schema_field_count && n < SCHEMA_MAX_FIELDS_PER_MSG; i++)
            if (schema_fields[i].msg == msg) names[msg][n++] = schema_fields[i].name;
        names[msg][n] = NULL;
        filled[msg] = 1;
    }
    return names[msg];
}

int schema_value_allowed(const schema_field *f, const char *word) {
    size_t len = strlen(word);
    for (const char *p = f->values; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, word, n) == 0) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

int schema_default_number(const schema_field *f, double *out) {
    if (!f->def[0]) return 0;
    if (strcmp(f->def, "true") == 0) { *out = 1; return 1; }
    if (strcmp(f->def, "false") == 0) { *out = 0; return 1; }
    char *end;
    double v = strtod(f->def, &end);
    if (end == f->def || *end) return 0;
    *out = v;
    return 1;
}

int schema_default_list(const schema_field *f, double *out, int cap) {
    const char *p = f->def;
    if (*p++ != '[') return -1;
    int n = 0;
    for (;;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || n == cap) return -1;
        out[n++] = v;
        p = end + strspn(end, " ");
        if (*p == ']') return p[1] ? -1 : n;
        if (*p++ != ',') return -1;
    }
}

int schema_default_for(const schema_field *f, const char *key, char *buf, size_t cap) {
    size_t key_len = strlen(key);
    for (const char *p = f->def; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n > key_len + 2 && strncmp(p, key, key_len) == 0 && p[key_len] == ':') {
            const char *v = p + key_len + 1 + strspn(p + key_len + 1, " ");
            snprintf(buf, cap, "%.*s", (int)(n - (size_t)(v - p)), v);
            return 1;
        }
        if (!comma) break;
        p = comma + 1 + strspn(comma + 1, " ");
    }
    return 0;
}

void schema_format_number(char *buf, size_t cap, double v) {
    if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, cap, "%.0f", v);
    else snprintf(buf, cap, "%g", v);
}

static void print_range(FILE *out, const schema_field *f) {
    if (f->values[0]) {
        fputs("one of ", out);
        for (const char *p = f->values; *p; p++) {
            if (*p == '|') fputs(", ", out);
            else fputc(*p, out);
        }
        return;
    }
    int has_lo = isfinite(f->lo), has_hi = isfinite(f->hi);
    char lo[32], hi[32];
    schema_format_number(lo, sizeof lo, f->lo);
    schema_format_number(hi, sizeof hi, f->hi);
    if (has_lo && has_hi)
        fprintf(out, "%s%s, %s%s", f->flags & SF_LO_OPEN ? "(" : "[", lo, hi,
                f->flags & SF_HI_OPEN ? ")" : "]");
    else if (has_lo) fprintf(out, "%s %s", f->flags & SF_LO_OPEN ? ">" : "≥", lo);
    else if (has_hi) fprintf(out, "%s %s", f->flags & SF_HI_OPEN ? "<" : "≤", hi);
    if (f->list_len) fprintf(out, "%s%d items", has_lo || has_hi ? "; " : "", f->list_len);
}

void schema_print_markdown(FILE *out) {
    fputs("# Spec field reference\n\n"
          "Every field of the spec language, generated from `compiler/check/schema.def` by "
          "`trainc schema --markdown` (`make reference` rewrites this file, and "
          "`tests/golden/reference_test.sh` fails when it is stale); the language itself is "
          "described in the [README](../README.md#spec-language). *required* fields must be "
          "given when their message is; fields marked *one of: G* are mutually exclusive with "
          "the others of group G (exactly one when required). Messages are listed in the order "
          "they nest; a default may name another field (`kernel`) or depend on one "
          "(`key: value, ...`).\n",
          out);
    for (int m = 0; m < SM_COUNT; m++) {
        fprintf(out, "\n## `%s`\n%s\n\n", schema_msgs[m].name, schema_msgs[m].doc);
        int any = 0;
        for (int i = 0; i < schema_field_count; i++) {
            const schema_field *f = &schema_fields[i];
            if (f->msg != (schema_msg_id)m) continue;
            if (!any) fputs("| field | type | default | range / values | units | doc |\n"
                            "|---|---|---|---|---|---|\n", out);
            any = 1;
            fprintf(out, "| `%s` | ", f->name);
            if (f->type == SF_MSG) fprintf(out, "`%s` message", schema_msgs[f->sub].name);
            else fputs(schema_type_name(f->type), out);
            if (f->flags & SF_REPEATED) fputs(", repeated", out);
            fputs(" | ", out);
            if (f->flags & SF_REQUIRED && !f->group[0]) fputs("*required*", out);
            else if (f->def[0]) fprintf(out, "`%s`", f->def);
            if (f->group[0]) fprintf(out, "%s*one of: %s*", f->def[0] ? ", " : "", f->group);
            fputs(" | ", out);
            print_range(out, f);
            fprintf(out, " | %s | %s |\n", f->units, f->doc);
        }
        if (!any) fputs("(no fields)\n", out);
    }
}
