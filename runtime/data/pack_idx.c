/* trainc pack of IDX files (MNIST, Fashion-MNIST): SRC/train-* becomes the train split and
 * SRC/t10k-* the val split; each image is stored as an RGB JPEG (its grey value in all three
 * channels, at --quality), as the packer stores a grayscale JPEG it converts, so the loader
 * reads an IDX pack as it reads any other. Classes are named by label, zero-padded so that
 * their sorted names keep the label order. */
#include <stdio.h>
#include <unistd.h>
#include "pack_internal.h"

int pack_idx_source(const char *src) {
    char p[4096];
    for (int gz = 0; gz < 2; gz++) {
        snprintf(p, sizeof p, "%s/train-images-idx3-ubyte%s", src, gz ? ".gz" : "");
        if (access(p, F_OK) == 0) return 1;
    }
    return 0;
}

int pack_idx_open(pack_split *sp, const char *src, const char *idx_split) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte", src, idx_split);
    if (access(p, F_OK) != 0 && (strcat(p, ".gz"), access(p, F_OK) != 0)) return 0;
    rt_dataset_load_idx(&sp->idx, src, idx_split, 0, NULL);   /* dies with its message */
    const char *file = strrchr(p, '/') + 1;
    struct rt_image_set *s = &sp->set;
    s->root = rt_xstrdup(src);
    s->n = sp->idx.n;
    s->paths = rt_xmalloc((size_t)s->n * sizeof *s->paths);
    for (long i = 0; i < s->n; i++) {
        char name[4200];
        snprintf(name, sizeof name, "%s[%ld]", file, i);   /* the image's place, for messages */
        s->paths[i] = rt_xstrdup(name);
    }
    s->n_classes = sp->idx.classes;
    s->classes = rt_xmalloc((size_t)s->n_classes * sizeof *s->classes);
    int digits = snprintf(NULL, 0, "%d", s->n_classes - 1);
    for (int k = 0; k < s->n_classes; k++) {
        char name[32];
        snprintf(name, sizeof name, "%0*d", digits, k);
        s->classes[k] = rt_xstrdup(name);
    }
    sp->labels = rt_xmalloc((size_t)s->n * sizeof *sp->labels);
    memcpy(sp->labels, sp->idx.labels, (size_t)s->n * sizeof *sp->labels);
    return 1;
}
