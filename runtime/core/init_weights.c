/* Initialization from a checkpoint of another spec (rt_init.h): check who wrote it, pick
 * the layout it was written in, copy the matched tensors. */
#include "rt_init.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_checkpoint.h"
#include "rt_core.h"
#include "rt_safetensors.h"
#include "rt_torch_pt.h"

/* Loads params (and buffers) of the layout with this index; RT_E_MISMATCH if the sizes
 * are another layout's. */
static rt_status load_layout(const rt_init_config *cfg, const char *path, int layout, float *src_p,
                             float *src_b, rt_err *err) {
    rt_ckpt_section secs[2] = {
        { "params", src_p, (size_t)cfg->src_params[layout] * sizeof(float) },
        { "buffers", src_b, (size_t)cfg->src_buffers[layout] * sizeof(float) },
    };
    return rt_ckpt_load(path, cfg->source_hash, NULL, NULL, secs, cfg->src_buffers[layout] > 0 ? 2 : 1, err);
}

/* A .caffemodel: by its name, or by its first bytes, a NetParameter's name (field 1), V1 layers
 * (field 2) or layers (field 100), in a file that is neither a checkpoint nor safetensors. */
static int caffemodel_sniff(const char *path) {
    size_t n = strlen(path);
    if (n > 11 && !strcmp(path + n - 11, ".caffemodel")) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char b[8] = { 0 };
    size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got < 2 || !memcmp(b, "TRAINCKP", 8) || rt_safetensors_sniff(path)) return 0;
    return b[0] == 0x0a || b[0] == 0x12 || (b[0] == 0xa2 && b[1] == 0x06);
}

long rt_init_apply(const rt_init_config *cfg, const char *path, float *params, long n_params,
                   float *buffers, long n_buffers) {
    if (!path || !*path) path = cfg->checkpoint;
    if (!path || !*path)
        rt_die_hint("set init.checkpoint in the spec, or pass --init-from FILE",
                    "init: no checkpoint %s%s%s to start from", *cfg->source_spec ? "of '" : "(a .safetensors state_dict)",
                    cfg->source_spec, *cfg->source_spec ? "'" : "");
    if (caffemodel_sniff(path)) {
        if (!cfg->apply_caffemodel)
            rt_die_hint(*cfg->source_spec ? "drop init.spec: a caffemodel's layers are matched by this net's names"
                                          : "rebuild trainc and the runtime with protobuf-c (WITH_LMDB=1), then the trainer",
                        "init: %s is a Caffe caffemodel, which this trainer cannot read%s", path,
                        *cfg->source_spec ? " (its init block names init.spec, whose checkpoints it reads)" : "");
        return cfg->apply_caffemodel(cfg, path, params, n_params, buffers, n_buffers);
    }
    /* a state_dict; without init.spec nothing else (rt_safetensors_open says what the file is not) */
    if (rt_safetensors_sniff(path) || rt_torch_pt_sniff(path) || !*cfg->source_hash)
        return rt_init_apply_state_dict(cfg, path, params, n_params, buffers, n_buffers);
    rt_ckpt_header h;
    rt_err err;
    if (rt_ckpt_read_header(path, &h, &err) != RT_OK)
        rt_die_hint(err.hint[0] ? err.hint : "check init.checkpoint or --init-from", "init: %s", err.msg);
    if (strcmp(h.spec_hash, cfg->source_hash) != 0)
        rt_die_hint("pass a checkpoint written by the trainer of init.spec, or point init.spec at the spec "
                    "that wrote it (`trainc show` prints a spec's hash)",
                    "init: checkpoint %s was written by spec hash %.16s..., but init.spec '%s' has hash %.16s...",
                    path, h.spec_hash[0] ? h.spec_hash : "(none)", cfg->source_spec, cfg->source_hash);
    long most_p = cfg->src_params[0] > cfg->src_params[1] ? cfg->src_params[0] : cfg->src_params[1];
    long most_b = cfg->src_buffers[0] > cfg->src_buffers[1] ? cfg->src_buffers[0] : cfg->src_buffers[1];
    float *src_p = rt_xcalloc((size_t)(most_p ? most_p : 1), sizeof(float));
    float *src_b = rt_xcalloc((size_t)(most_b ? most_b : 1), sizeof(float));
    int layout = 0;
    rt_status st = load_layout(cfg, path, 0, src_p, src_b, &err);
    if (st == RT_E_MISMATCH && (cfg->src_params[1] != cfg->src_params[0] || cfg->src_buffers[1] != cfg->src_buffers[0]))
        layout = 1, st = load_layout(cfg, path, 1, src_p, src_b, &err);
    if (st != RT_OK)
        rt_die_hint("pass a checkpoint written by the trainer of init.spec, CPU or CUDA backend",
                    "init: cannot read the weights of '%s' from %s: %s", cfg->source_spec, path, err.msg);
    long copied = 0;
    for (int i = 0; i < cfg->n_copies; i++) {
        const rt_init_copy *c = &cfg->copies[i];
        float *dst = c->buffer ? buffers : params;
        const float *src = c->buffer ? src_b : src_p;
        long dst_n = c->buffer ? n_buffers : n_params;
        long src_n = c->buffer ? cfg->src_buffers[layout] : cfg->src_params[layout];
        if (c->dst < 0 || c->dst + c->count > dst_n || c->src[layout] < 0 || c->src[layout] + c->count > src_n)
            rt_die("init: tensor %s lies outside its buffer (a compiler bug)", c->name);
        memcpy(dst + c->dst, src + c->src[layout], (size_t)c->count * sizeof(float));
        copied += c->count;
    }
    free(src_p);
    free(src_b);
    return copied;
}

int rt_init_is_frozen(const rt_init_config *cfg, long offset) {
    for (int i = 0; cfg && i < cfg->n_frozen; i++)
        if (offset >= cfg->frozen[i].offset && offset < cfg->frozen[i].offset + cfg->frozen[i].count) return 1;
    return 0;
}

void rt_init_zero_frozen(const rt_init_config *cfg, float *grads) {
    for (int i = 0; cfg && i < cfg->n_frozen; i++)
        memset(grads + cfg->frozen[i].offset, 0, (size_t)cfg->frozen[i].count * sizeof(float));
}
