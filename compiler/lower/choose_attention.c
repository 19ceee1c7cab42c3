/* Which attention layers run their core on cuDNN's fused scaled-dot-product attention (lower.h
 * choose_attention): the rule, in one place. cuDNN's SDPA operations (graph API, one fused
 * flash-attention kernel per direction: the T x T scores never leave the chip) take BF16 and
 * FP16 data only, heads whose width is a multiple of 8 and at most 128, a dense softmax with a
 * scale and no bias or mask per score; Swin's windowed attention (a relative-position bias and
 * a shift mask on every score) keeps the runtime's own kernels (window_attention.cu). The
 * device's capability (8.0 or higher) and cuDNN's own refusals are the runtime's to find at
 * start-up: runtime/cuda/ops/attention_sdpa.cu then runs that direction on attention.cu's
 * kernels and says why, once. The chosen layers save and work in 16-bit copies beside their
 * FP32 values (rt_ops.h attention_sdpa_extra_elems), so the plan is made again after. */
#include "lower.h"

static const char *refusal(const schedule *s, const ir_op *op) {
    int dh = op->c / op->heads;
    if (s->opt.no_cudnn_attention) return "--no-cudnn-attention";
    if (!s->opt.fuse) return "--no-fuse (the runtime's own kernels, the reference)";
    if (s->net.forward_only) return "an evaluation schedule (its forward runs the runtime's own kernels)";
    if (op->window) return "windowed attention: a relative-position bias and a mask on every score (window_attention.cu)";
    if (s->precision != CUDA_BF16 && s->precision != CUDA_FP16)
        return "not BF16 or FP16: cuDNN's fused attention takes 16-bit data only";
    if (dh % 8 || dh > 128) return "heads not a multiple of 8 channels up to 128 (cuDNN's fused attention)";
    return NULL;
}

int choose_attention(schedule *s) {
    ir_net *net = &s->net;
    int chosen = 0;
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        if (op->kind != IR_ATTENTION) continue;
        op->attn_sdpa_why = refusal(s, op);
        op->attn_sdpa = op->attn_sdpa_why == NULL;
        chosen += op->attn_sdpa;
    }
    return chosen;
}
