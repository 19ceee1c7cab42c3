/* `trainc diff`: a semantic diff of two analysed specs. Each spec is flattened into
 * `path = value` entries walking the schema (so absent fields take their defaults and
 * `kernel: 3` equals `kernel: [3, 3]`), layers are keyed by name with their inputs resolved;
 * entries with the same path are compared. The report (diff_explain.c) puts training fields
 * first, then layers by stage, derived values with their formulas, the LR at landmarks, and
 * last the descriptive fields that the training hash leaves out. */
#include "diff_explain.h"
#include "show.h"
#include "sema_value.h"

#include <stdlib.h>
#include <string.h>

/* head: the one-line entry of a message switched on by presence (SF_PRESENCE); it stands
 * for the message's fields when the other spec lacks the message. */
typedef struct { char *path, *value; int matched, head; } diff_entry;
typedef struct { diff_entry *items; int n, cap; } diff_list;

static void list_add_entry(diff_list *l, const char *path, const char *value, int head) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->items = realloc(l->items, (size_t)l->cap * sizeof *l->items);
        if (!l->items) { fputs("trainc: out of memory\n", stderr); exit(2); }
    }
    l->items[l->n++] = (diff_entry){strdup(path), strdup(value), 0, head};
}

static void list_add(diff_list *l, const char *path, const char *value) { list_add_entry(l, path, value, 0); }

static void list_free(diff_list *l) {
    for (int i = 0; i < l->n; i++) free(l->items[i].path), free(l->items[i].value);
    free(l->items);
}

/* Appends the text of one value, typed by the schema, to a memory stream. */
static void format_value(FILE *s, const ast_node *v, schema_type t) {
    char buf[40];
    switch (v->kind) {
    case AST_INT:
        if (t == SF_FLOAT || t == SF_FLOAT_LIST) {
            diff_format_number(buf, sizeof buf, (double)v->ival);
            fputs(buf, s);
        } else {
            fprintf(s, "%lld", (long long)v->ival);
        }
        break;
    case AST_FLOAT: diff_format_number(buf, sizeof buf, v->fval); fputs(buf, s); break;
    case AST_STRING: fprintf(s, "\"%s\"", v->text); break;
    case AST_IDENT: fputs(v->text, s); break;
    case AST_LIST:
        if (t == SF_INT_PAIR && v->n_kids == 2 && v->kids[0]->ival == v->kids[1]->ival) {
            format_value(s, v->kids[0], t);
            break;
        }
        fputc('[', s);
        for (int i = 0; i < v->n_kids; i++) {
            if (i) fputs(", ", s);
            format_value(s, v->kids[i], t);
        }
        fputc(']', s);
        break;
    default: fputs("?", s);
    }
}

static void add_value(diff_list *l, const char *path, const schema_field *f, const ast_node *v) {
    char *text = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&text, &len);
    if (!s) return;
    if (v) {
        format_value(s, v, f->type);
    } else {
        double d;
        if (!schema_default_number(f, &d)) {
            /* Strings and enums default to their text; descriptive defaults ("global batch")
             * are compared through the derived quantities instead. */
            if (f->type == SF_STRING && f->def[0]) fprintf(s, "\"%s\"", f->def);
            else if (f->type == SF_ENUM) fputs(f->def, s);
            else { fclose(s); free(text); return; }
        } else if (f->type == SF_BOOL) {
            fputs(d ? "true" : "false", s);
        } else if (f->type == SF_FLOAT) {
            char buf[40];
            diff_format_number(buf, sizeof buf, d);
            fputs(buf, s);
        } else {
            fputs(f->def, s);
        }
    }
    fclose(s);
    list_add(l, path, text);
    free(text);
}

/* The fields a spec wrote in a message, in spec syntax: {type: GAUSSIAN, std: 0.01}. */
static void format_written(FILE *s, const ast_node *msg, schema_msg_id id) {
    const char *sep = "";
    fputc('{', s);
    for (int k = 0; k < schema_field_count; k++) {
        const schema_field *f = &schema_fields[k];
        if (f->msg != id || (f->flags & SF_REPEATED)) continue;
        if (f->type == SF_MSG) {
            const ast_node *sub = sv_msg(msg, id, f->name);
            if (!sub) continue;
            fprintf(s, "%s%s ", sep, f->name);
            format_written(s, sub, f->sub);
        } else {
            const ast_node *v = sv_get(msg, id, f->name);
            if (!v) continue;
            fprintf(s, "%s%s: ", sep, f->name);
            format_value(s, v, f->type);
        }
        sep = ", ";
    }
    fputc('}', s);
}

static void add_presence_head(diff_list *l, const char *path, const ast_node *msg, schema_msg_id id) {
    char *text = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&text, &len);
    if (!s) return;
    format_written(s, msg, id);
    fclose(s);
    list_add_entry(l, path, text, 1);
    free(text);
}

static void flatten_msg(diff_list *l, const ast_node *msg, schema_msg_id id, const char *prefix,
                        int skip_layer_common) {
    for (int k = 0; k < schema_field_count; k++) {
        const schema_field *f = &schema_fields[k];
        if (f->msg != id || (f->flags & SF_REPEATED)) continue;
        if (skip_layer_common && (!strcmp(f->name, "name") || !strcmp(f->name, "input") ||
                                  !strcmp(f->name, "inputs")))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", f->name);
        if (f->type == SF_MSG) {
            const ast_node *sub = sv_msg(msg, id, f->name);
            /* Absent messages expand to their defaults, except alternatives (optimizers,
             * schedule kinds) and features switched on by presence (SF_PRESENCE), whose
             * absence is the information. */
            if (sub && (f->flags & SF_PRESENCE)) add_presence_head(l, path, sub, f->sub);
            if (sub || (!f->group[0] && !(f->flags & SF_PRESENCE))) flatten_msg(l, sub, f->sub, path, 0);
            continue;
        }
        add_value(l, path, f, sv_get(msg, id, f->name));
    }
}

static void flatten_layers(diff_list *l, const sema_result *res) {
    const net_desc *net = &res->net;
    const ast_node *net_msg = sv_msg(res->root, SM_SPEC, "net");
    int i = 0;
    for (int k = 0; k < net_msg->n_kids && i < net->n_layers; k++) {
        const ast_node *f = net_msg->kids[k];
        const schema_field *sf = f->kind == AST_FIELD ? schema_find(SM_NET, f->text) : NULL;
        if (!sf || !(sf->flags & SF_REPEATED)) continue;
        const net_layer *L = &net->layers[i++];
        char prefix[512], path[560];
        snprintf(prefix, sizeof prefix, "net[\"%s\"]", L->name);
        list_add(l, prefix, net_kind_name(L->kind));
        flatten_msg(l, f->a, sf->sub, prefix, 1);
        char *text = NULL;
        size_t len = 0;
        FILE *s = open_memstream(&text, &len);
        if (!s) continue;
        fputc('[', s);
        for (int j = 0; j < L->n_inputs; j++)
            fprintf(s, "%s\"%s\"", j ? ", " : "", L->inputs[j] < 0 ? "data" : net->layers[L->inputs[j]].name);
        fputc(']', s);
        fclose(s);
        snprintf(path, sizeof path, "%s.inputs", prefix);
        list_add(l, path, text);
        free(text);
    }
}

typedef struct { diff_change *items; int n, cap; } change_list;

static void change_add(change_list *c, const char *path, const char *a, const char *b) {
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->items = realloc(c->items, (size_t)c->cap * sizeof *c->items);
        if (!c->items) { fputs("trainc: out of memory\n", stderr); exit(2); }
    }
    c->items[c->n++] = (diff_change){ path, a, b };
}

static int entry_cmp(const void *a, const void *b) {
    return strcmp((*(diff_entry *const *)a)->path, (*(diff_entry *const *)b)->path);
}

/* A layer present on one side only is one change, not one per field. */
static int layer_prefix_len(const char *path) {
    if (strncmp(path, "net[\"", 5)) return 0;
    const char *end = strstr(path + 5, "\"]");
    return end ? (int)(end - path) + 2 : 0;
}

/* Is path a field (at any depth) of the message at prefix? */
static bool is_field_of(const char *path, const char *prefix) {
    size_t n = strlen(prefix);
    return prefix[0] && !strncmp(path, prefix, n) && path[n] == '.';
}

/* A one-sided layer is one change, and so is a one-sided presence message: its head line,
 * {the fields written}, stands for its fields. Layer and head entries precede their fields. */
static void add_one_sided(change_list *c, diff_list *l, int a_side) {
    bool layer_one_sided = false;
    const char *one_sided_head = "";
    for (int i = 0; i < l->n; i++) {
        diff_entry *e = &l->items[i];
        int plen = layer_prefix_len(e->path);
        bool layer_entry = plen && (int)strlen(e->path) == plen;
        if (layer_entry) layer_one_sided = !e->matched;
        if (e->matched) continue;
        if (plen && !layer_entry && layer_one_sided) continue;   /* a field of a one-sided layer */
        if (is_field_of(e->path, one_sided_head)) continue;
        if (e->head) one_sided_head = e->path;
        change_add(c, e->path, a_side ? e->value : NULL, a_side ? NULL : e->value);
    }
}

/* The entries of la and lb that differ: in la's order, then those only in la, then only in lb. */
static void collect_changes(change_list *c, diff_list *la, diff_list *lb) {
    diff_entry **index = malloc(((size_t)lb->n + 1) * sizeof *index);
    if (!index) { fputs("trainc: out of memory\n", stderr); exit(2); }
    for (int i = 0; i < lb->n; i++) index[i] = &lb->items[i];
    qsort(index, (size_t)lb->n, sizeof *index, entry_cmp);
    for (int i = 0; i < la->n; i++) {
        diff_entry key = {la->items[i].path, NULL, 0, 0}, *kp = &key;
        diff_entry **hit = bsearch(&kp, index, (size_t)lb->n, sizeof *index, entry_cmp);
        if (!hit) continue;
        la->items[i].matched = (*hit)->matched = 1;
        if (la->items[i].head) continue;   /* both have the message: its fields compare */
        if (strcmp(la->items[i].value, (*hit)->value)) change_add(c, la->items[i].path, la->items[i].value, (*hit)->value);
    }
    add_one_sided(c, la, 1);
    add_one_sided(c, lb, 0);
    free(index);
}

/* Fields the training hash leaves out (spec_print.c): name, description, reference. */
static bool is_descriptive(const char *path) {
    return !strcmp(path, "name") || !strcmp(path, "description") || !strncmp(path, "reference", 9);
}

static void print_change(FILE *out, const diff_change *c) {
    fprintf(out, "%s: %s -> %s\n", c->path, c->a ? c->a : "(absent)", c->b ? c->b : "(absent)");
}

/* Training fields, one line each; returns how many. LR fields set *lr_changed. */
static int report_fields(FILE *out, const change_list *c, bool *lr_changed) {
    int count = 0;
    for (int i = 0; i < c->n; i++) {
        if (is_descriptive(c->items[i].path)) continue;
        if (!strncmp(c->items[i].path, "solver.lr", 9) || !strncmp(c->items[i].path, "solver.epochs", 13) ||
            !strncmp(c->items[i].path, "solver.iterations", 17))
            *lr_changed = true;
        print_change(out, &c->items[i]);
        count++;
    }
    return count;
}

int diff_results(FILE *out, const sema_result *a, const sema_result *b, int full_layers) {
    diff_list la = {0}, lb = {0}, na = {0}, nb = {0};
    change_list fields = {0}, layers = {0};
    flatten_msg(&la, a->root, SM_SPEC, "", 0);
    flatten_msg(&lb, b->root, SM_SPEC, "", 0);
    flatten_layers(&na, a);
    flatten_layers(&nb, b);
    collect_changes(&fields, &la, &lb);
    collect_changes(&layers, &na, &nb);

    bool lr_changed = false;
    int count = report_fields(out, &fields, &lr_changed);
    if (full_layers) for (int i = 0; i < layers.n; i++) print_change(out, &layers.items[i]);
    else diff_explain_layers(out, a, b, layers.items, layers.n);
    count += layers.n;
    int derived = diff_explain_derived(out, a, b);
    if (lr_changed || a->run.peak_lr != b->run.peak_lr || a->run.total_steps != b->run.total_steps)
        diff_explain_lr(out, &a->run, &b->run);
    count += derived;

    int descriptive = 0;
    for (int i = 0; i < fields.n; i++) descriptive += is_descriptive(fields.items[i].path);
    if (descriptive) {
        fprintf(out, "%sdescriptive fields (outside the training hash):\n", count ? "\n" : "");
        for (int i = 0; i < fields.n; i++)
            if (is_descriptive(fields.items[i].path)) fputs("  ", out), print_change(out, &fields.items[i]);
    }
    if (count == 0)
        fprintf(out, "%sthe same run: identical training%s (spec hash sha256:%s)\n", descriptive ? "\n" : "",
                strcmp(a->hash, b->hash) ? ", written differently" : "", a->hash);
    list_free(&la);
    list_free(&lb);
    list_free(&na);
    list_free(&nb);
    free(fields.items);
    free(layers.items);
    return count;
}
