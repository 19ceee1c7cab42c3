/* trainc export CKPT --spec SPEC [--format torch|safetensors|onnx|caffemodel] -o FILE [--backend cpu|cuda] [--ema]:
 * a checkpoint's weights and batch-norm statistics as a safetensors file, one tensor per
 * state_dict key. The spec says each tensor's name, shape and offset: it is lowered as
 * `trainc build` lowers it (CPU and CUDA lay parameters out differently; the checkpoint's
 * section sizes tell which wrote it, --backend when both would fit).
 * --format torch (the default) uses torchvision's keys: a layer's own name for the nets
 * whose names are torchvision's (specs/models' ResNets, VGG, AlexNet, the examples), and
 * ConvNeXt's block names mapped to torchvision's features.S.I.block.K / classifier.K, its
 * 1x1 convolutions written as the Linear layers torchvision has there. Batch norm adds
 * running_mean, running_var and num_batches_tracked (int64, a scalar: the checkpoint's
 * step, one training forward per step). --format safetensors keeps trainc's layer names;
 * --format caffemodel writes Caffe's weight file (export_caffemodel.c). */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "rt_checkpoint.h"
#include "sema.h"
#include "torch_names.h"

typedef struct {
    const char *ckpt, *spec, *out;
    int torch, onnx, caffemodel, ema, backend;   /* backend: -1 either (by the checkpoint's sizes) */
    int pt;                    /* -o FILE.pt / .pth: torch.save's zip of pickles, not safetensors */
} export_args;

static int usage(const char *fmt, const char *arg) {
    fputs("trainc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n  hint: run 'trainc export --help' for usage\n", stderr);
    return 2;
}

static int fail(const char *hint, const char *fmt, const char *a, const char *b) {
    fputs("trainc: error: ", stderr);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n  hint: %s\n", hint);
    return 1;
}

static int parse(export_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->torch = 1, a->backend = -1;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(o, "--ema")) a->ema = 1;
        else if (!strcmp(o, "-o") || !strcmp(o, "--spec") || !strcmp(o, "--format") || !strcmp(o, "--backend")) {
            if (!has_value) return usage("option '%s' needs a value", o);
            const char *v = argv[++i];
            if (!strcmp(o, "-o")) a->out = v;
            else if (!strcmp(o, "--spec")) a->spec = v;
            else if (!strcmp(o, "--format")) {
                if (!strcmp(v, "torch")) a->torch = 1;
                else if (!strcmp(v, "safetensors")) a->torch = 0;
                else if (!strcmp(v, "onnx")) a->onnx = 1;
                else if (!strcmp(v, "caffemodel")) a->caffemodel = 1;
                else return usage("unknown format '%s' (torch, safetensors, onnx or caffemodel)", v);
            } else if (!strcmp(v, "cpu")) a->backend = BACKEND_CPU;
            else if (!strcmp(v, "cuda")) a->backend = BACKEND_CUDA;
            else return usage("unknown backend '%s' (cpu or cuda)", v);
        } else if (o[0] == '-' && o[1]) return usage("unknown option '%s' for export", o);
        else if (a->ckpt) return usage("export takes one CKPT (extra '%s')", o);
        else a->ckpt = o;
    }
    if (!a->ckpt || !a->spec || !a->out) return usage("export needs CKPT, --spec SPEC and -o FILE%s", "");
    size_t n = strlen(a->out);
    a->pt = (n > 3 && !strcmp(a->out + n - 3, ".pt")) || (n > 4 && !strcmp(a->out + n - 4, ".pth"));
    if (a->onnx && a->pt) return usage("'%s': an ONNX model goes to FILE.onnx", a->out);
    if (a->caffemodel && a->pt) return usage("'%s': Caffe's weights go to FILE.caffemodel", a->out);
    return 0;
}

/* The state_dict of the lowered net over the loaded params and buffers. */
static int tensors_of(const ir_net *net, const float *params, const float *buffers, const int64_t *step, int torch,
                      export_tensor **out) {
    export_tensor *ts = calloc((size_t)net->n_ops * TORCH_MAX_PER_OP + 1, sizeof *ts);
    int n = 0;
    for (int i = net->n_ops - 1; i >= 0; i--) {   /* parameter offset order */
        torch_tensor tt[TORCH_MAX_PER_OP];
        int k = torch_tensors_of_op(&net->ops[i], torch, tt);
        for (int j = 0; j < k; j++) {
            export_tensor *t = &ts[n++];
            memcpy(t->name, tt[j].key, sizeof t->name);   /* both 256 bytes */
            t->ndim = tt[j].ndim;
            memcpy(t->shape, tt[j].shape, sizeof t->shape);
            if (tt[j].kind == TORCH_BATCHES) t->dtype = EXPORT_I64, t->data = step;
            else t->data = (tt[j].kind == TORCH_BUFFER ? buffers : params) + tt[j].offset;
        }
    }
    *out = ts;
    return n;
}

/* Loads params and buffers (or the EMA's) as laid out by schedule s; RT_E_MISMATCH when the
 * checkpoint's sizes are another layout's. */
static rt_status load_weights(const char *path, const char *hash, const ir_net *net, int ema, float **params,
                              float **buffers, int64_t *step, rt_err *err) {
    *params = calloc((size_t)(net->n_params ? net->n_params : 1), sizeof(float));
    *buffers = calloc((size_t)(net->n_buffers ? net->n_buffers : 1), sizeof(float));
    rt_ckpt_section secs[2] = {
        { ema ? "ema_params" : "params", *params, (size_t)net->n_params * sizeof(float) },
        { ema ? "ema_buffers" : "buffers", *buffers, (size_t)net->n_buffers * sizeof(float) },
    };
    int64_t epoch;
    return rt_ckpt_load(path, hash, step, &epoch, secs, net->n_buffers ? 2 : 1, err);
}

int export_main(int argc, char **argv) {
    export_args a;
    int rc = parse(&a, argc, argv);
    if (rc) return rc;
    diag_ctx diag;
    spec_doc doc;
    sema_result res;
    diag_init(&diag, stderr);
    rc = 1;
    if (sema_load(&doc, &res, &diag, a.spec)) goto done;
    rt_ckpt_header h;
    rt_err err;
    if (rt_ckpt_read_header(a.ckpt, &h, &err) != RT_OK) {
        fail("pass a checkpoint a trainer wrote (OUT/checkpoints/ckpt-<step>.bin)", "%s%s", err.msg, "");
        goto done;
    }
    if (strcmp(h.spec_hash, res.hash) != 0) {
        fprintf(stderr, "trainc: error: checkpoint %s was written by spec hash %.16s..., but %s has hash %.16s...\n"
                        "  hint: pass --spec the spec whose trainer wrote the checkpoint (`trainc show` prints a "
                        "spec's hash)\n", a.ckpt, h.spec_hash, a.spec, res.hash);
        goto done;
    }
    schedule s;
    float *params = NULL, *buffers = NULL;
    int64_t step = 0;
    int found = 0, layout = BACKEND_CPU;
    for (int b = BACKEND_CPU; b <= BACKEND_CUDA && !found; b++) {
        if (a.backend >= 0 && a.backend != b) continue;
        build_options opt = { .backend = (build_backend)b, .fuse = 1 };
        memset(&s, 0, sizeof s);
        if (lower(&s, &res, &opt, 0, a.spec)) {
            schedule_free(&s);
            continue;
        }
        rt_status st = load_weights(a.ckpt, res.hash, &s.net, a.ema, &params, &buffers, &step, &err);
        if (st == RT_OK) {
            found = 1, layout = b;
            break;
        }
        free(params), free(buffers);
        schedule_free(&s);
        if (st != RT_E_MISMATCH || strstr(err.msg, "has no section")) {
            fail(a.ema && strstr(err.msg, "has no section") ? "the spec keeps no EMA (solver.ema); export without --ema"
                                                            : "pass a whole checkpoint (OUT/checkpoints/ckpt-<step>.bin)",
                 "%s%s", err.msg, "");
            goto done;
        }
    }
    if (!found) {
        fail("pass --spec the spec whose trainer wrote it (and --backend if you built it for one)",
             "the parameters in %s are laid out neither as the CPU nor as the CUDA trainer of %s lays them out", a.ckpt,
             a.spec);
        goto done;
    }
    if (a.onnx) {
        char errbuf[512], doc[256];
        snprintf(doc, sizeof doc, "trainc export of %s, step %lld, spec hash %s%s", a.ckpt, (long long)step, res.hash,
                 a.ema ? ", EMA weights" : "");
        int n_written = 0;
        if (export_write_onnx(a.out, &s.net, params, buffers, "trainc", doc, &n_written, errbuf, sizeof errbuf))
            fail("export the net as safetensors (--format torch) instead", "%s%s", errbuf, "");
        else
            printf("%s: ONNX graph of %d ops (opset 13%s), step %lld%s -> %s\n", a.ckpt, n_written,
                   n_written < s.net.n_ops ? ", auxiliary heads' branches left out" : "", (long long)step,
                   a.ema ? ", EMA weights" : "", a.out), rc = 0;
        free(params), free(buffers);
        schedule_free(&s);
        goto done;
    }
    if (a.caffemodel) {
        char errbuf[512];
        int n_layers = 0;
        const char *name = NULL;
        for (int i = 0; res.root && i < res.root->n_kids; i++)   /* the spec's name, Caffe's net name */
            if (res.root->kids[i]->kind == AST_FIELD && !strcmp(res.root->kids[i]->text, "name") &&
                res.root->kids[i]->a && res.root->kids[i]->a->kind == AST_STRING)
                name = res.root->kids[i]->a->text;
        if (export_write_caffemodel(a.out, name ? name : "trainc", &s.net, res.root, params, buffers, &n_layers, errbuf,
                                    sizeof errbuf))
            fail("export the weights as safetensors (--format torch) instead, or choose a writable -o path", "%s%s",
                 errbuf, "");
        else
            printf("%s: %d Caffe layers, step %lld, %s trainer's layout%s -> %s\n", a.ckpt, n_layers, (long long)step,
                   layout == BACKEND_CUDA ? "the CUDA" : "the CPU", a.ema ? ", EMA weights" : "", a.out), rc = 0;
        free(params), free(buffers);
        schedule_free(&s);
        goto done;
    }
    export_tensor *ts;
    int n = tensors_of(&s.net, params, buffers, &step, a.torch, &ts);
    char step_text[32], errbuf[512];
    snprintf(step_text, sizeof step_text, "%lld", (long long)step);
    const char *meta[] = { "format", "pt", "trainc_spec_hash", res.hash, "trainc_step", step_text,
                           "trainc_weights", a.ema ? "ema" : "model" };
    if (a.pt ? export_write_torch_pt(a.out, ts, n, errbuf, sizeof errbuf)
             : export_write_safetensors(a.out, ts, n, meta, 4, errbuf, sizeof errbuf)) {
        fail("choose a writable -o path", "%s%s", errbuf, "");
    } else {
        printf("%s: %d tensors (%s names), step %lld, %s trainer's layout%s -> %s\n", a.ckpt, n,
               a.torch ? "torchvision" : "trainc", (long long)step, layout == BACKEND_CUDA ? "the CUDA" : "the CPU",
               a.ema ? ", EMA weights" : "", a.out);
        rc = 0;
    }
    free(ts), free(params), free(buffers);
    schedule_free(&s);
done:
    sema_result_free(&res);
    spec_doc_free(&doc);
    return rc;
}
