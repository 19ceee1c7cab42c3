/* Private to runtime/data/: an image dataset whose samples stay encoded until the loader
 * decodes them: files in a folder tree, or records in packed shards (trainc pack). The
 * shard record format is shared with the packer (runtime/data/pack*.c). */
#ifndef IMAGE_SET_H
#define IMAGE_SET_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rt_data.h"

static inline void *rt_xrealloc(void *p, size_t bytes) {
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) rt_die("out of memory: cannot grow a buffer to %zu bytes", bytes);
    return q;
}
static inline char *rt_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(rt_xmalloc(n), s, n);
}

/* A record in a shard: this header (little-endian), then `length` bytes of encoded image. */
#define RT_REC_MAGIC 0x31524354u   /* "TCR1" */
typedef struct {
    uint32_t magic;
    int32_t label;
    uint32_t length;
    uint32_t crc32;                /* zlib crc32 of the image bytes */
} rt_rec_header;
#define RT_PACK_INDEX_MAGIC "trainc-pack-index"

struct rt_image_set {
    char *root;          /* the folder, or the directory holding the shards ("": paths are whole) */
    int packed;
    long n;
    char **paths;        /* folder: [n] paths relative to root */
    int n_shards;        /* packed: shard files, their descriptors, and each record's place */
    char **shard_names;
    int *fds;
    uint32_t *shard;
    uint64_t *offset;    /* of the record header */
    uint32_t *length;    /* of the image bytes */
    char **classes;      /* [n_classes] names, in label order */
    int n_classes;
};

/* Sample i's encoded bytes into *buf (grown as needed): 0, or -1 with the reason in why
 * (unreadable, or for a record a bad header or checksum). */
int image_set_read(const struct rt_image_set *s, long i, uint8_t **buf, size_t *cap, size_t *len,
                   char *why, size_t why_cap);
/* Where sample i lives, for messages: its path, or "SHARD at offset N". */
void image_set_where(const struct rt_image_set *s, long i, char *out, size_t cap);
void image_set_free(struct rt_image_set *s);

/* The two kinds; each fills s (labels into *labels, malloc'd) or fails with one message.
 * known_classes: NULL to take the classes from the data (sorted folder names, or the
 * pack's classes.txt), else the training set's, which a validation set must use. */
rt_status image_folder_open(struct rt_image_set *s, int32_t **labels, const char *path,
                            const struct rt_image_set *known_classes, rt_err *err);
rt_status image_shards_open(struct rt_image_set *s, int32_t **labels, const char *index_path,
                            const struct rt_image_set *known_classes, rt_err *err);
/* Caffe's ImageData list (image_list.c): "path label" lines, paths prefixed by root_folder;
 * labels below classes (> 0), whose names are "0".."classes-1". */
rt_status image_list_open(struct rt_image_set *s, int32_t **labels, const char *list, const char *root_folder,
                          int classes, rt_err *err);
/* The label of class `name` in set c, or -1. */
int image_set_class(const struct rt_image_set *c, const char *name);

#endif
