/* Writes the CLI's output files through a temporary and a rename (output_file.h). */
#include "output_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int output_open(output_file *o, const char *path, int flags, char *err, size_t cap) {
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path) {
        snprintf(err, cap, "output path '%.64s...' is longer than %zu bytes", path, sizeof o->path - 1);
        return 1;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%d", path, (int)getpid());
    o->durable = (flags & OUTPUT_DURABLE) != 0;
    o->f = fopen(o->tmp, (flags & OUTPUT_BINARY) ? "wb" : "w");
    if (!o->f) {
        snprintf(err, cap, "cannot write '%s': %s", o->tmp, strerror(errno));
        return 1;
    }
    return 0;
}

int output_commit(output_file *o, char *err, size_t cap) {
    int bad = ferror(o->f) || fflush(o->f) != 0 || (o->durable && fsync(fileno(o->f)) != 0);
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, saved = errno;
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) bad = 1, saved = errno;
    if (bad) {
        snprintf(err, cap, "writing '%s' failed: %s (any existing '%s' is unchanged)", o->tmp,
                 saved ? strerror(saved) : "write error", o->path);
        unlink(o->tmp);
        return 1;
    }
    return 0;
}

void output_abandon(output_file *o) {
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
}

int output_write_all(const char *path, const void *buf, size_t len, char *err, size_t cap) {
    output_file o;
    if (output_open(&o, path, OUTPUT_BINARY | OUTPUT_DURABLE, err, cap)) return 1;
    if (len && fwrite(buf, 1, len, o.f) != len) {
        snprintf(err, cap, "writing '%s' failed: %s (any existing '%s' is unchanged)", o.tmp, strerror(errno), path);
        output_abandon(&o);
        return 1;
    }
    return output_commit(&o, err, cap);
}
