/* Canonical text form of a resolved spec: the basis of the spec hashes, --print-spec and diff. */
#include "resolve.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void print_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p < 32 || *p >= 127) fprintf(out, "\\x%02x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

/* Shortest decimal that reads back as the same double, always with a '.' or exponent so
 * it stays a float when parsed again. */
static void print_float(FILE *out, double v) {
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    fputs(buf, out);
}

static void print_value(FILE *out, const ast_node *v, int indent);

/* Top-level fields that describe a run without changing it: the training hash leaves them
 * out, so editing a name, a description or the published numbers keeps a run resumable. */
static bool is_descriptive(const char *field) {
    return !strcmp(field, "name") || !strcmp(field, "description") || !strcmp(field, "reference");
}

static void print_fields(FILE *out, const ast_node *msg, int indent, bool training_only) {
    for (int i = 0; i < msg->n_kids; i++) {
        const ast_node *f = msg->kids[i];
        if (f->kind != AST_FIELD) continue;
        if (training_only && is_descriptive(f->text)) continue;
        fprintf(out, "%*s%s", indent, "", f->text);
        if (f->a->kind == AST_MESSAGE) fputc(' ', out);
        else fputs(": ", out);
        print_value(out, f->a, indent);
        fputc('\n', out);
    }
}

static void print_value(FILE *out, const ast_node *v, int indent) {
    switch (v->kind) {
    case AST_INT: fprintf(out, "%lld", (long long)v->ival); break;
    case AST_FLOAT: print_float(out, v->fval); break;
    case AST_STRING: print_string(out, v->text); break;
    case AST_IDENT: fputs(v->text, out); break;
    case AST_LIST:
        fputc('[', out);
        for (int i = 0; i < v->n_kids; i++) {
            if (i) fputs(", ", out);
            print_value(out, v->kids[i], indent);
        }
        fputc(']', out);
        break;
    case AST_MESSAGE:
        fputs("{\n", out);
        print_fields(out, v, indent + 2, false);
        fprintf(out, "%*s}", indent, "");
        break;
    default: fputs("?", out);
    }
}

void spec_print(FILE *out, const ast_node *root) {
    print_fields(out, root, 0, false);
}

static char *print_to_string(const ast_node *root, bool training_only) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    print_fields(f, root, 0, training_only);
    fclose(f);
    return buf;
}

char *spec_print_to_string(const ast_node *root) { return print_to_string(root, false); }
char *spec_print_training_to_string(const ast_node *root) { return print_to_string(root, true); }
