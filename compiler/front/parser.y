/* Grammar of the spec language: protobuf text format (so Caffe prototxt parses) plus
 * include, block definitions, use, repeat, if/else, let and arithmetic. Actions only build
 * tree nodes; meaning is decided later by resolve and sema. */
%code requires {
#include "ast.h"
#include "parse.h"
}

%define api.pure full
%define api.prefix {spec_yy}
%define parse.error detailed
%locations
%lex-param   { void *scanner }
%parse-param { void *scanner } { parse_ctx *ctx }
%expect 0

%union { ast_node *node; }

%code {
#include <string.h>
#include "lexer.h"

#define LOC(l) parse_loc(ctx, (l).first_line, (l).first_column)
static void spec_yyerror(SPEC_YYLTYPE *loc, void *scanner, parse_ctx *ctx, const char *msg);
static ast_node *node(parse_ctx *ctx, ast_kind kind, SPEC_YYLTYPE loc) {
    return ast_new(ctx->arena, kind, LOC(loc));
}
static ast_node *binary(parse_ctx *ctx, int op, ast_node *a, ast_node *b, SPEC_YYLTYPE loc) {
    ast_node *n = node(ctx, AST_BINARY, loc);
    n->op = op; n->a = a; n->b = b;
    return n;
}
}

/* The aliases are how tokens read in syntax errors ("unexpected name, expecting ':'"). */
%token SPEC_YYEOF 0 "end of file"
%token <node> IDENT "name" INT_LIT "integer" FLOAT_LIT "number" STRING_LIT "string"
%token <node> KW_INCLUDE "'include'" KW_BLOCK "'block'" KW_USE "'use'" KW_REPEAT "'repeat'"
%token <node> KW_IN "'in'" KW_IF "'if'" KW_ELSE "'else'" KW_LET "'let'" KW_AS "'as'"
%token <node> KW_FROM "'from'"
%token OP_EQ_TOK "'=='" OP_NE_TOK "'!='" OP_LE_TOK "'<='" OP_GE_TOK "'>='"
%token OP_AND_TOK "'&&'" OP_OR_TOK "'||'"

%type <node> statements statement field_value body list items expr primary args arglist
%type <node> params paramlist if_statement name keyword use_as use_from

/* Keywords are also names, which leaves three real ambiguities, all settled here toward the
 * statement that is already open: `else` right after an if's body is its else branch, and
 * `as` and `from` right after `use b(...)` are its prefix and its input. A field named `else`,
 * `as` or `from` in that position is written after a separator (`if (c) { } ; else: 1`). */
%precedence NO_ELSE NO_AS NO_FROM
%precedence KW_ELSE KW_AS KW_FROM

%right '?' ':'
%left OP_OR_TOK
%left OP_AND_TOK
%left OP_EQ_TOK OP_NE_TOK
%left '<' '>' OP_LE_TOK OP_GE_TOK
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY
%precedence '['

%%

file
    : statements                { ctx->root = $1; }
    ;

statements
    : %empty                    { $$ = node(ctx, AST_MESSAGE, @$); }
    | statements statement      { $$ = $1; if ($2) ast_append(ctx->arena, $$, $2); }
    | statements separator      { $$ = $1; }
    | statements error          { $$ = $1; }
    ;

separator : ';' | ',' ;

statement
    : name ':' field_value      { $$ = node(ctx, AST_FIELD, @1); $$->text = $1->text; $$->a = $3; }
    | name body                 { $$ = node(ctx, AST_FIELD, @1); $$->text = $1->text; $$->a = $2; }
    | KW_INCLUDE STRING_LIT     { $$ = node(ctx, AST_INCLUDE, @1); $$->text = $2->text; }
    | KW_BLOCK IDENT '(' params ')' body
                                { $$ = $4; $$->kind = AST_BLOCK_DEF; $$->loc = LOC(@1);
                                  $$->text = $2->text; $$->a = $6; }
    | KW_USE IDENT '(' args ')' use_as use_from
                                { $$ = $4; $$->kind = AST_USE; $$->loc = LOC(@1);
                                  $$->text = $2->text; $$->a = $6; $$->b = $7; }
    | KW_REPEAT IDENT KW_IN expr body
                                { $$ = node(ctx, AST_REPEAT, @1); $$->text = $2->text;
                                  $$->a = $4; $$->b = $5; }
    | if_statement              { $$ = $1; }
    | KW_LET IDENT '=' expr     { $$ = node(ctx, AST_LET, @1); $$->text = $2->text; $$->a = $4; }
    ;

/* `use b(args) as "prefix" from "layer"`: both optional, in that order. */
use_as
    : %empty %prec NO_AS        { $$ = NULL; }
    | KW_AS expr                { $$ = $2; }
    ;
use_from
    : %empty %prec NO_FROM      { $$ = NULL; }
    | KW_FROM expr              { $$ = $2; }
    ;

if_statement
    : KW_IF '(' expr ')' body %prec NO_ELSE
                                { $$ = node(ctx, AST_IF, @1); $$->a = $3; $$->b = $5; }
    | KW_IF '(' expr ')' body KW_ELSE body
                                { $$ = node(ctx, AST_IF, @1); $$->a = $3; $$->b = $5; $$->c = $7; }
    | KW_IF '(' expr ')' body KW_ELSE if_statement
                                { $$ = node(ctx, AST_IF, @1); $$->a = $3; $$->b = $5; $$->c = $7; }
    ;

/* A field name or identifier value: protobuf text lets any word be one, keywords included. */
name
    : IDENT
    | keyword
    ;
keyword
    : KW_INCLUDE | KW_BLOCK | KW_USE | KW_REPEAT | KW_IN | KW_IF | KW_ELSE | KW_LET | KW_AS | KW_FROM
    ;

body
    : '{' statements '}'        { $$ = $2; $$->loc = LOC(@1); }
    ;

field_value
    : expr                      { $$ = $1; }
    | body                      { $$ = $1; }
    | list                      { $$ = $1; }
    ;

list
    : '[' ']'                   { $$ = node(ctx, AST_LIST, @1); }
    | '[' items ']'             { $$ = $2; $$->loc = LOC(@1); }
    | '[' items ',' ']'         { $$ = $2; $$->loc = LOC(@1); }
    ;

items
    : field_value               { $$ = node(ctx, AST_LIST, @1); ast_append(ctx->arena, $$, $1); }
    | items ',' field_value     { $$ = $1; ast_append(ctx->arena, $$, $3); }
    ;

params
    : %empty                    { $$ = node(ctx, AST_LIST, @$); }
    | paramlist                 { $$ = $1; }
    ;
paramlist
    : IDENT                     { $$ = node(ctx, AST_LIST, @1); ast_append(ctx->arena, $$, $1); }
    | paramlist ',' IDENT       { $$ = $1; ast_append(ctx->arena, $$, $3); }
    ;

args
    : %empty                    { $$ = node(ctx, AST_LIST, @$); }
    | arglist                   { $$ = $1; }
    ;
arglist
    : expr                      { $$ = node(ctx, AST_LIST, @1); ast_append(ctx->arena, $$, $1); }
    | list                      { $$ = node(ctx, AST_LIST, @1); ast_append(ctx->arena, $$, $1); }
    | arglist ',' expr          { $$ = $1; ast_append(ctx->arena, $$, $3); }
    | arglist ',' list          { $$ = $1; ast_append(ctx->arena, $$, $3); }
    ;

expr
    : primary                   { $$ = $1; }
    | '-' expr %prec UNARY      { $$ = node(ctx, AST_UNARY, @1); $$->op = '-'; $$->a = $2; }
    | '+' expr %prec UNARY      { $$ = $2; }
    | '!' expr %prec UNARY      { $$ = node(ctx, AST_UNARY, @1); $$->op = '!'; $$->a = $2; }
    | expr '+' expr             { $$ = binary(ctx, '+', $1, $3, @2); }
    | expr '-' expr             { $$ = binary(ctx, '-', $1, $3, @2); }
    | expr '*' expr             { $$ = binary(ctx, '*', $1, $3, @2); }
    | expr '/' expr             { $$ = binary(ctx, '/', $1, $3, @2); }
    | expr '%' expr             { $$ = binary(ctx, '%', $1, $3, @2); }
    | expr '<' expr             { $$ = binary(ctx, '<', $1, $3, @2); }
    | expr '>' expr             { $$ = binary(ctx, '>', $1, $3, @2); }
    | expr OP_LE_TOK expr       { $$ = binary(ctx, OP_LE, $1, $3, @2); }
    | expr OP_GE_TOK expr       { $$ = binary(ctx, OP_GE, $1, $3, @2); }
    | expr OP_EQ_TOK expr       { $$ = binary(ctx, OP_EQ, $1, $3, @2); }
    | expr OP_NE_TOK expr       { $$ = binary(ctx, OP_NE, $1, $3, @2); }
    | expr OP_AND_TOK expr      { $$ = binary(ctx, OP_AND, $1, $3, @2); }
    | expr OP_OR_TOK expr       { $$ = binary(ctx, OP_OR, $1, $3, @2); }
    | expr '?' expr ':' expr    { $$ = node(ctx, AST_TERNARY, @2); $$->a = $1; $$->b = $3; $$->c = $5; }
    | expr '[' expr ']'         { $$ = node(ctx, AST_INDEX, @2); $$->a = $1; $$->b = $3; }
    ;

primary
    : INT_LIT                   { $$ = $1; }
    | FLOAT_LIT                 { $$ = $1; }
    | STRING_LIT                { $$ = $1; }
    | name                      { $$ = $1; }
    | IDENT '(' args ')'        { $$ = $3; $$->kind = AST_CALL; $$->loc = $1->loc; $$->text = $1->text; }
    | '(' expr ')'              { $$ = $2; }
    ;

%%

src_loc parse_loc(const parse_ctx *ctx, int line, int col) {
    src_loc loc = { ctx->file, line, col, NULL, NULL };
    return loc;
}

/* The innermost '{' or '[' still open at the end of the text (strings and comments skipped),
 * so that "unexpected end of file" can point at the bracket that was never closed. Columns
 * count bytes from 1, as the lexer does. Returns 0 when every bracket is closed. */
static int find_unclosed_bracket(const src_file *f, int *line_out, int *col_out, char *which) {
    enum { MAX_OPEN = PARSE_MAX_DEPTH + 1 };
    int lines[MAX_OPEN], cols[MAX_OPEN];
    char kinds[MAX_OPEN];
    int n = 0, line = 1, col = 1;
    for (size_t i = 0; i < f->len; i++, col++) {
        char c = f->text[i];
        if (c == '\n') { line++; col = 0; continue; }
        if (c == '#') {
            while (i + 1 < f->len && f->text[i + 1] != '\n') i++;
            continue;
        }
        if (c == '"' || c == '\'') {
            while (i + 1 < f->len && f->text[i + 1] != c && f->text[i + 1] != '\n') {
                if (f->text[i + 1] == '\\' && i + 2 < f->len && f->text[i + 2] != '\n') { i++; col++; }
                i++; col++;
            }
            if (i + 1 < f->len && f->text[i + 1] == c) { i++; col++; }
            continue;
        }
        if ((c == '{' || c == '[') && n < MAX_OPEN) {
            lines[n] = line; cols[n] = col; kinds[n] = c; n++;
        } else if ((c == '}' || c == ']') && n > 0) {
            n--;
        }
    }
    if (n == 0) return 0;
    *line_out = lines[n - 1];
    *col_out = cols[n - 1];
    *which = kinds[n - 1];
    return 1;
}

/* Bison's message already names tokens as the user wrote them (the %token aliases); add
 * where an unclosed bracket opened, or a hint for the common slips. */
static void spec_yyerror(SPEC_YYLTYPE *loc, void *scanner, parse_ctx *ctx, const char *msg) {
    (void)scanner;
    /* The lexer already reported nesting beyond PARSE_MAX_DEPTH and ended the input there:
     * the "unexpected end of file" that follows is noise. */
    if (ctx->depth > PARSE_MAX_DEPTH) return;
    const char *hint = NULL;
    int open_line, open_col;
    char open_kind;
    if (strstr(msg, "unexpected end of file") && ctx->file &&
        find_unclosed_bracket(ctx->file, &open_line, &open_col, &open_kind)) {
        diag_error(ctx->diag, parse_loc(ctx, open_line, open_col),
                   open_kind == '{' ? "add the matching '}'" : "add the matching ']'",
                   "'%c' is never closed (the file ends first)", open_kind);
        return;
    }
    if (strstr(msg, "unexpected end of file")) hint = "possibly an unclosed '{' or '['";
    else if (strstr(msg, "unexpected '}'")) hint = "possibly an extra '}' or a field without a value";
    else if (strstr(msg, "expecting 'if' or '{'"))
        hint = "'else' right after an if's body is its else branch; a field named else goes after a ';'";
    else if (strstr(msg, "expecting ':'")) hint = "fields are written 'name: value' or 'name { ... }'";
    diag_error(ctx->diag, LOC(*loc), hint, "%s", msg);
}
