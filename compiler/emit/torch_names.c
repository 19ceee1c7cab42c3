/* PyTorch state_dict keys and shapes of a lowered net's parameters and BN statistics
 * (torch_names.h). Our layer names are torchvision's for the ResNets, VGG, AlexNet and the
 * examples; ConvNeXt's spec (specs/models/convnext_tiny.spec) names its layers by block
 * (stages.S.I.dwconv) and is mapped here to torchvision's Sequential indices. */
#include "torch_names.h"

#include <stdio.h>
#include <string.h>

/* torchvision's module path of a ConvNeXt layer, or the layer's own name; *linear: a 1x1
 * conv that torchvision holds as a Linear (CNBlock's channels-last MLP). */
static void torchvision_layer(const char *layer, char *out, size_t cap, int *linear) {
    int s, b, n = 0;
    char rest[128];
    *linear = 0;
    if (!strcmp(layer, "stem.conv")) snprintf(out, cap, "features.0.0");
    else if (!strcmp(layer, "stem.norm")) snprintf(out, cap, "features.0.1");
    else if (!strcmp(layer, "head.norm")) snprintf(out, cap, "classifier.0");
    else if (!strcmp(layer, "head.fc")) snprintf(out, cap, "classifier.2");
    else if (sscanf(layer, "stages.%d.downsample.%127s%n", &s, rest, &n) == 2 && !layer[n])
        snprintf(out, cap, "features.%d.%d", 2 * s, !strcmp(rest, "norm") ? 0 : 1);
    else if (sscanf(layer, "stages.%d.%d.%127s%n", &s, &b, rest, &n) == 3 && !layer[n]) {
        static const char *const parts[][2] = { { "dwconv", "0" }, { "norm", "2" }, { "pwconv1", "3" },
                                                { "pwconv2", "5" } };
        for (int k = 0; k < 4; k++)
            if (!strcmp(rest, parts[k][0])) {
                snprintf(out, cap, "features.%d.%d.block.%s", 2 * s + 1, b, parts[k][1]);
                *linear = k >= 2;
                return;
            }
        snprintf(out, cap, "features.%d.%d.%s", 2 * s + 1, b, rest);   /* layer_scale */
    } else snprintf(out, cap, "%s", layer);
}

int torch_tensors_of_op(const ir_op *op, int torchvision, torch_tensor out[TORCH_MAX_PER_OP]) {
    char base[200];
    int linear = 0, n = 0;
    if (torchvision) torchvision_layer(op->name, base, sizeof base, &linear);
    else snprintf(base, sizeof base, "%s", op->name);
    memset(out, 0, sizeof(torch_tensor) * TORCH_MAX_PER_OP);
    if (op->kind == IR_ATTENTION && op->window) {   /* torchvision's ShiftedWindowAttention */
        long c = op->c, cc = c * c, entries = (long)(2 * op->window - 1) * (2 * op->window - 1);
        static const char *const keys[] = { "qkv.weight", "proj.weight", "relative_position_bias_table", "qkv.bias",
                                            "proj.bias" };
        long offs[] = { op->w_off, op->w_off + 3 * cc, op->w_off + 4 * cc, op->b_off, op->b_off + 3 * c };
        long rows[] = { 3 * c, c, entries, 3 * c, c }, cols[] = { c, c, op->heads, 0, 0 };
        for (int k = 0; k < 5; k++) {
            torch_tensor *t = &out[n++];
            snprintf(t->key, sizeof t->key, "%s.%s", base, keys[k]);
            t->offset = offs[k], t->ndim = cols[k] ? 2 : 1, t->shape[0] = rows[k], t->shape[1] = cols[k];
            t->count = cols[k] ? rows[k] * cols[k] : rows[k];
        }
        return n;
    }
    if (op->kind == IR_ATTENTION) {   /* torch's nn.MultiheadAttention: four tensors in our two ranges */
        long c = op->c, cc = c * c;
        static const char *const keys[] = { "in_proj_weight", "out_proj.weight", "in_proj_bias", "out_proj.bias" };
        long offs[] = { op->w_off, op->w_off + 3 * cc, op->b_off, op->b_off + 3 * c };
        long rows[] = { 3 * c, c, 3 * c, c };
        for (int k = 0; k < 4; k++) {
            torch_tensor *t = &out[n++];
            snprintf(t->key, sizeof t->key, "%s.%s", base, keys[k]);
            t->offset = offs[k], t->ndim = k < 2 ? 2 : 1, t->shape[0] = rows[k], t->shape[1] = c;
            t->count = k < 2 ? rows[k] * c : rows[k];
        }
        return n;
    }
    if (op->kind == IR_LEARNED) {   /* a parameter of the model, our [C, H, W] (torchvision's ViT holds
                                     * its position embedding token-major, [1, T, C]) */
        torch_tensor *t = &out[n++];
        snprintf(t->key, sizeof t->key, "%s", base);
        t->offset = op->w_off, t->count = op->w_count, t->ndim = 3;
        t->shape[0] = op->c, t->shape[1] = op->h, t->shape[2] = op->w;
        return n;
    }
    if (op->w_off >= 0) {
        torch_tensor *t = &out[n++];
        t->offset = op->w_off, t->count = op->w_count;
        snprintf(t->key, sizeof t->key, "%s.weight", base);
        if (op->kind == IR_LAYER_SCALE) {   /* torchvision: a parameter of the block, [C, 1, 1] */
            if (torchvision) snprintf(t->key, sizeof t->key, "%s", base);
            t->ndim = torchvision ? 3 : 1, t->shape[0] = op->w_count, t->shape[1] = t->shape[2] = 1;
        } else if (op->kind == IR_CONV && !linear) {
            t->ndim = 4, t->shape[0] = op->c, t->shape[2] = op->kh, t->shape[3] = op->kw;
            t->shape[1] = op->w_count / ((long)op->c * op->kh * op->kw);
        } else if (op->kind == IR_CONV || op->kind == IR_LINEAR) {
            t->ndim = 2, t->shape[0] = op->c, t->shape[1] = op->w_count / op->c;
        } else {   /* bn, ln: one value per channel */
            t->ndim = 1, t->shape[0] = op->w_count;
        }
    }
    if (op->b_off >= 0) {
        torch_tensor *t = &out[n++];
        snprintf(t->key, sizeof t->key, "%s.bias", base);
        t->offset = op->b_off, t->count = op->b_count, t->ndim = 1, t->shape[0] = op->b_count;
    }
    if (op->kind == IR_BN && op->buf_off >= 0) {
        static const char *const stats[] = { "running_mean", "running_var" };
        for (int k = 0; k < 2; k++) {
            torch_tensor *t = &out[n++];
            snprintf(t->key, sizeof t->key, "%s.%s", base, stats[k]);
            t->kind = TORCH_BUFFER, t->offset = op->buf_off + (long)k * op->c, t->count = op->c;
            t->ndim = 1, t->shape[0] = op->c;
        }
        torch_tensor *t = &out[n++];
        snprintf(t->key, sizeof t->key, "%s.num_batches_tracked", base);
        t->kind = TORCH_BATCHES, t->ndim = 0, t->count = 1;
    }
    return n;
}
