/* Emits the fused elementwise kernels of one net (kernels.cu) and their C prototypes
 * (kernels.h): bias + ReLU, batch-norm apply + ReLU, n-way add + ReLU and its backward,
 * layer scale, dropout. A forward-only schedule (the evaluation's, kernels_eval.cu) gets
 * only what its forward launches: no backward, no dropout. Every shape is a constant;
 * tensors whose size is a multiple of 4 are read and written 4 elements at a time (arena
 * offsets are 64-byte aligned). Tensors are the net's activation type act_t (FP32, BF16 or
 * FP16); arithmetic is FP32. */
#include "emit.h"
#include "emit_names.h"
#include "ir_nhwc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static long hw_of(const ir_op *op) { return (long)op->h * op->w; }
static long total_of(const ir_net *net, const ir_op *op) { return (long)net->batch * op->c * hw_of(op); }

/* One elementwise kernel and its launcher.
 *   params: the parameter list, activation tensors typed ACT: act_t in the kernel, void in the
 *           C launcher (kernels.h), cast back in the launch
 *   prologue: statements before the loop (per-thread constants), or NULL
 *   loads:  the input pointers read at element i, bound to floats v0, v1, ... in the body
 *   body:   C statements that set float r from v0.. and the element index i
 *   stores: the output pointers given r; '+' before a name accumulates instead of assigning */
typedef struct {
    const char *name;         /* kernel and launcher stem: fused_<name> */
    const char *params;
    const char *prologue;
    const char *loads[IR_MAX_INPUTS + 1];
    int n_loads;
    const char *body;
    const char *stores[IR_MAX_INPUTS];
    int n_stores;
    long total;
    const char *what;         /* comment */
} ew_kernel;

/* params with ACT replaced by `type`. */
static void params_as(char *buf, size_t cap, const char *params, const char *type) {
    size_t n = 0;
    for (const char *p = params; *p && n + 1 < cap;) {
        if (strncmp(p, "ACT", 3) == 0) {
            n += (size_t)snprintf(buf + n, cap - n, "%s", type);
            p += 3;
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n < cap ? n : cap - 1] = '\0';
}

/* The launch arguments: each parameter's name, cast back to act_t when it is an ACT tensor
 * ("const ACT *in" -> "(const act_t *)in"). */
static void launch_args(char *buf, size_t cap, const char *params) {
    size_t n = 0;
    buf[0] = '\0';
    for (const char *p = params; *p && n < cap;) {
        const char *end = strchr(p, ',');
        char one[160], type[160];
        snprintf(one, sizeof one, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
        size_t name_at = strlen(one);
        while (name_at > 0 && (isalnum((unsigned char)one[name_at - 1]) || one[name_at - 1] == '_')) name_at--;
        char name[160];
        snprintf(name, sizeof name, "%s", one + name_at);
        one[name_at] = '\0';   /* now the type: "const ACT *" */
        size_t tl = strlen(one);
        while (tl > 0 && one[tl - 1] == ' ') one[--tl] = '\0';
        const char *sep = n ? ", " : "";
        if (strstr(one, "ACT")) {
            params_as(type, sizeof type, one, "act_t");
            n += (size_t)snprintf(buf + n, cap - n, "%s(%s)%s", sep, type, name);
        } else {
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", sep, name);
        }
        if (!end) break;
        for (p = end + 1; *p == ' '; p++) {}
    }
}

static void emit_ew(FILE *out, const ew_kernel *k) {
    int vec = k->total % 4 == 0;
    long iters = vec ? k->total / 4 : k->total;
    char kparams[512], cparams[512], args[512];
    params_as(kparams, sizeof kparams, k->params, "act_t");
    params_as(cparams, sizeof cparams, k->params, "void");
    launch_args(args, sizeof args, k->params);
    fprintf(out, "/* %s */\n__global__ void __launch_bounds__(RT_THREADS) %s_kernel(%s) {\n", k->what, k->name, kparams);
    if (k->prologue) fprintf(out, "    %s\n", k->prologue);
    fprintf(out, "    for (long q = blockIdx.x * (long)blockDim.x + threadIdx.x; q < %ldL; q += (long)gridDim.x * blockDim.x) {\n",
            iters);
    if (vec) {
        for (int l = 0; l < k->n_loads; l++)
            fprintf(out, "        float a%d[4];\n        rt_load4(%s, q, a%d);\n", l, k->loads[l], l);
        fprintf(out, "        float r4[4];\n        #pragma unroll\n        for (int j = 0; j < 4; j++) {\n"
                     "            const long i = 4 * q + j;\n            (void)i;\n");
        for (int l = 0; l < k->n_loads; l++) fprintf(out, "            const float v%d = a%d[j];\n", l, l);
        fprintf(out, "            float r;\n            %s\n            r4[j] = r;\n        }\n", k->body);
        for (int s = 0; s < k->n_stores; s++) {
            const char *dst = k->stores[s];
            if (dst[0] == '+')
                fprintf(out, "        {\n            float o[4];\n            rt_load4(%s, q, o);\n"
                             "            for (int j = 0; j < 4; j++) o[j] += r4[j];\n"
                             "            rt_store4(%s, q, o);\n        }\n",
                        dst + 1, dst + 1);
            else
                fprintf(out, "        rt_store4(%s, q, r4);\n", dst);
        }
    } else {
        fprintf(out, "        const long i = q;\n");
        for (int l = 0; l < k->n_loads; l++) fprintf(out, "        const float v%d = rt_ld(%s[i]);\n", l, k->loads[l]);
        fprintf(out, "        float r;\n        %s\n", k->body);
        for (int s = 0; s < k->n_stores; s++) {
            const char *dst = k->stores[s];
            if (dst[0] == '+') fprintf(out, "        %s[i] = rt_st<act_t>(rt_ld(%s[i]) + r);\n", dst + 1, dst + 1);
            else fprintf(out, "        %s[i] = rt_st<act_t>(r);\n", dst);
        }
    }
    fprintf(out, "    }\n}\n\n");
    fprintf(out, "extern \"C\" void fused_%s(%s) {\n"
                 "    %s_kernel<<<rt_blocks(%ldL), RT_THREADS, 0, rt_stream()>>>(%s);\n"
                 "    rt_cuda_launched(__FILE__, __LINE__);\n}\n\n",
            k->name, cparams, k->name, iters, args);
}

typedef struct {
    FILE *out;            /* NULL when only prototypes are wanted */
    FILE *header;         /* NULL when only kernels are wanted */
    const ir_net *net;
    int nhwc;             /* channels-last tensors: the channel is the fastest index */
} kgen;

/* The expression for element i's channel in op's output. */
static const char *channel_expr(const kgen *g, const ir_op *op, char *buf, size_t cap) {
    if (g->nhwc) snprintf(buf, cap, "i %% %d", op->c);
    else snprintf(buf, cap, "i / %ldL %% %d", hw_of(op), op->c);
    return buf;
}

static void declare(kgen *g, const char *name, const char *params) {
    char cparams[512];
    params_as(cparams, sizeof cparams, params, "void");
    if (g->header) fprintf(g->header, "void fused_%s(%s);\n", name, cparams);
}

static void kernel(kgen *g, const ew_kernel *k) {
    declare(g, k->name, k->params);
    if (g->out) emit_ew(g->out, k);
}

static void gen_bias(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = op->act;
    char name[160], body[256], what[256], ch[64];
    snprintf(name, sizeof name, "%s_bias", op->ident);
    snprintf(body, sizeof body, "r = v0 + bias[%s];%s", channel_expr(g, op, ch, sizeof ch),
             relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "\"%s\": + bias%s, [%d,%d,%d,%d]%s", op->name, relu ? ", then ReLU" : "",
             g->net->batch, op->c, op->h, op->w,
             relu ? "" : "; may run in place");
    if (relu) {
        size_t n = strlen(what);
        snprintf(what + n, sizeof what - n, " (the ReLU \"%s\" is fused in)", op->act_name);
    }
    ew_kernel k = { name, "ACT *out, const ACT *in, const float *bias", NULL, { "in" }, 1, body, { "out" }, 1,
                    total_of(g->net, op), what };
    kernel(g, &k);
}

/* A bn apply + ReLU that also writes the ReLU's bitmask (lower.c ir_op.relu_mask): each thread
 * takes the 8 elements of one mask byte (C % 8 == 0), so no two threads write one byte. The
 * bit is the stored value's sign, as the unfused backward reads it from the output. */
static void gen_bn_apply_bits(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    char name[160];
    const char *params = "ACT *out, const ACT *in, const float *gamma, const float *beta, const float *mean, "
                         "const float *inv_std, uint8_t *bits";
    snprintf(name, sizeof name, "%s_apply", op->ident);
    declare(g, name, params);
    if (!g->out) return;
    long bytes = total_of(g->net, op) / 8;
    fprintf(g->out,
            "/* batch norm \"%s\" apply: (x - mean)·inv_std·gamma + beta, then ReLU, [%d,%d,%d,%d], and the ReLU's\n"
            " * bitmask: bit j of bits[q] set where element 8q + j passed */\n"
            "__global__ void __launch_bounds__(RT_THREADS) %s_kernel(act_t *out, const act_t *in, const float *gamma,\n"
            "        const float *beta, const float *mean, const float *inv_std, uint8_t *bits) {\n"
            "    for (long q = blockIdx.x * (long)blockDim.x + threadIdx.x; q < %ldL; q += (long)gridDim.x * blockDim.x) {\n"
            "        float a[8], r8[8];\n"
            "        rt_load4(in, 2 * q, a);\n"
            "        rt_load4(in, 2 * q + 1, a + 4);\n"
            "        unsigned m = 0;\n"
            "        #pragma unroll\n"
            "        for (int j = 0; j < 8; j++) {\n"
            "            const int c = (int)((8 * q + j) %% %d);\n"
            "            const float scale = gamma[c] * inv_std[c];\n"
            "            float r = a[j] * scale + (beta[c] - mean[c] * scale);\n"
            "            r = r > 0.0f ? r : 0.0f;\n"
            "            m |= (rt_ld(rt_st<act_t>(r)) > 0.0f ? 1u : 0u) << j;\n"
            "            r8[j] = r;\n"
            "        }\n"
            "        rt_store4(out, 2 * q, r8);\n"
            "        rt_store4(out, 2 * q + 1, r8 + 4);\n"
            "        bits[q] = (uint8_t)m;\n"
            "    }\n}\n\n"
            "extern \"C\" void fused_%s(void *out, const void *in, const float *gamma, const float *beta, const float *mean,\n"
            "        const float *inv_std, uint8_t *bits) {\n"
            "    %s_kernel<<<rt_blocks(%ldL), RT_THREADS, 0, rt_stream()>>>((act_t *)out, (const act_t *)in, gamma, beta, mean,\n"
            "        inv_std, bits);\n"
            "    rt_cuda_launched(__FILE__, __LINE__);\n}\n\n",
            op->name, g->net->batch, op->c, op->h, op->w, name, bytes, op->c, name, name, bytes);
}

static void gen_bn_apply(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = op->act;
    if (ir_has_mask(g->net, i)) {
        gen_bn_apply_bits(g, i);
        return;
    }
    char name[160], body[512], what[256], ch[64];
    snprintf(name, sizeof name, "%s_apply", op->ident);
    snprintf(body, sizeof body,
             "const int c = (int)(%s);\n"
             "            const float scale = gamma[c] * inv_std[c];\n"
             "            r = v0 * scale + (beta[c] - mean[c] * scale);%s",
             channel_expr(g, op, ch, sizeof ch), relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "batch norm \"%s\" apply: (x - mean)·inv_std·gamma + beta%s, [%d,%d,%d,%d]", op->name,
             relu ? ", then ReLU" : "", g->net->batch, op->c, op->h, op->w);
    ew_kernel k = { name,
                    "ACT *out, const ACT *in, const float *gamma, const float *beta, const float *mean, "
                    "const float *inv_std",
                    NULL, { "in" }, 1, body, { "out" }, 1, total_of(g->net, op), what };
    kernel(g, &k);
}

static void gen_add(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = op->act;
    char name[160], body[512], what[256], params[512];
    char loadbuf[IR_MAX_INPUTS][16], storebuf[IR_MAX_INPUTS][16];   /* "+d" and an int */
    /* forward: out = sum of inputs (+ ReLU) */
    snprintf(name, sizeof name, "%s_forward", op->ident);
    int n = snprintf(params, sizeof params, "ACT *out");
    int b = snprintf(body, sizeof body, "r = v0");
    ew_kernel k = { name, params, NULL, { 0 }, op->n_in, body, { "out" }, 1, total_of(g->net, op), what };
    for (int s = 0; s < op->n_in; s++) {
        snprintf(loadbuf[s], sizeof loadbuf[s], "in%d", s);
        k.loads[s] = loadbuf[s];
        n += snprintf(params + n, sizeof params - (size_t)n, ", const ACT *in%d", s);
        if (s) b += snprintf(body + b, sizeof body - (size_t)b, " + v%d", s);
    }
    snprintf(body + b, sizeof body - (size_t)b, ";%s", relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "add \"%s\" of %d inputs%s, [%d,%d,%d,%d]", op->name, op->n_in, relu ? ", then ReLU" : "",
             g->net->batch, op->c, op->h, op->w);
    if (!op->add_bns) kernel(g, &k);   /* else cuda_bn_add_relu_nhwc with its bns */
    if (g->net->forward_only) return;   /* kernels_eval.cu: the forward alone */

    /* backward: g = dout (masked by the ReLU output), assigned to or added into each input */
    char bname[160], bparams[512], bwhat[256];
    snprintf(bname, sizeof bname, "%s_backward", op->ident);
    n = snprintf(bparams, sizeof bparams, "const ACT *dout%s", relu ? ", const ACT *relu_out" : "");
    ew_kernel kb = { bname, bparams, NULL, { "dout", "relu_out" }, relu ? 2 : 1,
                     relu ? "r = v1 > 0.0f ? v0 : 0.0f;" : "r = v0;", { 0 }, 0, total_of(g->net, op), bwhat };
    for (int s = 0; s < op->n_in; s++) {
        n += snprintf(bparams + n, sizeof bparams - (size_t)n, ", ACT *d%d", s);
        if (ir_route(g->net, i, s) == GRAD_NONE) continue;   /* the network input has no gradient */
        snprintf(storebuf[s], sizeof storebuf[s], "%sd%d", ir_route(g->net, i, s) == GRAD_WRITE ? "" : "+", s);
        kb.stores[kb.n_stores++] = storebuf[s];
    }
    snprintf(bwhat, sizeof bwhat, "backward of add \"%s\"%s: the gradient to each input (assigned or added, "
             "as the schedule needs)", op->name, relu ? " and its ReLU" : "");
    kernel(g, &kb);
}

static void gen_layer_scale(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    char name[160], body[256], what[256], ch[64];
    snprintf(name, sizeof name, "%s_forward", op->ident);
    snprintf(body, sizeof body, "r = v0 * gamma[%s];", channel_expr(g, op, ch, sizeof ch));
    snprintf(what, sizeof what, "layer scale \"%s\": x·gamma[c], [%d,%d,%d,%d]", op->name, g->net->batch, op->c,
             op->h, op->w);
    ew_kernel k = { name, "ACT *out, const ACT *in, const float *gamma", NULL, { "in" }, 1, body, { "out" }, 1,
                    total_of(g->net, op), what };
    kernel(g, &k);
}

/* Dropout: element i kept iff rt_hash_uniform(seed, first + i) >= p, scaled by 1/(1-p): the
 * CPU mask (first: this rank's element 0 in the global batch, so any world size draws alike).
 * The seed, rt_hash_u64(step seed, salt, 0), is derived on the device from the step's seed
 * word, so a replayed graph draws a new mask every step. */
static void gen_dropout(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    /* The CPU op takes p as a float and computes its scale in float: the same threshold
     * ((double)(float)p) and the same float scale here, so the masks and values are its own. */
    float pf = (float)op->p;
    double p = pf;
    float scale = pf < 1 ? 1.0f / (1.0f - pf) : 0.0f;
    long total = total_of(g->net, op);
    char body[320], mname[160], what[256], at[128] = "i";
    int c, h, w;
    /* channels-last with positions (its own, or seen through a flatten): element i's mask is
     * drawn at its C,H,W index, the CPU's, so both layouts drop the same features */
    if (g->nhwc && ir_nhwc_positions(g->net, i + 1, &c, &h, &w)) {
        long per = (long)c * h * w;
        snprintf(at, sizeof at, "(i / %ldL * %ldL + i %% %d * %ldL + i %% %ldL / %d)", per, per, c, (long)h * w, per, c);
    }
    snprintf(mname, sizeof mname, "%s_mask", op->ident);
    snprintf(body, sizeof body, "r = rt_hash_uniform(seed, (uint64_t)(first + %s)) >= %.17g ? v0 * %s : 0.0f;", at,
             p, c_float((double)scale));
    snprintf(what, sizeof what, "dropout \"%s\", p = %g: the stateless mask of both directions, [%d,%d,%d,%d]",
             op->name, p, g->net->batch, op->c, op->h, op->w);
    char fname[160], bname[160];
    snprintf(fname, sizeof fname, "%s_forward", op->ident);
    snprintf(bname, sizeof bname, "%s_backward", op->ident);
    declare(g, fname, "ACT *out, const ACT *in, const uint64_t *step_seed, uint64_t salt, long first, int train");
    declare(g, bname, "ACT *din, const ACT *dout, const uint64_t *step_seed, uint64_t salt, long first");
    if (!g->out) return;
    if (p <= 0) {   /* nothing is ever dropped: both directions are copies (or nothing, in place) */
        fprintf(g->out,
                "/* dropout \"%s\" with p = 0: the identity */\n"
                "extern \"C\" void fused_%s(void *out, const void *in, const uint64_t *step_seed, uint64_t salt, long first,\n"
                "                           int train) {\n"
                "    (void)step_seed, (void)salt, (void)first, (void)train;\n"
                "    if (out != in) rt_cuda_copy_d2d(out, in, sizeof(act_t) * %ldL);\n}\n\n"
                "extern \"C\" void fused_%s(void *din, const void *dout, const uint64_t *step_seed, uint64_t salt, long first) {\n"
                "    (void)step_seed, (void)salt, (void)first;\n"
                "    if (din != dout) rt_cuda_copy_d2d(din, dout, sizeof(act_t) * %ldL);\n}\n\n",
                op->name, fname, total, bname, total);
        return;
    }
    /* The mask kernel's launcher is internal to this file; the two below are the interface. */
    ew_kernel k = { mname, "ACT *out, const ACT *in, const uint64_t *step_seed, uint64_t salt, long first",
                    "const uint64_t seed = rt_hash_u64(*step_seed, salt, 0);", { "in" }, 1, body, { "out" }, 1,
                    total, what };
    emit_ew(g->out, &k);
    fprintf(g->out,
            "/* dropout \"%s\": the identity in evaluation (train = 0) */\n"
            "extern \"C\" void fused_%s(void *out, const void *in, const uint64_t *step_seed, uint64_t salt, long first,\n"
            "                           int train) {\n"
            "    if (train) fused_%s(out, in, step_seed, salt, first);\n"
            "    else if (out != in) rt_cuda_copy_d2d(out, in, sizeof(act_t) * %ldL);\n}\n\n"
            "extern \"C\" void fused_%s(void *din, const void *dout, const uint64_t *step_seed, uint64_t salt, long first) {\n"
            "    fused_%s(din, dout, step_seed, salt, first);\n}\n\n",
            op->name, fname, mname, total, bname, mname);
}

static void generate(kgen *g) {
    const ir_net *net = g->net;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        switch (op->kind) {
        case IR_CONV: case IR_LINEAR:   /* else the activation's, the residual tail's, the conv's or the norm's kernel adds the bias */
            if (op->b_off >= 0 && op->bias_act < 0 && op->in_tail < 0 && !op->dw_bias && op->ln_bias < 0) gen_bias(g, i);
            break;
        case IR_BN:
            /* else applied by cuda_bn_add_relu_nhwc, cuda_bn_relu_maxpool_forward_nhwc or the next conv's prologue */
            if (!net->ops[i].bn_in_add && !net->ops[i].bn_in_pool && !net->ops[i].bn_in_conv) gen_bn_apply(g, i);
            break;
        case IR_ADD:   /* a residual tail's: residual_tail.cu */
            if (op->tail_conv < 0) gen_add(g, i);
            break;
        case IR_LAYER_SCALE:
            if (op->in_tail < 0) gen_layer_scale(g, i);
            break;
        case IR_DROPOUT:
            if (!net->forward_only) gen_dropout(g, i);   /* else the identity: the forward's copy */
            break;
        case IR_LN: case IR_RELU: case IR_GELU: case IR_ACTIVATION: case IR_MAXPOOL: case IR_AVGPOOL: case IR_GAP: case IR_LRN:
        case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: case IR_FLATTEN:
        case IR_STOCHASTIC_DEPTH: case IR_LEARNED: case IR_ATTENTION: case IR_SPACE_TO_DEPTH: case IR_STOP_GRADIENT:
        case IR_OP_COUNT:
            break;   /* libtrainrt_cuda's own kernels (stop_gradient: a copy) */
        }
    }
}

static const char *act_name(cuda_precision p) {
    return p == CUDA_BF16 ? "BF16" : p == CUDA_FP16 ? "FP16" : "FP32";
}

void emit_cuda_kernels_header(FILE *out, const schedule *s, const emit_info *info, const char *stem) {
    char guard[64];   /* TRAINC_KERNELS_H, TRAINC_KERNELS_EVAL_H */
    size_t n = (size_t)snprintf(guard, sizeof guard, "TRAINC_");
    for (const char *c = stem; *c && n + 3 < sizeof guard; c++) guard[n++] = (char)toupper((unsigned char)*c);
    snprintf(guard + n, sizeof guard - n, "_H");
    fprintf(out, "/* Fused kernels of spec \"%s\" (%s.cu), generated by trainc %s. DO NOT EDIT.\n"
                 " * Launched on the CUDA context's stream; all pointers are device memory.%s */\n"
                 "#ifndef %s\n#define %s\n#include <stdint.h>\n\n"
                 "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
            info->name, stem, info->compiler_version, s->net.forward_only ? " Forward only." : "", guard, guard);
    kgen g = { NULL, out, &s->net, s->opt.nhwc };
    generate(&g);
    fprintf(out, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

void emit_cuda_kernels(FILE *out, const schedule *s, const emit_info *info, const char *stem) {
    fprintf(out, "/* Fused elementwise kernels of spec \"%s\", generated by trainc %s. DO NOT EDIT.\n"
                 " * spec sha256: %s\n"
                 " * Shapes are constants of this net; %s calls the fused_* launchers. Tensors are\n"
                 " * act_t (%s)%s; arithmetic is FP32 in registers.%s */\n"
                 "#include \"rt_cuda_kernels.cuh\"\n#include \"%s.h\"\n\n"
                 "typedef %s act_t;\n\n",
            info->name, info->compiler_version, info->spec_hash, s->net.forward_only ? "model_eval.c" : "model.c",
            act_name(s->precision), s->opt.nhwc ? ", channels-last [N,H,W,C]" : "",
            s->net.forward_only ? "\n * Forward only (the evaluation's schedule): no backward launchers, and none for\n"
                                  " * dropout, the identity in evaluation (model_eval.c copies)." : "",
            stem,
            s->precision == CUDA_BF16 ? "__nv_bfloat16" : s->precision == CUDA_FP16 ? "__half" : "float");
    kgen g = { out, NULL, &s->net, s->opt.nhwc };
    generate(&g);
}
