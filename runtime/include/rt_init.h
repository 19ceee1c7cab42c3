/* Initialization from another spec's weights (the spec's `init` block): the compiler
 * matches this trainer's layers to the other spec's by name with shape checks and emits a
 * copy table; the trainer applies it to a checkpoint of that spec before training starts.
 * A checkpoint's params/buffers layout differs between the CPU and CUDA backends (CUDA
 * aligns each tensor), so the table carries the source offsets of both and the section sizes
 * tell which one wrote the file. Resume (--resume) never uses it: it restores a run exactly.
 *
 *   const rt_init_config *init = run->init;   // NULL: no init block
 *   rt_init_apply(init, args.init_from, params, n_params, buffers, n_buffers);
 */
#ifndef RT_INIT_H
#define RT_INIT_H

/* One tensor to copy: src[0] in a CPU-written checkpoint, src[1] in a CUDA-written one. */
typedef struct {
    long src[2], dst, count;
    int buffer;               /* 0: params, 1: BN running statistics (buffers) */
    const char *name;         /* "conv1.weight", for messages */
} rt_init_copy;

typedef struct { long offset, count; } rt_init_range;   /* in floats of params */

/* One tensor of this net under its PyTorch state_dict key, for a .safetensors source: key is
 * torchvision's, alt trainc's layer name where they differ ("" otherwise). */
typedef struct {
    const char *key, *alt;
    long dst, count;
    int buffer;               /* 0: params, 1: BN running statistics */
    int ndim;
    long shape[4];
    /* in a .caffemodel (rt_caffemodel.h): the Caffe layer and which of its blobs */
    const char *caffe_layer;
    int caffe_blob;
    int caffe_kind;           /* rt_caffe_kind */
} rt_init_named;

typedef enum {
    RT_CAFFE_PLAIN = 0,       /* the blob as it is */
    RT_CAFFE_BN_STAT,         /* BatchNorm's mean or variance: divided by its third blob */
    RT_CAFFE_BN_AFFINE,       /* a bn's gamma (blob 0) or beta (1): the Scale layer that reads the
                               * BatchNorm's top, or NVCaffe's BatchNorm's blobs 3 and 4 */
} rt_caffe_kind;

typedef struct rt_init_config {
    const char *checkpoint;   /* init.checkpoint, "" if not given (then --init-from is needed) */
    const char *source_spec, *source_hash;   /* init.spec and its training hash */
    long src_params[2], src_buffers[2];      /* section sizes in floats: CPU, CUDA layout */
    int n_copies;
    const rt_init_copy *copies;
    int n_frozen;
    const rt_init_range *frozen;             /* init.freeze: never updated */
    int n_fresh;                              /* layers left as initialized, for the log */
    /* Every tensor to load from a state_dict (.safetensors: torchvision's, or `trainc
     * export`'s), by key, with shape checks; source_hash "" (no init.spec): only that. */
    int n_named;
    const rt_init_named *named;
    /* rt_init_apply_caffemodel where the trainer links protobuf-c (an init block without
     * init.spec, in a build WITH_LMDB=1), so that only those trainers link it; NULL: a
     * .caffemodel is refused with a message */
    long (*apply_caffemodel)(const struct rt_init_config *cfg, const char *path, float *params, long n_params,
                             float *buffers, long n_buffers);
} rt_init_config;

/* Loads the checkpoint (path, or cfg->checkpoint when path is NULL), checks that the source
 * spec wrote it, and copies every matched tensor into params/buffers; a .safetensors file is
 * read as a state_dict through cfg->named (init_state_dict.c). Dies with one message
 * on any mismatch. Returns the number of values copied. */
long rt_init_apply(const rt_init_config *cfg, const char *path, float *params, long n_params,
                   float *buffers, long n_buffers);
/* The state_dict path of rt_init_apply. */
long rt_init_apply_state_dict(const rt_init_config *cfg, const char *path, float *params, long n_params,
                              float *buffers, long n_buffers);
/* The init block from a .caffemodel (runtime/data/caffemodel.c): every tensor of cfg->named from the Caffe
 * layer and blob it names, shapes checked (leading and trailing 1s aside: V1's
 * [1, 1, out, in] inner product is [out, in]); BatchNorm's mean and variance divided by its
 * third blob (Caffe's moving-average scale factor), a bn's gamma and beta from the Scale layer
 * after it (or NVCaffe's BatchNorm's fourth and fifth blobs). Dies with one message naming
 * the file, the layer and the blob on a mismatch. Returns the number of values copied. */
long rt_init_apply_caffemodel(const rt_init_config *cfg, const char *path, float *params, long n_params,
                              float *buffers, long n_buffers);

/* Whether the parameter tensor at this offset is frozen. */
int rt_init_is_frozen(const rt_init_config *cfg, long offset);
/* Zeroes the frozen tensors' gradients, so clipping and norms ignore them as torch does for
 * parameters without requires_grad. */
void rt_init_zero_frozen(const rt_init_config *cfg, float *grads);

#endif
