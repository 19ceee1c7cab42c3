/* Diagnostics printer: location, message, source line with caret, hint, include chain. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void diag_init(diag_ctx *diag, FILE *out) {
    diag->out = out;
    diag->n_errors = 0;
    diag->stopped = 0;
}

int diag_should_stop(const diag_ctx *diag) {
    return diag->n_errors >= DIAG_MAX_ERRORS;
}

/* Prints the source line of loc and a caret under its column. Bytes that are not printable
 * ASCII are shown as '?' so a binary file cannot garble the terminal. */
static void print_source_line(FILE *out, src_loc loc) {
    const src_file *f = loc.file;
    if (!f || !f->text || loc.line < 1) return;
    const char *p = f->text, *end = f->text + f->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n') line++;
    if (p >= end && loc.line > 1) return;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    size_t n = (size_t)(eol - p);
    if (n > 200) n = 200;   /* keep one screen line even for minified input */
    fputs("    ", out);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        fputc(ch == '\t' ? ' ' : (ch >= 32 && ch < 127) ? ch : '?', out);
    }
    fputs("\n    ", out);
    for (int i = 1; i < loc.col && i <= (int)n; i++) fputc(' ', out);
    fputs("^\n", out);
}

static int same_use(const src_loc *a, const src_loc *b) {
    const char *na = a->via_block ? a->via_block : "?", *nb = b->via_block ? b->via_block : "?";
    return a->via->file == b->via->file && a->via->line == b->via->line &&
           a->via->col == b->via->col && strcmp(na, nb) == 0;
}

/* The block-instantiation chain, innermost first; a run of identical lines (a block that
 * uses itself) is printed once with its count. */
static void print_chain(FILE *out, src_loc loc) {
    for (src_loc cur = loc; cur.via;) {
        if (!cur.via->file) { cur = *cur.via; continue; }
        int repeats = 0;
        src_loc next = *cur.via;
        while (next.via && next.via->file && same_use(&cur, &next)) {
            repeats++;
            next = *next.via;
        }
        fprintf(out, "  in block '%s' used at %s:%d:%d", cur.via_block ? cur.via_block : "?",
                cur.via->file->path, cur.via->line, cur.via->col);
        if (repeats) fprintf(out, " (%d times in a row)", repeats + 1);
        fputc('\n', out);
        cur = next;
    }
    for (const src_file *f = loc.file; f && f->from.file; f = f->from.file)
        fprintf(out, "  in file %s from %s:%d:%d\n", f->how, f->from.file->path, f->from.line,
                f->from.col);
}

static void vreport(diag_ctx *diag, const char *kind, src_loc loc, const char *fmt, va_list ap) {
    FILE *out = diag->out;
    if (loc.file) fprintf(out, "%s:%d:%d: ", loc.file->path, loc.line, loc.col);
    else fputs("trainc: ", out);
    fprintf(out, "%s: ", kind);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    print_source_line(out, loc);
    print_chain(out, loc);
}

int diag_error(diag_ctx *diag, src_loc loc, const char *hint, const char *fmt, ...) {
    if (diag->n_errors >= DIAG_MAX_ERRORS) {
        if (!diag->stopped) {
            fprintf(diag->out, "trainc: too many errors (%d); stopping\n", DIAG_MAX_ERRORS);
            diag->stopped = 1;
        }
        diag->n_errors++;
        return 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vreport(diag, "error", loc, fmt, ap);
    va_end(ap);
    if (hint) fprintf(diag->out, "  hint: %s\n", hint);
    diag->n_errors++;
    return 0;
}

void diag_note(diag_ctx *diag, src_loc loc, const char *fmt, ...) {
    if (diag->n_errors > DIAG_MAX_ERRORS) return;
    va_list ap;
    va_start(ap, fmt);
    vreport(diag, "note", loc, fmt, ap);
    va_end(ap);
}

static int edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag_prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = diag_prev + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag_prev = up;
        }
    }
    return row[lb];
}

const char *diag_suggest(const char *word, const char *const *candidates) {
    const char *best = NULL;
    int best_d = 99;
    for (int i = 0; candidates && candidates[i]; i++) {
        int d = edit_distance(word, candidates[i]);
        if (d < best_d) best_d = d, best = candidates[i];
    }
    size_t len = strlen(word);
    int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}
