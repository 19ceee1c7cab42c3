/* Sema stage 1: every field of the resolved tree against the schema: known name (with a
 * suggestion), type, range, enum value, list length, duplicates, required fields and
 * mutually exclusive groups. Later stages may then read values without re-checking. */
#include "sema.h"
#include "schema.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SEMA_MAX_MSG_DEPTH 64   /* the schema nests 5 deep; deeper input is already wrong */

/* "NONE, LINEAR, SQRT" from "NONE|LINEAR|SQRT". */
static void format_values(char *buf, size_t cap, const char *values) {
    size_t n = 0;
    for (const char *p = values; *p && n + 3 < cap; p++) {
        if (*p == '|') { buf[n++] = ','; buf[n++] = ' '; }
        else buf[n++] = *p;
    }
    buf[n] = 0;
}

static void format_range(char *buf, size_t cap, const schema_field *f) {
    int has_lo = isfinite(f->lo), has_hi = isfinite(f->hi);
    char lo[32], hi[32];
    schema_format_number(lo, sizeof lo, f->lo);
    schema_format_number(hi, sizeof hi, f->hi);
    if (has_lo && has_hi)
        snprintf(buf, cap, "in %s%s, %s%s", f->flags & SF_LO_OPEN ? "(" : "[", lo, hi,
                 f->flags & SF_HI_OPEN ? ")" : "]");
    else if (has_lo) snprintf(buf, cap, "%s %s", f->flags & SF_LO_OPEN ? ">" : ">=", lo);
    else snprintf(buf, cap, "%s %s", f->flags & SF_HI_OPEN ? "<" : "<=", hi);
}

/* A hint says what to do, then what the field is (its schema doc, as context):
 * "add 'out: ...' to this 'conv' ('out': output channels)". */
static const char *field_hint(char *buf, size_t cap, const schema_field *f, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static const char *field_hint(char *buf, size_t cap, const schema_field *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap || !f->doc[0]) return buf;
    size_t len = strlen(f->doc);
    while (len && f->doc[len - 1] == '.') len--;
    if (len == strlen(f->name) && strncasecmp(f->doc, f->name, len) == 0) return buf;   /* "Momentum." */
    /* "Output channels." reads as "output channels" mid-sentence; keep "GELU", "BN". */
    int lower = isupper((unsigned char)f->doc[0]) && !isupper((unsigned char)f->doc[1]);
    snprintf(buf + n, cap - (size_t)n, " ('%s': %c%.*s)", f->name,
             lower ? tolower((unsigned char)f->doc[0]) : f->doc[0], (int)len - 1, f->doc + 1);
    return buf;
}

/* A value of the field's type to show in a hint: its default where it has a plain one. */
static const char *example_value(char *buf, size_t cap, const schema_field *f) {
    double d;
    if (f->def[0] && (schema_default_number(f, &d) || f->type == SF_BOOL || f->type == SF_ENUM)) {
        snprintf(buf, cap, "%s", f->def);
        return buf;
    }
    /* No default: a placeholder of the right shape, not a made-up number. */
    switch (f->type) {
    case SF_BOOL: snprintf(buf, cap, "true"); break;
    case SF_STRING: snprintf(buf, cap, "\"...\""); break;
    case SF_ENUM: snprintf(buf, cap, "%.*s", (int)strcspn(f->values, "|"), f->values); break;
    case SF_INT_LIST: case SF_FLOAT_LIST: case SF_STRING_LIST: {
        const char *item = f->type == SF_STRING_LIST ? "\"...\"" : "...";
        if (f->list_len == 0) { snprintf(buf, cap, "[%s, ...]", item); break; }
        size_t k = (size_t)snprintf(buf, cap, "[");
        for (int i = 0; i < f->list_len && k < cap; i++)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", item);
        if (k < cap) snprintf(buf + k, cap - k, "]");
        break;
    }
    default: snprintf(buf, cap, "...");
    }
    return buf;
}

static int in_range(const schema_field *f, double v) {
    if (isnan(v)) return 0;
    if (f->flags & SF_LO_OPEN ? v <= f->lo : v < f->lo) return 0;
    if (f->flags & SF_HI_OPEN ? v >= f->hi : v > f->hi) return 0;
    return 1;
}

static const char *value_kind_name(const ast_node *v) {
    switch (v->kind) {
    case AST_INT: return "an integer";
    case AST_FLOAT: return "a float";
    case AST_STRING: return "a string";
    case AST_IDENT: return "an identifier";
    case AST_LIST: return "a list";
    case AST_MESSAGE: return "a message";
    default: return "an expression";
    }
}

static const char *expected_name(schema_type t) {
    switch (t) {
    case SF_INT: return "an integer";
    case SF_FLOAT: return "a number";
    case SF_BOOL: return "true or false";
    case SF_STRING: return "a string";
    case SF_ENUM: return "one of its values";
    case SF_INT_PAIR: return "an integer or a list [a, b] of two integers";
    case SF_INT_LIST: return "a list of integers";
    case SF_FLOAT_LIST: return "a list of numbers";
    case SF_STRING_LIST: return "a list of strings";
    case SF_MSG: return "a message { ... }";
    default: return "?";
    }
}

static int type_error(diag_ctx *diag, const schema_field *f, const char *msg, const ast_node *v) {
    char hint[512], ex[96];
    if (f->type == SF_MSG)
        field_hint(hint, sizeof hint, f, "write it as a message: '%s { ... }'", f->name);
    else
        field_hint(hint, sizeof hint, f, "write it as '%s: %s'", f->name,
                   example_value(ex, sizeof ex, f));
    diag_error(diag, v->loc, hint, "field '%s' in '%s' must be %s, not %s", f->name, msg,
               expected_name(f->type), value_kind_name(v));
    return 1;
}

/* Range check of one number; item >= 0 names a list element. */
static int check_number(diag_ctx *diag, const schema_field *f, const char *msg,
                        const ast_node *v, int item) {
    double x = v->kind == AST_INT ? (double)v->ival : v->fval;
    if (in_range(f, x)) return 0;
    char range[96], what[64];
    format_range(range, sizeof range, f);
    if (item >= 0) snprintf(what, sizeof what, "item %d of '%s'", item, f->name);
    else snprintf(what, sizeof what, "'%s'", f->name);
    char shown[48];
    if (v->kind == AST_INT) snprintf(shown, sizeof shown, "%lld", (long long)v->ival);
    else snprintf(shown, sizeof shown, "%g", v->fval);
    char hint[512], ex[32];
    double d;
    if (item < 0 && f->def[0] && schema_default_number(f, &d))
        field_hint(hint, sizeof hint, f, "leave '%s' out to use its default, %s", f->name, f->def);
    else if (in_range(f, -x)) {   /* a stray minus sign */
        schema_format_number(ex, sizeof ex, -x);
        field_hint(hint, sizeof hint, f, "did you mean %s?", ex);
    } else {
        schema_format_number(ex, sizeof ex, x > f->hi ? f->hi : f->lo);
        field_hint(hint, sizeof hint, f, "use %s %s", x > f->hi ? "at most" : "at least", ex);
    }
    diag_error(diag, v->loc, hint, "%s in '%s' is %s; it must be %s", what, msg, shown, range);
    return 1;
}

static int check_scalar(diag_ctx *diag, const schema_field *f, const char *msg,
                        const ast_node *v, schema_type t, int item) {
    switch (t) {
    case SF_INT:
        if (v->kind == AST_FLOAT) {
            char hint[512];
            double r = floor(v->fval), up = ceil(v->fval);
            if (r == up) field_hint(hint, sizeof hint, f, "write it without a decimal point: %.0f", r);
            else field_hint(hint, sizeof hint, f, "write a whole number such as %.0f or %.0f", r, up);
            diag_error(diag, v->loc, hint, "field '%s' in '%s' must be an integer, not %g",
                       f->name, msg, v->fval);
            return 1;
        }
        if (v->kind != AST_INT) return type_error(diag, f, msg, v);
        return check_number(diag, f, msg, v, item);
    case SF_FLOAT:
        if (v->kind != AST_INT && v->kind != AST_FLOAT) return type_error(diag, f, msg, v);
        return check_number(diag, f, msg, v, item);
    case SF_BOOL:
        if (v->kind != AST_IDENT || (strcmp(v->text, "true") && strcmp(v->text, "false")))
            return type_error(diag, f, msg, v);
        return 0;
    case SF_STRING:
        if (v->kind != AST_STRING) {
            if (v->kind == AST_IDENT) {
                diag_error(diag, v->loc, "put the value in double quotes",
                           "field '%s' in '%s' must be a string, not the identifier '%s'",
                           f->name, msg, v->text);
                return 1;
            }
            return type_error(diag, f, msg, v);
        }
        break;
    case SF_ENUM:
        if (v->kind != AST_IDENT && v->kind != AST_STRING) return type_error(diag, f, msg, v);
        if (v->kind == AST_STRING && schema_value_allowed(f, v->text)) {
            diag_error(diag, v->loc, "enum values are written without quotes",
                       "field '%s' in '%s' takes the identifier %s, not a string", f->name, msg,
                       v->text);
            return 1;
        }
        break;
    default:
        return type_error(diag, f, msg, v);
    }
    if (f->values[0] && !schema_value_allowed(f, v->text)) {
        char allowed[256], hint[320];
        format_values(allowed, sizeof allowed, f->values);
        const char *cands[32];
        int n = 0;
        for (const char *p = f->values; *p && n < 31;) {
            static char words[32][64];
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len > 63) len = 63;
            memcpy(words[n], p, len);
            words[n][len] = 0;
            cands[n] = words[n];
            n++;
            if (!bar) break;
            p = bar + 1;
        }
        cands[n] = NULL;
        const char *near = diag_suggest(v->text, cands);
        if (near) snprintf(hint, sizeof hint, "did you mean '%s'?", near);
        if (!near) field_hint(hint, sizeof hint, f, "write one of the allowed values, unquoted");
        diag_error(diag, v->loc, hint,
                   "invalid value '%.64s' for '%s' in '%s'; allowed: %s", v->text, f->name, msg,
                   allowed);
        return 1;
    }
    return 0;
}

static int check_list(diag_ctx *diag, const schema_field *f, const char *msg, const ast_node *v,
                      schema_type item) {
    if (v->kind != AST_LIST) return type_error(diag, f, msg, v);
    if (f->list_len && v->n_kids != f->list_len) {
        char hint[512], ex[96];
        field_hint(hint, sizeof hint, f, "write %d items, e.g. '%s: %s'", f->list_len, f->name,
                   example_value(ex, sizeof ex, f));
        diag_error(diag, v->loc, hint, "field '%s' in '%s' needs %d items, not %d", f->name,
                   msg, f->list_len, v->n_kids);
        return 1;
    }
    for (int i = 0; i < v->n_kids; i++)
        if (check_scalar(diag, f, msg, v->kids[i], item, i)) return 1;
    return 0;
}

static int check_value(diag_ctx *diag, const schema_field *f, const char *msg, const ast_node *v) {
    switch (f->type) {
    case SF_INT_PAIR:
        if (v->kind == AST_LIST) {
            if (v->n_kids != 2) {
                char hint[512];
                field_hint(hint, sizeof hint, f, "write one number for both, or [h, w]");
                diag_error(diag, v->loc, hint, "field '%s' in '%s' needs 2 items [h, w], not %d",
                           f->name, msg, v->n_kids);
                return 1;
            }
            return check_list(diag, f, msg, v, SF_INT);
        }
        return check_scalar(diag, f, msg, v, SF_INT, -1);
    case SF_INT_LIST: return check_list(diag, f, msg, v, SF_INT);
    case SF_FLOAT_LIST: return check_list(diag, f, msg, v, SF_FLOAT);
    case SF_STRING_LIST: return check_list(diag, f, msg, v, SF_STRING);
    case SF_MSG:
        if (v->kind != AST_MESSAGE) return type_error(diag, f, msg, v);
        return 0;
    default: return check_scalar(diag, f, msg, v, f->type, -1);
    }
}

static void report_unknown(diag_ctx *diag, const ast_node *field, schema_msg_id id) {
    const char *msg = schema_msgs[id].name;
    const char *near = diag_suggest(field->text, schema_field_names(id));
    char hint[512];
    if (near) {
        diag_error(diag, field->loc, NULL, "unknown field '%.64s' in '%s'; did you mean '%s'?",
                   field->text, msg, near);
        return;
    }
    size_t n = (size_t)snprintf(hint, sizeof hint, "fields of '%s':", msg);
    const char *const *names = schema_field_names(id);
    for (int i = 0; names[i] && n < sizeof hint - 40; i++)
        n += (size_t)snprintf(hint + n, sizeof hint - n, "%s %s", i ? "," : "", names[i]);
    if (!names[0]) snprintf(hint, sizeof hint, "'%s' takes no fields", msg);
    diag_error(diag, field->loc, hint, "unknown field '%.64s' in '%s'", field->text, msg);
}

static int check_message(diag_ctx *diag, const ast_node *node, schema_msg_id id, src_loc where,
                         int depth, int *net_errors);

/* Duplicates and group conflicts with fields earlier in the same message. */
static int check_against_earlier(diag_ctx *diag, const ast_node *node, int i,
                                 const schema_field *sf, schema_msg_id id) {
    const ast_node *f = node->kids[i];
    for (int j = 0; j < i; j++) {
        const ast_node *g = node->kids[j];
        if (g->kind != AST_FIELD) continue;
        if (strcmp(g->text, f->text) == 0 && !(sf->flags & SF_REPEATED)) {
            diag_error(diag, f->loc, "a field that is not repeated may be given once",
                       "duplicate field '%s' in '%s'", f->text, schema_msgs[id].name);
            diag_note(diag, g->loc, "'%s' first given here", f->text);
            return 1;
        }
        const schema_field *gf = schema_find(id, g->text);
        if (sf->group[0] && gf && gf != sf && strcmp(gf->group, sf->group) == 0) {
            char hint[160];
            snprintf(hint, sizeof hint, "'%s' and '%s' are alternatives (%s); keep one", g->text,
                     f->text, sf->group);
            diag_error(diag, f->loc, hint, "'%s' and '%s' cannot both be given in '%s'", g->text,
                       f->text, schema_msgs[id].name);
            return 1;
        }
    }
    return 0;
}

/* Required fields and required groups that are absent. */
static int check_required(diag_ctx *diag, const ast_node *node, schema_msg_id id, src_loc where) {
    int errors = 0;
    for (int k = 0; k < schema_field_count; k++) {
        const schema_field *sf = &schema_fields[k];
        if (sf->msg != id || !(sf->flags & SF_REQUIRED)) continue;
        if (!sf->group[0]) {
            if (!ast_find_field(node, sf->name)) {
                char hint[512], ex[96];
                if (sf->type == SF_MSG)
                    field_hint(hint, sizeof hint, sf, "add '%s { ... }' to this '%s'", sf->name,
                               schema_msgs[id].name);
                else
                    field_hint(hint, sizeof hint, sf, "add '%s: %s' to this '%s'", sf->name,
                               example_value(ex, sizeof ex, sf), schema_msgs[id].name);
                diag_error(diag, where, hint, "missing required field '%s' in '%s'", sf->name,
                           schema_msgs[id].name);
                errors++;
            }
            continue;
        }
        /* Report a group once, at its first member. */
        int first = 1, present = 0;
        char names[256] = "";
        for (int m = 0; m < schema_field_count; m++) {
            const schema_field *o = &schema_fields[m];
            if (o->msg != id || strcmp(o->group, sf->group)) continue;
            if (o < sf) first = 0;
            if (ast_find_field(node, o->name)) present = 1;
            size_t n = strlen(names);
            snprintf(names + n, sizeof names - n, "%s'%s'", n ? ", " : "", o->name);
        }
        if (first && !present) {
            char hint[320];
            snprintf(hint, sizeof hint, "give exactly one of %s", names);
            diag_error(diag, where, hint, "missing %s in '%s'", sf->group, schema_msgs[id].name);
            errors++;
        }
    }
    return errors;
}

/* net_errors (top level only) receives the errors found inside `net`, so the net can still
 * be analysed when only, say, the solver is wrong. */
static int check_message(diag_ctx *diag, const ast_node *node, schema_msg_id id, src_loc where,
                         int depth, int *net_errors) {
    if (depth > SEMA_MAX_MSG_DEPTH || diag_should_stop(diag)) return 1;
    int errors = 0;
    for (int i = 0; i < node->n_kids && !diag_should_stop(diag); i++) {
        const ast_node *f = node->kids[i];
        if (f->kind != AST_FIELD) continue;
        const schema_field *sf = schema_find(id, f->text);
        if (!sf) {
            report_unknown(diag, f, id);
            errors++;
            continue;
        }
        /* Layers are repeated and ungrouped: skipping them keeps big nets linear. */
        int needs_scan = !(sf->flags & SF_REPEATED) || sf->group[0];
        if (needs_scan && check_against_earlier(diag, node, i, sf, id)) { errors++; continue; }
        if (check_value(diag, sf, schema_msgs[id].name, f->a)) { errors++; continue; }
        if (sf->type != SF_MSG) continue;
        int sub = check_message(diag, f->a, sf->sub, f->loc, depth + 1, NULL);
        errors += sub;
        if (net_errors && sf->sub == SM_NET) *net_errors += sub;
    }
    errors += check_required(diag, node, id, where);
    return errors;
}

int sema_check_fields(diag_ctx *diag, const ast_node *root, int *net_errors) {
    int dummy = 0;
    if (!net_errors) net_errors = &dummy;
    *net_errors = 0;
    if (!root) return 1;
    return check_message(diag, root, SM_SPEC, root->loc, 0, net_errors);
}
