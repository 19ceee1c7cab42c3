/* The spec's init block from a PyTorch state_dict in a .safetensors file or a torch.save
 * .pth/.pt file (rt_torch_pt.h reads it into the same table) (rt_init.h): every
 * tensor of the net that is not fresh is looked up by its key (torchvision's; trainc's layer
 * name as the fallback), its shape checked (trailing 1s aside: a Linear's [out, in] is a
 * 1x1 conv's [out, in, 1, 1]), and copied. Keys the net does not use (num_batches_tracked, a
 * replaced classifier's) are left alone; a missing key or another shape is one message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"
#include "rt_init.h"
#include "rt_safetensors.h"
#include "rt_torch_pt.h"

static void shape_text(char *buf, size_t cap, const long *shape, int ndim) {
    int n = snprintf(buf, cap, "[");
    for (int k = 0; k < ndim && n < (int)cap; k++) n += snprintf(buf + n, cap - (size_t)n, "%s%ld", k ? ", " : "", shape[k]);
    if (n < (int)cap) snprintf(buf + n, cap - (size_t)n, "]");
}

static int without_trailing_ones(const long *shape, int ndim) {
    while (ndim > 1 && shape[ndim - 1] == 1) ndim--;
    return ndim;
}

static int same_shape(const rt_init_named *e, const rt_st_tensor *t) {
    int a = without_trailing_ones(e->shape, e->ndim), b = without_trailing_ones(t->shape, t->ndim);
    if (a != b) return 0;
    for (int k = 0; k < a; k++) if (e->shape[k] != t->shape[k]) return 0;
    return 1;
}

long rt_init_apply_state_dict(const rt_init_config *cfg, const char *path, float *params, long n_params,
                              float *buffers, long n_buffers) {
    rt_safetensors st;
    rt_err err;
    rt_status opened = rt_torch_pt_sniff(path) ? rt_torch_pt_open(&st, path, &err) : rt_safetensors_open(&st, path, &err);
    if (opened != RT_OK)
        rt_die_hint(err.hint, "init: %s", err.msg);
    long copied = 0;
    for (int i = 0; i < cfg->n_named; i++) {
        const rt_init_named *e = &cfg->named[i];
        const rt_st_tensor *t = rt_safetensors_find(&st, e->key);
        if (!t && e->alt && *e->alt) t = rt_safetensors_find(&st, e->alt);
        if (!t) {
            char layer[256];
            snprintf(layer, sizeof layer, "%s", e->alt && *e->alt ? e->alt : e->key);
            char *dot = strrchr(layer, '.');
            if (dot) *dot = '\0';
            rt_die_hint("list the layer in init.fresh to initialize it anew, or pass a state_dict of the same "
                        "architecture (torchvision's keys)",
                        "init: %s has no tensor '%s' (layer '%s' of this net)", path, e->key, layer);
        }
        char want[96], got[96];
        shape_text(want, sizeof want, e->shape, e->ndim);
        shape_text(got, sizeof got, t->shape, t->ndim);
        if (!same_shape(e, t) || rt_st_numel(t) != e->count)
            rt_die_hint("list the layer in init.fresh (a new classifier, say), or make the shapes agree",
                        "init: tensor '%s' is %s in %s but %s here", t->name, got, path, want);
        long limit = e->buffer ? n_buffers : n_params;
        if (e->dst < 0 || e->dst + e->count > limit) rt_die("init: tensor %s lies outside its buffer (a compiler bug)", e->key);
        if (rt_safetensors_read_f32(&st, t, (e->buffer ? buffers : params) + e->dst, &err) != RT_OK)
            rt_die_hint(err.hint, "init: %s", err.msg);
        copied += e->count;
    }
    rt_safetensors_close(&st);
    return copied;
}
