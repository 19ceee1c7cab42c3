/* Emits the fused elementwise kernels of one net (kernels.cu) and their C prototypes
 * (kernels.h): bias + ReLU, batch-norm apply + ReLU, n-way add + ReLU and its backward,
 * layer scale, dropout. Every shape is a constant; tensors whose size is a multiple of 4 are
 * read and written as float4 (arena offsets are 64-byte aligned). */
#include "emit_cuda.h"

#include <stdlib.h>
#include <string.h>

static long hw_of(const ir_op *op) { return (long)op->h * op->w; }
static long total_of(const ir_net *net, const ir_op *op) { return (long)net->batch * op->c * hw_of(op); }

/* One elementwise kernel and its launcher.
 *   loads:  the input pointers read at element i, bound to floats v0, v1, ... in the body
 *   body:   C statements that set float r from v0.. and the element index i
 *   stores: the output pointers given r; '+' before a name accumulates instead of assigning */
typedef struct {
    const char *name;         /* kernel and launcher stem: fused_<name> */
    const char *params;       /* launcher/kernel parameter list */
    const char *args;         /* the same names, comma-separated, for the launch */
    const char *loads[IR_MAX_INPUTS + 1];
    int n_loads;
    const char *body;
    const char *stores[IR_MAX_INPUTS];
    int n_stores;
    long total;
    const char *what;         /* comment */
} ew_kernel;

static void emit_ew(FILE *out, const ew_kernel *k) {
    int vec = k->total % 4 == 0;
    long iters = vec ? k->total / 4 : k->total;
    fprintf(out, "/* %s */\n__global__ void %s_kernel(%s) {\n", k->what, k->name, k->params);
    fprintf(out, "    for (long q = blockIdx.x * (long)blockDim.x + threadIdx.x; q < %ldL; q += (long)gridDim.x * blockDim.x) {\n",
            iters);
    if (vec) {
        for (int l = 0; l < k->n_loads; l++)
            fprintf(out, "        const float4 L%d = reinterpret_cast<const float4 *>(%s)[q];\n"
                         "        const float a%d[4] = { L%d.x, L%d.y, L%d.z, L%d.w };\n",
                    l, k->loads[l], l, l, l, l, l);
        fprintf(out, "        float r4[4];\n        #pragma unroll\n        for (int j = 0; j < 4; j++) {\n"
                     "            const long i = 4 * q + j;\n            (void)i;\n");
        for (int l = 0; l < k->n_loads; l++) fprintf(out, "            const float v%d = a%d[j];\n", l, l);
        fprintf(out, "            float r;\n            %s\n            r4[j] = r;\n        }\n", k->body);
        for (int s = 0; s < k->n_stores; s++) {
            const char *dst = k->stores[s];
            if (dst[0] == '+')
                fprintf(out, "        {\n            float4 o = reinterpret_cast<float4 *>(%s)[q];\n"
                             "            reinterpret_cast<float4 *>(%s)[q] = make_float4(o.x + r4[0], o.y + r4[1], o.z + r4[2], o.w + r4[3]);\n"
                             "        }\n",
                        dst + 1, dst + 1);
            else
                fprintf(out, "        reinterpret_cast<float4 *>(%s)[q] = make_float4(r4[0], r4[1], r4[2], r4[3]);\n", dst);
        }
    } else {
        fprintf(out, "        const long i = q;\n");
        for (int l = 0; l < k->n_loads; l++) fprintf(out, "        const float v%d = %s[i];\n", l, k->loads[l]);
        fprintf(out, "        float r;\n        %s\n", k->body);
        for (int s = 0; s < k->n_stores; s++) {
            const char *dst = k->stores[s];
            if (dst[0] == '+') fprintf(out, "        %s[i] += r;\n", dst + 1);
            else fprintf(out, "        %s[i] = r;\n", dst);
        }
    }
    fprintf(out, "    }\n}\n\n");
    fprintf(out, "extern \"C\" void fused_%s(%s) {\n"
                 "    %s_kernel<<<rt_blocks(%ldL), RT_THREADS, 0, rt_stream()>>>(%s);\n"
                 "    rt_cuda_launched(__FILE__, __LINE__);\n}\n\n",
            k->name, k->params, k->name, iters, k->args);
}

typedef struct {
    FILE *out;            /* NULL when only prototypes are wanted */
    FILE *header;         /* NULL when only kernels are wanted */
    const ir_net *net;
    const cuda_fuse_plan *fp;
} kgen;

static void declare(kgen *g, const char *name, const char *params) {
    if (g->header) fprintf(g->header, "void fused_%s(%s);\n", name, params);
}

static void kernel(kgen *g, const ew_kernel *k) {
    declare(g, k->name, k->params);
    if (g->out) emit_ew(g->out, k);
}

static void gen_bias(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = g->fp->kind[i] == FUSE_BIAS_RELU;
    char name[160], body[256], what[256];
    snprintf(name, sizeof name, "%s_bias", op->ident);
    snprintf(body, sizeof body, "r = v0 + bias[i / %ldL %% %d];%s", hw_of(op), op->c,
             relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "\"%s\": + bias%s, [%d,%d,%d,%d]%s", op->name, relu ? ", then ReLU" : "",
             g->net->batch, op->c, op->h, op->w,
             relu ? "" : "; may run in place");
    if (relu) {
        size_t n = strlen(what);
        snprintf(what + n, sizeof what - n, " (the ReLU \"%s\" is fused in)", g->net->ops[g->fp->relu_of[i]].name);
    }
    ew_kernel k = { name, "float *out, const float *in, const float *bias", "out, in, bias", { "in" }, 1, body,
                    { "out" }, 1, total_of(g->net, op), what };
    kernel(g, &k);
}

static void gen_bn_apply(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = g->fp->kind[i] == FUSE_BN_RELU;
    char name[160], body[512], what[256];
    snprintf(name, sizeof name, "%s_apply", op->ident);
    snprintf(body, sizeof body,
             "const int c = (int)(i / %ldL %% %d);\n"
             "            const float scale = gamma[c] * inv_std[c];\n"
             "            r = v0 * scale + (beta[c] - mean[c] * scale);%s",
             hw_of(op), op->c, relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "batch norm \"%s\" apply: (x - mean)·inv_std·gamma + beta%s, [%d,%d,%d,%d]", op->name,
             relu ? ", then ReLU" : "", g->net->batch, op->c, op->h, op->w);
    ew_kernel k = { name,
                    "float *out, const float *in, const float *gamma, const float *beta, const float *mean, "
                    "const float *inv_std",
                    "out, in, gamma, beta, mean, inv_std", { "in" }, 1, body, { "out" }, 1, total_of(g->net, op), what };
    kernel(g, &k);
}

static void gen_add(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    int relu = g->fp->kind[i] == FUSE_ADD_RELU;
    char name[160], body[512], what[256], params[512], args[256];
    char loadbuf[IR_MAX_INPUTS][8], storebuf[IR_MAX_INPUTS][8];
    /* forward: out = sum of inputs (+ ReLU) */
    snprintf(name, sizeof name, "%s_forward", op->ident);
    int n = snprintf(params, sizeof params, "float *out"), m = snprintf(args, sizeof args, "out");
    int b = snprintf(body, sizeof body, "r = v0");
    ew_kernel k = { name, params, args, { 0 }, op->n_in, body, { "out" }, 1, total_of(g->net, op), what };
    for (int s = 0; s < op->n_in; s++) {
        snprintf(loadbuf[s], sizeof loadbuf[s], "in%d", s);
        k.loads[s] = loadbuf[s];
        n += snprintf(params + n, sizeof params - (size_t)n, ", const float *in%d", s);
        m += snprintf(args + m, sizeof args - (size_t)m, ", in%d", s);
        if (s) b += snprintf(body + b, sizeof body - (size_t)b, " + v%d", s);
    }
    snprintf(body + b, sizeof body - (size_t)b, ";%s", relu ? " r = r > 0.0f ? r : 0.0f;" : "");
    snprintf(what, sizeof what, "add \"%s\" of %d inputs%s, [%d,%d,%d,%d]", op->name, op->n_in, relu ? ", then ReLU" : "",
             g->net->batch, op->c, op->h, op->w);
    kernel(g, &k);

    /* backward: g = dout (masked by the ReLU output), assigned to or added into each input */
    char bname[160], bparams[512], bargs[256], bwhat[256];
    snprintf(bname, sizeof bname, "%s_backward", op->ident);
    n = snprintf(bparams, sizeof bparams, "const float *dout%s", relu ? ", const float *relu_out" : "");
    m = snprintf(bargs, sizeof bargs, "dout%s", relu ? ", relu_out" : "");
    ew_kernel kb = { bname, bparams, bargs, { "dout", "relu_out" }, relu ? 2 : 1,
                     relu ? "r = v1 > 0.0f ? v0 : 0.0f;" : "r = v0;", { 0 }, 0, total_of(g->net, op), bwhat };
    for (int s = 0; s < op->n_in; s++) {
        n += snprintf(bparams + n, sizeof bparams - (size_t)n, ", float *d%d", s);
        m += snprintf(bargs + m, sizeof bargs - (size_t)m, ", d%d", s);
        if (g->net->alias[op->in[s]] == 0) continue;   /* the network input has no gradient */
        snprintf(storebuf[s], sizeof storebuf[s], "%sd%d", g->fp->add_assign[i * IR_MAX_INPUTS + s] ? "" : "+", s);
        kb.stores[kb.n_stores++] = storebuf[s];
    }
    snprintf(bwhat, sizeof bwhat, "backward of add \"%s\"%s: the gradient to each input (assigned or added, "
             "as the schedule needs)", op->name, relu ? " and its ReLU" : "");
    kernel(g, &kb);
}

static void gen_layer_scale(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    char name[160], body[256], what[256];
    snprintf(name, sizeof name, "%s_forward", op->ident);
    snprintf(body, sizeof body, "r = v0 * gamma[i / %ldL %% %d];", hw_of(op), op->c);
    snprintf(what, sizeof what, "layer scale \"%s\": x·gamma[c], [%d,%d,%d,%d]", op->name, g->net->batch, op->c,
             op->h, op->w);
    ew_kernel k = { name, "float *out, const float *in, const float *gamma", "out, in, gamma", { "in" }, 1, body,
                    { "out" }, 1, total_of(g->net, op), what };
    kernel(g, &k);
}

/* Dropout: element i kept iff hash_uniform(seed, i) >= p, scaled by 1/(1-p): the CPU mask. */
static void gen_dropout(kgen *g, int i) {
    const ir_op *op = &g->net->ops[i];
    double p = op->p;
    double scale = p < 1 ? 1 / (1 - p) : 0;
    long total = total_of(g->net, op);
    char body[256], mname[160], what[256];
    snprintf(mname, sizeof mname, "%s_mask", op->ident);
    snprintf(body, sizeof body, "r = hash_uniform(seed, (uint64_t)i) >= %.17g ? v0 * %.9gf : 0.0f;", p, scale);
    snprintf(what, sizeof what, "dropout \"%s\", p = %g: the stateless mask of both directions, [%d,%d,%d,%d]",
             op->name, p, g->net->batch, op->c, op->h, op->w);
    char fname[160], bname[160];
    snprintf(fname, sizeof fname, "%s_forward", op->ident);
    snprintf(bname, sizeof bname, "%s_backward", op->ident);
    declare(g, fname, "float *out, const float *in, uint64_t seed, int train");
    declare(g, bname, "float *din, const float *dout, uint64_t seed");
    if (!g->out) return;
    if (p <= 0) {   /* nothing is ever dropped: both directions are copies (or nothing, in place) */
        fprintf(g->out,
                "/* dropout \"%s\" with p = 0: the identity */\n"
                "extern \"C\" void fused_%s(float *out, const float *in, uint64_t seed, int train) {\n"
                "    (void)seed, (void)train;\n"
                "    if (out != in) rt_cuda_copy_d2d(out, in, sizeof(float) * %ldL);\n}\n\n"
                "extern \"C\" void fused_%s(float *din, const float *dout, uint64_t seed) {\n"
                "    (void)seed;\n"
                "    if (din != dout) rt_cuda_copy_d2d(din, dout, sizeof(float) * %ldL);\n}\n\n",
                op->name, fname, total, bname, total);
        return;
    }
    /* The mask kernel's launcher is internal to this file; the two below are the interface. */
    ew_kernel k = { mname, "float *out, const float *in, uint64_t seed", "out, in, seed", { "in" }, 1, body,
                    { "out" }, 1, total, what };
    emit_ew(g->out, &k);
    fprintf(g->out,
            "/* dropout \"%s\": the identity in evaluation (train = 0) */\n"
            "extern \"C\" void fused_%s(float *out, const float *in, uint64_t seed, int train) {\n"
            "    if (train) fused_%s(out, in, seed);\n"
            "    else if (out != in) rt_cuda_copy_d2d(out, in, sizeof(float) * %ldL);\n}\n\n"
            "extern \"C\" void fused_%s(float *din, const float *dout, uint64_t seed) {\n"
            "    fused_%s(din, dout, seed);\n}\n\n",
            op->name, fname, mname, total, bname, mname);
}

static void generate(kgen *g) {
    const ir_net *net = g->net;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        switch (op->kind) {
        case IR_CONV: case IR_LINEAR: if (op->b_off >= 0) gen_bias(g, i); break;
        case IR_BN: gen_bn_apply(g, i); break;
        case IR_ADD: gen_add(g, i); break;
        case IR_LAYER_SCALE: gen_layer_scale(g, i); break;
        case IR_DROPOUT: gen_dropout(g, i); break;
        default: break;
        }
    }
}

void emit_cuda_kernels_header(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info) {
    fprintf(out, "/* Fused kernels of spec \"%s\" (kernels.cu), generated by trainc %s. DO NOT EDIT.\n"
                 " * Launched on the CUDA context's stream; all pointers are device memory. */\n"
                 "#ifndef TRAINC_KERNELS_H\n#define TRAINC_KERNELS_H\n#include <stdint.h>\n\n"
                 "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
            info->base->name, info->base->compiler_version);
    kgen g = { NULL, out, net, fp };
    generate(&g);
    fprintf(out, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

static void emit_kernels_all(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info) {
    fprintf(out, "/* Fused elementwise kernels of spec \"%s\", generated by trainc %s. DO NOT EDIT.\n"
                 " * spec sha256: %s\n"
                 " * Shapes are constants of this net; model.c calls the fused_* launchers. */\n"
                 "#include \"rt_cuda_kernels.cuh\"\n#include \"kernels.h\"\n\n",
            info->base->name, info->base->compiler_version, info->base->spec_hash);
    kgen g = { out, NULL, net, fp };
    generate(&g);
}

/* Through the float-literal fixer, like model.c: %g writes 2.0 as "2", and "2f" is not C++. */
void emit_cuda_kernels(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return;
    emit_kernels_all(mem, net, fp, info);
    fclose(mem);
    write_with_float_literals_fixed(out, buf);
    free(buf);
}
