/* Typed field reads over a schema-checked tree, falling back to the schema's defaults. */
#include "sema_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const schema_field *field_or_die(schema_msg_id id, const char *field) {
    const schema_field *f = schema_find(id, field);
    if (!f) {
        fprintf(stderr, "trainc: internal error: no field '%s' in schema message %d\n", field, id);
        abort();
    }
    return f;
}

const ast_node *sv_get(const ast_node *msg, schema_msg_id id, const char *field) {
    field_or_die(id, field);
    if (!msg) return NULL;
    const ast_node *f = ast_find_field(msg, field);
    return f ? f->a : NULL;
}

bool sv_has(const ast_node *msg, schema_msg_id id, const char *field) {
    return sv_get(msg, id, field) != NULL;
}

double sv_number(const ast_node *v) {
    return v->kind == AST_INT ? (double)v->ival : v->kind == AST_FLOAT ? v->fval : 0;
}

static double default_number(schema_msg_id id, const char *field) {
    double d = 0;
    schema_default_number(field_or_die(id, field), &d);
    return d;
}

int64_t sv_int(const ast_node *msg, schema_msg_id id, const char *field) {
    const ast_node *v = sv_get(msg, id, field);
    if (v && v->kind == AST_INT) return v->ival;
    return (int64_t)default_number(id, field);
}

double sv_float(const ast_node *msg, schema_msg_id id, const char *field) {
    const ast_node *v = sv_get(msg, id, field);
    if (v && (v->kind == AST_INT || v->kind == AST_FLOAT)) return sv_number(v);
    return default_number(id, field);
}

bool sv_bool(const ast_node *msg, schema_msg_id id, const char *field) {
    const ast_node *v = sv_get(msg, id, field);
    if (v && v->kind == AST_IDENT) return strcmp(v->text, "true") == 0;
    return default_number(id, field) != 0;
}

const char *sv_str(const ast_node *msg, schema_msg_id id, const char *field) {
    const ast_node *v = sv_get(msg, id, field);
    if (v && (v->kind == AST_STRING || v->kind == AST_IDENT)) return v->text;
    return field_or_die(id, field)->def;
}

void sv_pair(const ast_node *msg, schema_msg_id id, const char *field, int64_t out[2]) {
    const ast_node *v = sv_get(msg, id, field);
    if (v && v->kind == AST_INT) {
        out[0] = out[1] = v->ival;
    } else if (v && v->kind == AST_LIST && v->n_kids == 2) {
        out[0] = v->kids[0]->ival;
        out[1] = v->kids[1]->ival;
    } else {
        out[0] = out[1] = (int64_t)default_number(id, field);
    }
}

int sv_floats(const ast_node *msg, schema_msg_id id, const char *field, double *out, int cap) {
    const ast_node *v = sv_get(msg, id, field);
    if (!v || v->kind != AST_LIST) return schema_default_list(field_or_die(id, field), out, cap);
    int n = v->n_kids < cap ? v->n_kids : cap;
    for (int i = 0; i < n; i++) out[i] = sv_number(v->kids[i]);
    return n;
}

static int name_index(const char *word, size_t len, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (names[i] && strlen(names[i]) == len && strncmp(names[i], word, len) == 0) return i;
    return -1;
}

int sv_enum(const ast_node *msg, schema_msg_id id, const char *field, const char *const *names, int n) {
    const schema_field *f = field_or_die(id, field);
    for (const char *p = f->values; *p;) {
        size_t len = strcspn(p, "|");
        if (name_index(p, len, names, n) < 0) {
            fprintf(stderr, "trainc: internal error: enum value '%.*s' of field '%s' has no C "
                    "enum value\n", (int)len, p, field);
            abort();
        }
        p += len + (p[len] == '|');
    }
    const char *word = sv_str(msg, id, field);
    int k = name_index(word, strlen(word), names, n);
    if (k < 0) {
        fprintf(stderr, "trainc: internal error: field '%s' holds '%s', not one of its values\n",
                field, word);
        abort();
    }
    return k;
}

const ast_node *sv_msg(const ast_node *msg, schema_msg_id id, const char *field) {
    const ast_node *v = sv_get(msg, id, field);
    return v && v->kind == AST_MESSAGE ? v : NULL;
}

src_loc sv_loc(const ast_node *msg, schema_msg_id id, const char *field) {
    field_or_die(id, field);
    const ast_node *f = msg ? ast_find_field(msg, field) : NULL;
    if (f) return f->loc;
    if (msg) return msg->loc;
    return (src_loc){0};
}
