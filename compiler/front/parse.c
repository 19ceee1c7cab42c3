/* Loads spec files from disk and runs the Flex scanner + Bison parser over them. */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parser.h"
#include "lexer.h"

/* Opens path for reading without blocking (a FIFO would otherwise wait for a writer) and
 * accepts only a regular file: a FIFO, a device or a socket has no size to trust (/dev/zero
 * reads forever, st_size 0 reads as an empty spec). Returns the descriptor, or -1 after
 * reporting. */
static int open_regular(diag_ctx *diag, const char *path, src_loc from, struct stat *st) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        diag_error(diag, from, "check the path (relative paths in a spec are relative to that spec's directory)",
                   "cannot open spec '%s': %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (S_ISREG(st->st_mode)) return fd;
    close(fd);
    if (S_ISDIR(st->st_mode))
        diag_error(diag, from, "give the path of a .spec file", "'%s' is a directory, not a spec", path);
    else
        diag_error(diag, from, "a spec must be a regular file; copy the text into one and give its path",
                   "'%s' is a %s, not a regular file", path,
                   S_ISFIFO(st->st_mode) ? "FIFO" : S_ISCHR(st->st_mode) ? "character device"
                   : S_ISBLK(st->st_mode) ? "block device" : S_ISSOCK(st->st_mode) ? "socket" : "special file");
    return -1;
}

src_file *source_load(ast_arena *arena, diag_ctx *diag, const char *path, const char *how,
                      src_loc from) {
    struct stat st;
    int fd = open_regular(diag, path, from, &st);
    if (fd < 0) return NULL;
    if ((unsigned long long)st.st_size > PARSE_MAX_FILE_BYTES) {
        close(fd);
        diag_error(diag, from, "is this really a spec file?", "spec '%s' is %lld bytes; the limit is %u",
                   path, (long long)st.st_size, PARSE_MAX_FILE_BYTES);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        diag_error(diag, from, NULL, "cannot open spec '%s': %s", path, strerror(errno));
        return NULL;
    }
    src_file *file = ast_arena_alloc(arena, sizeof *file);
    file->path = ast_arena_strdup(arena, path);
    file->text = ast_arena_alloc(arena, (size_t)st.st_size + 1);
    file->len = fread(file->text, 1, (size_t)st.st_size, f);
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        diag_error(diag, from, NULL, "cannot read spec '%s'", path);
        return NULL;
    }
    file->text[file->len] = '\0';
    file->how = how;
    file->from = from;
    return file;
}

/* A binary file would give one "control byte" error per byte (up to the error limit), which
 * hides the real mistake: a NUL byte, or more than a few control bytes, means not a text
 * file. Sets *at to the offset of the first control byte. */
#define PARSE_BINARY_CONTROL_BYTES 4
static int looks_binary(const src_file *file, size_t *at) {
    size_t controls = 0;
    int nul = 0;
    for (size_t i = 0; i < file->len; i++) {
        unsigned char ch = (unsigned char)file->text[i];
        if ((ch >= 32 && ch != 127) || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
            ch == '\v')
            continue;
        if (controls++ == 0) *at = i;
        nul |= ch == 0;
    }
    return nul || controls >= PARSE_BINARY_CONTROL_BYTES;
}

ast_node *parse_source(ast_arena *arena, diag_ctx *diag, src_file *file) {
    parse_ctx ctx = { .diag = diag, .arena = arena, .file = file };
    int errors_before = diag->n_errors;
    size_t at = 0;
    if (looks_binary(file, &at)) {
        int line = 1, col = 1;
        for (size_t i = 0; i < at; i++, col++)
            if (file->text[i] == '\n') line++, col = 0;
        diag_error(diag, parse_loc(&ctx, line, col), "a spec is a text file; check the path",
                   "'%s' is not a text file (control byte 0x%02x at offset %zu)", file->path,
                   (unsigned char)file->text[at], at);
        return NULL;
    }
    yyscan_t scanner;
    if (spec_yylex_init_extra(&ctx, &scanner) != 0) {
        diag_error(diag, parse_loc(&ctx, 0, 0), NULL, "cannot initialise the scanner");
        return NULL;
    }
    YY_BUFFER_STATE buf = spec_yy_scan_bytes(file->text, (int)file->len, scanner);
    spec_yyset_lineno(1, scanner);
    spec_yyset_column(1, scanner);
    int rc = spec_yyparse(scanner, &ctx);
    spec_yy_delete_buffer(buf, scanner);
    spec_yylex_destroy(scanner);
    if (rc != 0 || diag->n_errors > errors_before) return NULL;
    return ctx.root;
}
