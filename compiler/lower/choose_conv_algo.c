/* Lowering's choice of each CPU conv's algorithm (lower.h choose_conv_algos), and its names for
 * the emitter and for `show --schedule`: decided from the shape and precision.compute alone
 * (runtime/include/rt_conv_choice.h), with the rule for the kernels that need the host's AVX-512F
 * or oneDNN's BF16 convolutions recorded beside them. */
#include "lower.h"
#include "rt_conv_choice.h"   /* rt_conv_choose: the runtime's own shape predicates and rule */

/* The CPU convs' algorithm, decided here once (rt_conv_choice.h's rule; runtime/cpu/ops/conv2d.c
 * follows the record): Winograd wanted for the shapes the runtime's Winograd path computes,
 * when there are enough input channels for its transformed-domain GEMMs to pay off (a
 * 1-channel stem is a 9- or 25-deep im2col GEMM): F(4x4,3x3) for 3x3 kernels (0.56-0.73x the
 * GEMM work of F(2x2,3x3) on 28x28, 14x14 and 7x7 maps; bench/RESULTS.md has the measurement),
 * F(2x2,5x5) for 5x5 ones; then rt_conv_choose by precision.compute (BF16: F(2x2,3x3), oneDNN's
 * BF16 primitives, no strided Winograd), the strided kernels and the 1-channel one. The
 * kernels that need something of the host (AVX-512F, oneDNN's BF16 convolutions) get the
 * algorithm that runs where the host lacks it (conv_alt, conv_fallback), so the emitted code
 * is the same on every CPU and what it runs there is said by `show --schedule`. */
_Static_assert((int)IR_CONV_C1 == (int)RT_CONV_C1 && (int)IR_CONV_DNNL_BF16 == (int)RT_CONV_DNNL_BF16 &&
               (int)IR_CONV_STRIDED_WINOGRAD == (int)RT_CONV_STRIDED_WINOGRAD &&
               (int)IR_CONV_STRIDED == (int)RT_CONV_STRIDED && (int)IR_CONV_WINOGRAD_F4 == (int)RT_CONV_WINOGRAD_F4,
               "ir_conv_algo mirrors rt_conv_algo");
void choose_conv_algos(ir_net *net, int bf16) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        if (op->kind != IR_CONV) continue;
        rt_conv_shape s = { .c = op->in_c, .h = op->in_h, .w = op->in_w, .oc = op->c,
                            .kh = op->kh, .kw = op->kw, .sh = op->sh, .sw = op->sw, .ph = op->ph,
                            .pw = op->pw, .dh = op->dh, .dw = op->dw, .groups = op->groups,
                            .oh = op->h, .ow = op->w };
        if (rt_conv_winograd_fits(&s) && op->in_c >= 8) s.algo = op->kh == 3 ? RT_CONV_WINOGRAD_F4 : RT_CONV_WINOGRAD;
        rt_conv_choose(&s, bf16);
        op->conv_algo = (ir_conv_algo)s.algo;
        op->conv_alt = (ir_conv_algo)s.alt;
        op->conv_fallback = (ir_conv_algo)s.fallback;
    }
}

const char *ir_conv_algo_const(ir_conv_algo a) {
    static const char *const names[] = { "RT_CONV_IM2COL", "RT_CONV_WINOGRAD", "RT_CONV_WINOGRAD_F4",
                                         "RT_CONV_STRIDED", "RT_CONV_STRIDED_WINOGRAD", "RT_CONV_DNNL_BF16",
                                         "RT_CONV_C1" };
    return names[a];
}

const char *ir_conv_algo_text(const ir_op *op, ir_conv_algo a) {
    switch (a) {
    case IR_CONV_WINOGRAD: return op->kh == 5 ? "Winograd F(2x2,5x5)" : "Winograd F(2x2,3x3)";
    case IR_CONV_WINOGRAD_F4: return "Winograd F(4x4,3x3)";
    case IR_CONV_STRIDED: return "one GEMM per tap on the polyphase planes (conv2d_strided.c)";
    case IR_CONV_STRIDED_WINOGRAD: return "Winograd F(7x7,2x2) on the phase planes (conv2d_strided_winograd.c)";
    case IR_CONV_DNNL_BF16: return "oneDNN's BF16 convolution";
    case IR_CONV_C1: return "the 1-channel AVX-512 kernel (conv2d_c1.c)";
    case IR_CONV_IM2COL: break;
    }
    return "im2col + GEMM";
}

const char *ir_conv_host_rule(ir_conv_algo a) {
    switch (a) {
    case IR_CONV_C1: return "where the CPU has AVX-512F and TRAINC_CONV_C1 is not off, and not for an input gradient";
    case IR_CONV_DNNL_BF16:
        return "where libdnnl's convolutions load, the CPU has avx512_bf16, oneDNN makes the shape's primitives "
               "and TRAINC_CONV_BF16 is not gemm";
    case IR_CONV_STRIDED_WINOGRAD: return "unless TRAINC_CONV_STRIDED_WINOGRAD is off";
    default: return NULL;
    }
}
