/* Sema stage 3b: the evaluation resolution. When data.val's center_crop differs from
 * net.input_shape (torchvision's train crop 176 / eval 224), the net is checked again at the
 * crop: it must give the same parameters and the same output there, which holds for nets
 * that pool globally before the classifier and fails for those whose classifier sees the
 * feature map (flatten + linear), which get one error at the crop. */
#include "sema.h"
#include "sema_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shape errors at the eval input would name layers without saying why they were checked
 * again: they are collected here and summed up in one error at the crop instead. */
static int build_quietly(net_desc *out, const ast_node *net_msg, net_shape input, char *first, size_t cap) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 1;
    diag_ctx quiet;
    diag_init(&quiet, f);
    int errors = sema_build_net_at(out, &quiet, net_msg, &input);
    fclose(f);
    first[0] = 0;
    if (buf) {   /* the first line: "file:line:col: error: what" */
        char *at = strstr(buf, "error: ");
        snprintf(first, cap, "%s", at ? at + 7 : buf);
        char *nl = strchr(first, '\n');
        if (nl) *nl = 0;
    }
    free(buf);
    return errors;
}

int sema_build_eval_net(sema_result *res, diag_ctx *diag, const ast_node *root) {
    const run_config *run = &res->run;
    if (!run->eval_h) return 0;
    const ast_node *val = sv_msg(sv_msg(root, SM_SPEC, "data"), SM_DATA, "val");
    src_loc at = sv_loc(val, SM_VAL, "center_crop");
    const net_desc *net = &res->net;
    net_shape input = { net->input.c, run->eval_h, run->eval_w };
    char why[512];
    int errors = build_quietly(&res->eval_net, sv_msg(root, SM_SPEC, "net"), input, why, sizeof why);
    res->has_eval_net = true;
    const char *hint = "evaluation at another resolution needs a net whose output does not depend on the "
                       "input size (global pooling before the classifier); else crop at net.input_shape";
    if (errors) {
        diag_error(diag, at, hint, "the net cannot evaluate at %lldx%lld (center_crop), its training input is "
                   "%lldx%lld: %s", (long long)input.h, (long long)input.w, (long long)net->input.h,
                   (long long)net->input.w, why);
        return 1;
    }
    const net_desc *ev = &res->eval_net;
    net_shape a = net->layers[net->n_layers - 1].out, b = ev->layers[ev->n_layers - 1].out;
    if (ev->params != net->params || a.c != b.c || a.h != b.h || a.w != b.w) {
        diag_error(diag, at, hint, "the net's output depends on the input size: at %lldx%lld (center_crop) it is "
                   "[%lld, %lld, %lld] with %lld parameters, at the training input %lldx%lld [%lld, %lld, %lld] with "
                   "%lld", (long long)input.h, (long long)input.w, (long long)b.c, (long long)b.h, (long long)b.w,
                   (long long)ev->params, (long long)net->input.h, (long long)net->input.w, (long long)a.c,
                   (long long)a.h, (long long)a.w, (long long)net->params);
        return 1;
    }
    return 0;
}
