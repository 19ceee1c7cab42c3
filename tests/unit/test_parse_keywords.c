/* Parser tests: every keyword of the spec language also works as a field name and as an
 * identifier value wherever protobuf text allows a word, and the keyword statements still
 * parse as before (including the two positions where a keyword continues a statement). */
#include "testlib.h"
#include "parse.h"

#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = { "include", "block", "use", "repeat", "in",
                                        "if", "else", "let", "as", "from" };
enum { N_KEYWORDS = sizeof keywords / sizeof keywords[0] };

typedef struct {
    ast_arena *arena;
    ast_node *root;     /* NULL on a syntax error */
    char *errors;       /* everything diag printed */
} parsed;

static parsed parse_text(const char *text) {
    parsed p = { ast_arena_new(), NULL, NULL };
    size_t len = 0;
    FILE *mem = open_memstream(&p.errors, &len);
    diag_ctx diag;
    diag_init(&diag, mem);
    src_file file = { "t.spec", (char *)text, strlen(text), NULL, { 0 }, NULL };
    p.root = parse_source(p.arena, &diag, &file);
    fclose(mem);
    return p;
}

static void release(parsed *p) {
    ast_arena_free(p->arena);
    free(p->errors);
}

/* Parses text that must be free of syntax errors; prints the diagnostics when it is not. */
static parsed parse_ok(const char *text) {
    parsed p = parse_text(text);
    if (!p.root || p.errors[0]) {
        fprintf(stderr, "unexpected syntax error in:\n%s\n%s\n", text, p.errors);
        test_failures++;
    }
    return p;
}

static const ast_node *kid(const ast_node *n, int i) {
    return n && i < n->n_kids ? n->kids[i] : NULL;
}

static int is_field(const ast_node *n, const char *name) {
    return n && n->kind == AST_FIELD && strcmp(n->text, name) == 0;
}

/* `KW: 1`, `KW { KW: KW }`, `x: [KW, KW]` and `x: KW` for every keyword, each with the
 * spacing variants the old lookahead lexer got wrong (`in : 1`, `in {`). */
static void test_keywords_as_names(void) {
    for (int k = 0; k < N_KEYWORDS; k++) {
        const char *kw = keywords[k];
        char text[512];
        snprintf(text, sizeof text,
                 "%s: 1\n%s : 2\n%s { %s: %s }\nx: [%s, %s]\ny: %s\n%s:\"s\"\n",
                 kw, kw, kw, kw, kw, kw, kw, kw, kw);
        parsed p = parse_ok(text);
        const ast_node *r = p.root;
        CHECK(r && r->n_kids == 6);
        if (!r || r->n_kids != 6) { fprintf(stderr, "  keyword '%s'\n", kw); release(&p); continue; }
        CHECK(is_field(kid(r, 0), kw) && kid(r, 0)->a->kind == AST_INT && kid(r, 0)->a->ival == 1);
        CHECK(is_field(kid(r, 1), kw) && kid(r, 1)->a->ival == 2);
        const ast_node *body = kid(r, 2)->a;
        CHECK(is_field(kid(r, 2), kw) && body->kind == AST_MESSAGE && body->n_kids == 1);
        CHECK(is_field(kid(body, 0), kw) && kid(body, 0)->a->kind == AST_IDENT &&
              strcmp(kid(body, 0)->a->text, kw) == 0);
        const ast_node *list = kid(r, 3)->a;
        CHECK(list->kind == AST_LIST && list->n_kids == 2 && kid(list, 1)->kind == AST_IDENT &&
              strcmp(kid(list, 1)->text, kw) == 0);
        CHECK(kid(r, 4)->a->kind == AST_IDENT && strcmp(kid(r, 4)->a->text, kw) == 0);
        CHECK(is_field(kid(r, 5), kw) && kid(r, 5)->a->kind == AST_STRING);
        CHECK(kid(r, 0)->loc.line == 1 && kid(r, 0)->loc.col == 1);
        release(&p);
    }
}

/* The keyword statements keep their meaning next to keyword-named fields. */
static void test_statements_still_parse(void) {
    parsed p = parse_ok(
        "let n = 2\n"
        "block b(x, k) { in: x out: k }\n"
        "use b(1, 2) as \"p_\"\n"
        "use b(3, 4)\n"
        "use: 5\n");
    const ast_node *r = p.root;
    if (!r) { release(&p); return; }
    CHECK(r->n_kids == 5);
    CHECK(is_field(kid(r, 4), "use"));
    CHECK(kid(r, 0)->kind == AST_LET && strcmp(kid(r, 0)->text, "n") == 0);
    CHECK(kid(r, 1)->kind == AST_BLOCK_DEF && kid(r, 1)->n_kids == 2);
    CHECK(is_field(kid(kid(r, 1)->a, 0), "in") && kid(kid(r, 1)->a, 0)->a->kind == AST_IDENT);
    CHECK(kid(r, 2)->kind == AST_USE && kid(r, 2)->a && kid(r, 2)->a->kind == AST_STRING);
    /* `as` right after a use is its prefix, by the grammar's documented precedence. */
    CHECK(kid(r, 3)->kind == AST_USE && kid(r, 3)->a == NULL);
    release(&p);

    p = parse_text("use b(3, 4)\nas: 5\n");
    CHECK(p.root == NULL && strstr(p.errors, "unexpected ':'"));
    release(&p);

    /* `from` after a use (and after its `as`) is its input layer; a field named from follows
     * a separator. */
    p = parse_ok("use b(1, 2) as \"p\" from \"x\"\nuse b(1, 2) from \"y\"\nuse b(1, 2); from: 3\n");
    r = p.root;
    if (r) {
        CHECK(r->n_kids == 4);
        CHECK(kid(r, 0)->kind == AST_USE && kid(r, 0)->a && kid(r, 0)->b &&
              strcmp(kid(r, 0)->b->text, "x") == 0);
        CHECK(kid(r, 1)->kind == AST_USE && !kid(r, 1)->a && kid(r, 1)->b &&
              strcmp(kid(r, 1)->b->text, "y") == 0);
        CHECK(kid(r, 2)->kind == AST_USE && !kid(r, 2)->b && is_field(kid(r, 3), "from"));
    }
    release(&p);

    p = parse_ok("repeat i in n { if: i }\n"
                 "if (n == 2) { a: 1 } else if (n > 2) { a: 2 } else { a: 3 }\n"
                 "if (n) { a: 4 } ; else: 6\n"
                 "include: \"not an include\"\n"
                 "include \"x.inc\"\n");
    r = p.root;
    if (!r) { release(&p); return; }
    CHECK(r->n_kids == 6);
    CHECK(kid(r, 0)->kind == AST_REPEAT && is_field(kid(kid(r, 0)->b, 0), "if"));
    const ast_node *chain = kid(r, 1);
    CHECK(chain->kind == AST_IF && chain->c && chain->c->kind == AST_IF && chain->c->c &&
          chain->c->c->kind == AST_MESSAGE);
    CHECK(kid(r, 2)->kind == AST_IF && kid(r, 2)->c == NULL);
    CHECK(is_field(kid(r, 3), "else") && kid(r, 3)->a->ival == 6);
    CHECK(is_field(kid(r, 4), "include") && kid(r, 4)->a->kind == AST_STRING);
    CHECK(kid(r, 5)->kind == AST_INCLUDE && strcmp(kid(r, 5)->text, "x.inc") == 0);
    release(&p);
}

/* Syntax errors name keywords the way they are written. */
static void test_messages(void) {
    parsed p = parse_text("repeat i 3 { }\n");
    CHECK(p.root == NULL && strstr(p.errors, "unexpected integer, expecting 'in'"));
    if (!strstr(p.errors, "expecting 'in'")) fprintf(stderr, "got: %s\n", p.errors);
    release(&p);
    p = parse_text("x: 1 in: 2 let: in let 3\n");
    CHECK(p.root == NULL && strstr(p.errors, "1:24: error: syntax error, unexpected integer, expecting ':' or '{'"));
    if (!strstr(p.errors, "1:24: error")) fprintf(stderr, "got: %s\n", p.errors);
    release(&p);
    p = parse_text("a: (1\n");
    CHECK(p.root == NULL && strstr(p.errors, "unexpected end of file"));
    release(&p);
}

int main(void) {
    test_keywords_as_names();
    test_statements_still_parse();
    test_messages();
    return test_finish("test_parse_keywords");
}
