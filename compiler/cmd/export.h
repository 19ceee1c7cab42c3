/* trainc export: a checkpoint's weights in a format other tools read (export.c), written
 * from the formats' specifications (export_safetensors.c). */
#ifndef TRAINC_EXPORT_H
#define TRAINC_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "ir.h"

typedef enum { EXPORT_F32 = 0, EXPORT_I64 } export_dtype;

typedef struct {
    char name[256];           /* the state_dict key: "layer1.0.conv1.weight" */
    export_dtype dtype;
    int ndim;                 /* 0: a scalar */
    long shape[4];
    const void *data;         /* row-major, little-endian */
} export_tensor;

size_t export_tensor_bytes(const export_tensor *t);
/* meta: n_meta key/value pairs for "__metadata__". 0, or 1 with the reason in err (an
 * existing file at path is then left as it was: output_file.h). */
int export_write_safetensors(const char *path, const export_tensor *ts, int n, const char *const *meta, int n_meta,
                             char *err, size_t cap);
/* The same tensors as torch.save writes a state_dict (export_torch_pt.c): 0, or 1. */
int export_write_torch_pt(const char *path, const export_tensor *ts, int n, char *err, size_t cap);
/* The inference graph as ONNX (opset 13; export_onnx.c): the ops the main head's logits
 * depend on (auxiliary loss heads' branches are training-only and left out; *n_written
 * counts the ops written). 0, or 1 with the reason in err. */
int export_write_onnx(const char *path, const ir_net *net, const float *params, const float *buffers,
                      const char *model_name, const char *doc, int *n_written, char *err, size_t cap);
/* The net's weights as a Caffe .caffemodel (export_caffemodel.c): 0, or 1 with the reason in
 * err; *n_layers: the Caffe layers written. */
int export_write_caffemodel(const char *path, const char *net_name, const ir_net *net, const ast_node *root,
                            const float *params, const float *buffers, int *n_layers, char *err, size_t cap);
/* `trainc export CKPT --spec SPEC [--format torch|safetensors|onnx|caffemodel] -o FILE [--backend B] [--ema]` */
int export_main(int argc, char **argv);

#endif
