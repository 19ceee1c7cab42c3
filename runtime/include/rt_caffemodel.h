/* Caffe's weight files (.caffemodel: a NetParameter whose layers hold their blobs), read and
 * written with the messages of Caffe's caffe.proto compiled by protobuf-c
 * (runtime/data/caffe_datum.proto, runtime/data/caffemodel.c). Reading takes the three layer
 * versions Caffe upgrades from (`layer`, the BVLC models' V1 `layers`, V0) and both blob
 * shapes (BlobShape, the older num/channels/height/width); writing writes today's form, which
 * Caffe's Net::CopyTrainedLayersFrom reads by layer name.
 *
 *   rt_init_apply_caffemodel(cfg, "bvlc_alexnet.caffemodel", params, n, buffers, m);   // the init block
 *   rt_caffemodel_write("x.caffemodel", "LeNet", layers, n_layers, &err);             // trainc export
 *
 * Built without protobuf-c (WITH_LMDB=0, mk/lmdb.mk) both fail saying so. */
#ifndef RT_CAFFEMODEL_H
#define RT_CAFFEMODEL_H

#include "rt_core.h"
#include "rt_init.h"

#define RT_CAFFE_MAX_BLOBS 5

/* One blob to write: its shape (Caffe's axes, [out, in, kh, kw] for a convolution) and
 * values, or with `fill` set, n copies of fill_value (BatchNorm's scale factor, 1). */
typedef struct {
    int ndim;
    long shape[4];
    const float *data;
    int fill;
    float fill_value;
} rt_caffe_blob;

/* One layer to write: its Caffe name and type ("Convolution", "InnerProduct", "BatchNorm",
 * "Scale") and its blobs in Caffe's order. */
typedef struct {
    const char *name, *type;
    int n_blobs;
    rt_caffe_blob blobs[RT_CAFFE_MAX_BLOBS];
} rt_caffe_layer;

/* Writes a NetParameter named net_name holding these layers to path (replaced atomically:
 * written beside it, then renamed). */
rt_status rt_caffemodel_write(const char *path, const char *net_name, const rt_caffe_layer *layers, int n,
                              rt_err *err);

/* The init block's reader, rt_init_apply_caffemodel, is declared in rt_init.h. */

#endif
