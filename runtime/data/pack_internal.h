/* Private to runtime/data/pack*.c: the packer's options, per-thread state and file verdicts. */
#ifndef PACK_INTERNAL_H
#define PACK_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "image_set.h"
#include "rt_image.h"

typedef struct {
    const char *src, *dst;
    int max_side;        /* 0: keep sizes */
    int quality;         /* of re-encoded images */
    int shard_records;   /* records per shard */
    int threads;
} pack_options;

typedef struct {
    rt_jpeg *jpeg;
    void *enc;           /* tjhandle of the encoder */
    uint8_t *in;         /* the file's bytes */
    size_t in_cap;
    unsigned char *out;  /* re-encoded bytes (tjAlloc'd) */
    unsigned long out_cap, out_len;
} pack_worker;

/* One split being packed: an image folder, or IDX files (idx.images set). */
typedef struct {
    const char *name;              /* "train", "val" */
    struct rt_image_set set;       /* IDX: paths name FILE[i], classes the labels */
    int32_t *labels;
    int n_shards;
    rt_dataset idx;                /* IDX: the images in memory (1 x h x w bytes each) */
} pack_split;

/* 1 when SRC holds IDX files (train-images-idx3-ubyte[.gz]) rather than an image folder. */
int pack_idx_source(const char *src);
/* Fills sp from SRC/<idx_split>-{images,labels}-*; 0 when there is no such split. Dies with
 * the IDX reader's message on a bad file. */
int pack_idx_open(pack_split *sp, const char *src, const char *idx_split);

typedef enum { PACK_KEPT = 0, PACK_CONVERTED, PACK_RESIZED, PACK_SKIPPED, PACK_OUTCOMES } pack_outcome;

/* The bytes to store for one file (*out points into buf or the worker), and a note saying
 * what was converted or why the file is skipped. */
pack_outcome pack_convert(pack_worker *pw, const pack_options *o, const uint8_t *buf, size_t len,
                          const uint8_t **out, size_t *out_len, char *note, size_t cap);

/* One IDX image (grey bytes, w x h) as an RGB JPEG at --quality (shrunk to --max-side). */
pack_outcome pack_convert_gray(pack_worker *pw, const pack_options *o, const uint8_t *gray, int w, int h,
                               const uint8_t **out, size_t *out_len, char *note, size_t cap);

#endif
