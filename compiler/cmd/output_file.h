/* A file the CLI writes (an export, a chart, a generated source) goes first to a temporary
 * beside it and replaces FILE only once complete, so a failed or interrupted write leaves an
 * existing FILE as it was and no partial file under its name. */
#ifndef TRAINC_OUTPUT_FILE_H
#define TRAINC_OUTPUT_FILE_H
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;
    int durable;
    char path[4096];
    char tmp[4200];
} output_file;

enum { OUTPUT_BINARY = 1, OUTPUT_DURABLE = 2 };   /* output_open's flags */
/* Opens FILE's temporary (FILE.tmp.<pid>). flags: OUTPUT_BINARY, and OUTPUT_DURABLE for a
 * file worth an fsync before the rename (exported weights; not regenerable sources).
 * 0, or 1 with err set. */
int output_open(output_file *o, const char *path, int flags, char *err, size_t cap);
/* Flushes, syncs if durable, and closes the temporary, then renames it to FILE. On any failure the
 * temporary is removed and FILE is untouched. 0, or 1 with err set. */
int output_commit(output_file *o, char *err, size_t cap);
/* Closes and removes the temporary (a write that failed before it was complete). */
void output_abandon(output_file *o);
/* output_open (binary, durable), one fwrite of len bytes, output_commit. */
int output_write_all(const char *path, const void *buf, size_t len, char *err, size_t cap);

#endif
