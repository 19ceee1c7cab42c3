/* Image folders: PATH/<class>/ (any depth) .(jpg|jpeg|png|...) with the class index from the sorted
 * folder names (torchvision's ImageFolder), or a flat folder of images with a label file
 * (PATH/labels.txt: "<file> <class name or index>" per line, comma or blank separated, as
 * ImageNet's LOC_val_solution.csv is). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "image_set.h"

typedef struct {
    char **v;
    long n, cap;
} strvec;

static void strvec_push(strvec *s, char *str) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = rt_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = str;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int is_image_name(const char *name) {
    static const char *const ext[] = { ".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff", NULL };
    const char *dot = strrchr(name, '.');
    if (!dot) return 0;
    for (int i = 0; ext[i]; i++)
        if (!strcasecmp(dot, ext[i])) return 1;
    return 0;
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = rt_xmalloc(n);
    snprintf(s, n, "%s%s%s", a, *a ? "/" : "", b);
    return s;
}

/* Entries of dir (not "." or hidden), sorted; dirs_only picks directories or the rest. */
static rt_status list_dir(const char *dir, int dirs_only, strvec *out, rt_err *err) {
    DIR *d = opendir(dir);
    if (!d) return rt_fail(err, RT_E_IO, NULL, "cannot read directory %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *full = join(dir, e->d_name);
        int sub = is_dir(full);
        free(full);
        if (sub == dirs_only) strvec_push(out, rt_xstrdup(e->d_name));
    }
    closedir(d);
    if (out->n) qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
    return RT_OK;
}

/* Image files under root/rel, any depth, sorted path by path; names relative to root. */
static rt_status walk(const char *root, const char *rel, strvec *files, rt_err *err) {
    char *dir = join(root, rel);
    strvec subdirs = { 0 }, names = { 0 };
    rt_status st = list_dir(dir, 1, &subdirs, err);
    if (!st) st = list_dir(dir, 0, &names, err);
    for (long i = 0; i < names.n; i++) {
        if (!st && is_image_name(names.v[i])) strvec_push(files, join(rel, names.v[i]));
        free(names.v[i]);
    }
    for (long i = 0; i < subdirs.n; i++) {
        char *r = join(rel, subdirs.v[i]);
        if (!st) st = walk(root, r, files, err);
        free(r);
        free(subdirs.v[i]);
    }
    free(names.v);
    free(subdirs.v);
    free(dir);
    return st;
}

int image_set_class(const struct rt_image_set *c, const char *name) {
    for (int k = 0; k < c->n_classes; k++)
        if (!strcmp(c->classes[k], name)) return k;
    return -1;
}

static char *file_stem(const char *path) {
    const char *base = strrchr(path, '/');
    char *s = rt_xstrdup(base ? base + 1 : path);
    char *dot = strrchr(s, '.');
    if (dot) *dot = 0;
    return s;
}

/* A flat folder: labels from PATH/labels.txt, matched to the files by name or stem. */
static rt_status read_label_file(struct rt_image_set *s, int32_t *labels, const char *path,
                                 const struct rt_image_set *known, rt_err *err) {
    char *lpath = join(path, "labels.txt");
    FILE *f = fopen(lpath, "r");
    if (!f) {
        rt_status st = rt_fail(err, RT_E_NOT_FOUND,
                               "a validation folder is either PATH/<class>/*.JPEG or a flat folder with "
                               "PATH/labels.txt (\"<file> <class>\" per line)",
                               "%s has images but no class folders and no labels.txt", path);
        free(lpath);
        return st;
    }
    for (long i = 0; i < s->n; i++) labels[i] = -1;
    char line[4096];
    long lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *save = NULL, *name = strtok_r(line, " ,\t\r\n", &save), *cls = strtok_r(NULL, " ,\t\r\n", &save);
        if (!name || name[0] == '#') continue;
        int k = cls ? image_set_class(known, cls) : -1;
        if (k < 0 && cls && cls[strspn(cls, "0123456789")] == 0 && atol(cls) < known->n_classes) k = atoi(cls);
        if (k < 0) {
            if (lineno == 1) continue;   /* a CSV header line */
            fclose(f);
            rt_status st = rt_fail(err, RT_E_FORMAT, "each line is \"<file> <class name or index>\"",
                                   "%s:%ld: unknown class '%s'", lpath, lineno, cls ? cls : "(missing)");
            free(lpath);
            return st;
        }
        for (long i = 0; i < s->n; i++) {   /* linear: a label file is read once */
            char *stem = file_stem(s->paths[i]);
            const char *base = strrchr(s->paths[i], '/') ? strrchr(s->paths[i], '/') + 1 : s->paths[i];
            if (!strcmp(base, name) || !strcmp(stem, name)) labels[i] = k;
            free(stem);
        }
    }
    fclose(f);
    for (long i = 0; i < s->n; i++)
        if (labels[i] < 0) {
            rt_status st = rt_fail(err, RT_E_MISMATCH, "give every image a line in labels.txt",
                                   "%s/%s has no label in %s", path, s->paths[i], lpath);
            free(lpath);
            return st;
        }
    free(lpath);
    return RT_OK;
}

rt_status image_folder_open(struct rt_image_set *s, int32_t **labels, const char *path,
                            const struct rt_image_set *known, rt_err *err) {
    memset(s, 0, sizeof *s);
    s->root = rt_xstrdup(path);
    strvec classes = { 0 }, files = { 0 };
    rt_status st = list_dir(path, 1, &classes, err);
    if (st) return st;
    int32_t *lab = NULL;
    long lab_cap = 0;
    if (classes.n == 0) {   /* flat: one folder of images and a label file */
        st = walk(path, "", &files, err);
        s->paths = files.v, s->n = files.n;
        lab = rt_xmalloc((size_t)(files.n ? files.n : 1) * sizeof *lab);
        if (!st && !known)
            st = rt_fail(err, RT_E_FORMAT, "a training folder holds one sub-folder per class",
                         "%s has no class folders", path);
        if (!st) st = read_label_file(s, lab, path, known, err);
    } else {
        for (long c = 0; c < classes.n && !st; c++) {
            int k = known ? image_set_class(known, classes.v[c]) : (int)c;
            if (k < 0)
                st = rt_fail(err, RT_E_MISMATCH, "the validation folders must be training class names",
                             "%s/%s: no training class of that name", path, classes.v[c]);
            long before = files.n;
            if (!st) st = walk(path, classes.v[c], &files, err);
            if (files.n > lab_cap) {
                lab_cap = files.cap;
                lab = rt_xrealloc(lab, (size_t)lab_cap * sizeof *lab);
            }
            for (long i = before; i < files.n; i++) lab[i] = k;
        }
        s->paths = files.v, s->n = files.n;
    }
    if (!known) {
        s->classes = classes.v, s->n_classes = (int)classes.n;
    } else {
        for (long c = 0; c < classes.n; c++) free(classes.v[c]);
        free(classes.v);
        s->classes = NULL, s->n_classes = 0;
    }
    if (!st && s->n == 0)
        st = rt_fail(err, RT_E_NOT_FOUND, "put .JPEG files in class folders: PATH/<class>/*.JPEG",
                     "%s holds no image files", path);
    if (st) {
        free(lab);
        image_set_free(s);
        return st;
    }
    *labels = lab;
    return RT_OK;
}
