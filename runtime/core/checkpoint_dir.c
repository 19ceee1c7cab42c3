/* Checkpoint directory handling: create it, name files by step, find the newest, prune. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "checkpoint_format.h"

void rt_ckpt_path(const char *dir, int64_t step, char *buf, size_t cap) {
    snprintf(buf, cap, "%s/ckpt-%012" PRId64 ".bin", dir, step);
}

int ckpt_mkdir_p(const char *dir) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int ckpt_parse_name(const char *name, int64_t *step) {
    if (strncmp(name, "ckpt-", 5) != 0) return 0;
    const char *p = name + 5, *digits = p;
    while (*p >= '0' && *p <= '9') p++;
    if (p == digits || strcmp(p, ".bin") != 0) return 0;
    *step = strtoll(digits, NULL, 10);
    return 1;
}

typedef struct {
    int64_t step;
    char name[256];
} ckpt_entry;

static int cmp_newest_first(const void *a, const void *b) {
    int64_t x = ((const ckpt_entry *)a)->step, y = ((const ckpt_entry *)b)->step;
    return (x < y) - (x > y);
}

/* Lists final checkpoint names in dir, newest first; returns count, *out malloc'd. */
static int list_checkpoints(const char *dir, ckpt_entry **out) {
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0, cap = 0;
    ckpt_entry *v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        int64_t step;
        if (!ckpt_parse_name(e->d_name, &step) || strlen(e->d_name) >= 256) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            v = realloc(v, (size_t)cap * sizeof *v);
            if (!v) rt_die("listing checkpoints in %s: out of memory", dir);
        }
        v[n].step = step;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_newest_first);
    *out = v;
    return n;
}

int rt_ckpt_find_latest(const char *dir, char *buf, size_t cap) {
    ckpt_entry *v;
    int n = list_checkpoints(dir, &v);
    if (n > 0) snprintf(buf, cap, "%s/%s", dir, v[0].name);
    free(v);
    return n > 0;
}

void ckpt_prune(const char *dir, int keep_last, const char *keep_path) {
    if (keep_last <= 0) return;
    ckpt_entry *v;
    int n = list_checkpoints(dir, &v);
    const char *keep_base = strrchr(keep_path, '/');
    keep_base = keep_base ? keep_base + 1 : keep_path;
    /* The file just written counts as one of the kept ones even if an older run left
     * higher-numbered files behind: deleting what we just saved would lose the run. */
    int kept = 1;
    for (int i = 0; i < n; i++) {
        if (strcmp(v[i].name, keep_base) == 0) continue;
        if (kept < keep_last) {
            kept++;
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        if (unlink(path) != 0 && errno != ENOENT)
            rt_warn("could not delete old checkpoint %s: %s", path, strerror(errno));
    }
    free(v);
}

/* A temp file of this directory's checkpoint writes: ".ckpt-<digits>.tmp.<anything>". */
static int is_temp_name(const char *name) {
    if (strncmp(name, ".ckpt-", 6) != 0) return 0;
    const char *p = name + 6, *digits = p;
    while (*p >= '0' && *p <= '9') p++;
    return p > digits && strncmp(p, ".tmp.", 5) == 0;
}

int rt_ckpt_remove_temps(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_temp_name(e->d_name)) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0) removed++;
        else if (errno != ENOENT) rt_warn("could not delete %s (left by an interrupted checkpoint write): %s",
                                          path, strerror(errno));
    }
    closedir(d);
    return removed;
}
