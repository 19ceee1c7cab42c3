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

typedef enum { PACK_KEPT = 0, PACK_CONVERTED, PACK_RESIZED, PACK_SKIPPED, PACK_OUTCOMES } pack_outcome;

/* The bytes to store for one file (*out points into buf or the worker), and a note saying
 * what was converted or why the file is skipped. */
pack_outcome pack_convert(pack_worker *pw, const pack_options *o, const uint8_t *buf, size_t len,
                          const uint8_t **out, size_t *out_len, char *note, size_t cap);

#endif
