/* One Datum record of a Caffe database into a dataset (rt_datum_take, rt_data.h), shared by
 * the LMDB reader (lmdb_datum.c) and the LevelDB one (leveldb_datum.c), with the Datum message
 * of Caffe's caffe.proto (runtime/data/caffe_datum.proto, compiled by protoc-c): raw
 * [channels][height][width] byte images of one shape and integer labels; anything else is
 * named by the record's position and key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_data.h"

#ifndef RT_WITH_LMDB   /* built with WITH_LMDB=0 (mk/lmdb.mk): no protobuf-c */
rt_status rt_datum_take(rt_dataset *ds, const char *path, long i, const rt_datum_bytes *key, const rt_datum_bytes *val,
                        int classes, rt_err *err) {
    (void)ds, (void)i, (void)key, (void)val, (void)classes;
    return rt_fail(err, RT_E_ARG, "rebuild with libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)",
                   "cannot decode the records of %s: built without protobuf-c (WITH_LMDB=0)", path);
}
#else
#include "caffe_datum.pb-c.h"

/* The key as text for messages: printable bytes kept, others as \xNN, cut at 40. */
static const char *key_text(const rt_datum_bytes *k, char *buf, size_t cap) {
    size_t o = 0;
    const unsigned char *p = k->data;
    for (size_t i = 0; i < k->size && o + 5 < cap && i < 40; i++)
        o += (size_t)snprintf(buf + o, cap - o, p[i] >= 32 && p[i] < 127 ? "%c" : "\\x%02x", p[i]);
    buf[o] = 0;
    return buf;
}

rt_status rt_datum_take(rt_dataset *ds, const char *path, long i, const rt_datum_bytes *key, const rt_datum_bytes *val,
                        int classes, rt_err *err) {
    char kb[200];
    Caffe__Datum *d = caffe__datum__unpack(NULL, val->size, val->data);
    if (!d)
        return rt_fail(err, RT_E_FORMAT, "the database holds something else than Caffe Datum records; rewrite it with "
                       "Caffe's convert_imageset", "%s: record %ld (key \"%s\", %zu bytes) is not a Caffe Datum", path,
                       i, key_text(key, kb, sizeof kb), val->size);
    rt_status st = RT_OK;
    long c = d->channels, h = d->height, w = d->width;
    if (d->encoded)
        st = rt_fail(err, RT_E_FORMAT, "write the database with raw pixels (convert_imageset without --encoded)",
                     "%s: record %ld (key \"%s\") holds an encoded image; this trainer reads raw Datum pixels", path, i,
                     key_text(key, kb, sizeof kb));
    else if (d->n_float_data > 0)
        st = rt_fail(err, RT_E_FORMAT, "write the images as bytes (Datum.data), as convert_imageset does",
                     "%s: record %ld (key \"%s\") holds float_data; this trainer reads byte images", path, i,
                     key_text(key, kb, sizeof kb));
    else if (c < 1 || h < 1 || w < 1 || c > RT_MAX_CHANNELS || (size_t)d->data.len != (size_t)(c * h * w))
        st = rt_fail(err, RT_E_FORMAT, "the record is damaged; rewrite the database",
                     "%s: record %ld (key \"%s\") has %zu data bytes for channels %ld, height %ld, width %ld "
                     "(1 to %d channels, channels x height x width bytes)", path, i, key_text(key, kb, sizeof kb),
                     (size_t)d->data.len, c, h, w, RT_MAX_CHANNELS);
    else if (i > 0 && (c != ds->c || h != ds->h || w != ds->w))
        st = rt_fail(err, RT_E_MISMATCH, "give every image the same size (convert_imageset --resize_height/--resize_width)",
                     "%s: record %ld (key \"%s\") is %ldx%ldx%ld, record 0 was %dx%dx%d", path, i,
                     key_text(key, kb, sizeof kb), c, h, w, ds->c, ds->h, ds->w);
    else if (d->label < 0 || (classes > 0 && d->label >= classes))
        st = rt_fail(err, RT_E_RANGE, "the labels do not match the model's number of classes; check the spec's class "
                     "count or the database", "%s: record %ld (key \"%s\") has label %d, outside 0..%d", path, i,
                     key_text(key, kb, sizeof kb), d->label, classes - 1);
    if (!st) {
        if (i == 0) {
            ds->c = (int)c, ds->h = (int)h, ds->w = (int)w;
            ds->images = malloc((size_t)ds->n * (size_t)(c * h * w));
            if (!ds->images) st = rt_fail(err, RT_E_IO, "use a machine with more memory, or a smaller database",
                                          "%s: %ld images of %ldx%ldx%ld do not fit in memory", path, ds->n, c, h, w);
        }
        if (!st) {
            memcpy(ds->images + (size_t)i * (size_t)(c * h * w), d->data.data, d->data.len);
            ds->labels[i] = d->label;
        }
    }
    caffe__datum__free_unpacked(d, NULL);
    return st;
}
#endif
