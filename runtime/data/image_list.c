/* Caffe's ImageData lists: a text file of "path label" lines (the path may hold spaces: the
 * label follows the last one), each path prefixed by root_folder as Caffe does (plain
 * concatenation: "images/" + "cat/1.jpg"). The images stay files on disk, decoded on demand
 * like an image folder's; labels are integers below the net's class count. A line without a
 * label, or with a label that is not such an integer, is named by file and line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image_set.h"

#define LIST_HINT "each line of an ImageData list is \"<image path> <label>\", labels 0..classes-1"

rt_status image_list_open(struct rt_image_set *s, int32_t **labels, const char *list, const char *root_folder,
                          int classes, rt_err *err) {
    memset(s, 0, sizeof *s);
    *labels = NULL;
    FILE *f = fopen(list, "r");
    if (!f)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, "point the spec's path (or --data) at Caffe's "
                       "ImageData source, a list of \"<image path> <label>\" lines", "cannot read the image list %s: %s",
                       list, strerror(errno));
    s->root = rt_xstrdup("");   /* the paths are whole: root_folder + the listed path */
    long cap = 0, lineno = 0;
    int32_t *lab = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    rt_status st = RT_OK;
    while (!st && (got = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r' || line[got - 1] == ' ' || line[got - 1] == '\t'))
            line[--got] = 0;
        if (got == 0) continue;   /* a blank line (a trailing newline, say) */
        char *sep = strrchr(line, ' ');
        if (!sep) sep = strrchr(line, '\t');
        char *end = NULL;
        long label = sep ? strtol(sep + 1, &end, 10) : -1;
        if (!sep || sep == line || !end || *end || end == sep + 1) {
            st = rt_fail(err, RT_E_FORMAT, LIST_HINT, "%s:%ld: \"%.200s\" is not \"<image path> <label>\"", list, lineno,
                         line);
            break;
        }
        if (label < 0 || (classes > 0 && label >= classes)) {
            st = rt_fail(err, RT_E_RANGE, "the labels must match the net's classes; check net.classes or the list",
                         "%s:%ld: label %ld is outside 0..%d", list, lineno, label, classes - 1);
            break;
        }
        *sep = 0;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 1024;
            s->paths = rt_xrealloc(s->paths, (size_t)cap * sizeof *s->paths);
            lab = rt_xrealloc(lab, (size_t)cap * sizeof *lab);
        }
        size_t n = strlen(root_folder) + strlen(line) + 1;
        s->paths[s->n] = rt_xmalloc(n);
        snprintf(s->paths[s->n], n, "%s%s", root_folder, line);
        lab[s->n++] = (int32_t)label;
    }
    free(line);
    if (!st && ferror(f)) st = rt_fail(err, RT_E_IO, NULL, "cannot read the image list %s", list);
    fclose(f);
    if (!st && s->n == 0) st = rt_fail(err, RT_E_FORMAT, LIST_HINT, "the image list %s names no images", list);
    if (!st) {   /* class names are the labels themselves */
        int n_classes = classes;   /* unknown (0): the largest label's */
        for (long i = 0; classes <= 0 && i < s->n; i++) n_classes = lab[i] + 1 > n_classes ? lab[i] + 1 : n_classes;
        s->n_classes = n_classes;
        s->classes = rt_xcalloc((size_t)n_classes, sizeof *s->classes);
        for (int k = 0; k < n_classes; k++) {
            char name[16];
            snprintf(name, sizeof name, "%d", k);
            s->classes[k] = rt_xstrdup(name);
        }
    }
    if (st) {
        free(lab);
        image_set_free(s);
        return st;
    }
    *labels = lab;
    return RT_OK;
}

rt_status rt_dataset_open_image_list(rt_dataset *ds, const char *list, const char *root_folder, int out_h, int out_w,
                                     int classes, rt_err *err) {
    memset(ds, 0, sizeof *ds);
    struct rt_image_set *s = rt_xcalloc(1, sizeof *s);
    rt_status st = image_list_open(s, &ds->labels, list, root_folder ? root_folder : "", classes, err);
    if (st) {
        free(s);
        return st;
    }
    ds->encoded = s;
    ds->n = s->n;
    ds->c = 3, ds->h = out_h, ds->w = out_w;
    ds->classes = s->n_classes;
    return RT_OK;
}
