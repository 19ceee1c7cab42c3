/* Sema of the token layers (ViT, Swin): tokens (positions to a token sequence, a view),
 * learned (a tensor of parameters shared by every image), select_token, attention (multi-head
 * self-attention with its projections) and concat along tokens. A sequence of T tokens of C
 * features is the shape [C, T, 1] (net.h). MACs count as torchvision's published operation
 * counts do: every product of a linear map, so attention's in- and out-projections per token
 * and its two T x T products (Q K^T and the weighted sum of V). */
#include "sema_internal.h"
#include "sema_filler.h"
#include "sema_value.h"

#include <stdio.h>

static net_shape shape_of(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? net->input : net->layers[idx].out;
}

static const char *name_of(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? "data" : net->layers[idx].name;
}

/* A token sequence has W = 1; anything else is named with what to put before the layer. */
static int need_tokens(diag_ctx *diag, const net_desc *net, const net_layer *L, int k) {
    net_shape s = shape_of(net, L->inputs[k]);
    if (s.w == 1) return 0;
    char hint[200];
    snprintf(hint, sizeof hint, "'%s' is [%lld, %lld, %lld]; a tokens layer makes [C, H*W, 1] of it",
             name_of(net, L->inputs[k]), (long long)s.c, (long long)s.h, (long long)s.w);
    diag_error(diag, L->loc, hint, "%s layer '%s' needs a token sequence [C, T, 1]", net_kind_name(L->kind),
               L->name);
    return 1;
}

static int checked_mul(diag_ctx *diag, const net_layer *L, int64_t a, int64_t b, int64_t *r) {
    if (!__builtin_mul_overflow(a, b, r)) return 0;
    diag_error(diag, L->loc, "reduce the channels or the tokens", "sizes of layer '%s' overflow 64 bits", L->name);
    return 1;
}

/* Swin's windowed attention over [C, H, W]: per window of N = window^2 positions the global
 * attention's products, plus a (2 window - 1)^2 x heads relative-position bias table. */
static int infer_window(diag_ctx *diag, net_layer *L, const ast_node *msg) {
    int64_t w = L->token.window, c = L->in.c, hw = L->in.h * L->in.w;
    L->token.shift = sv_int(msg, SM_ATTENTION, "shift");
    if (L->in.h % w || L->in.w % w) {
        char hint[160];
        snprintf(hint, sizeof hint, "the input is %lldx%lld; torchvision pads it to a multiple of the window, "
                 "which trainc does not", (long long)L->in.h, (long long)L->in.w);
        diag_error(diag, sv_loc(msg, SM_ATTENTION, "window"), hint,
                   "attention layer '%s': window %lld does not divide the input's height and width", L->name,
                   (long long)w);
        return 1;
    }
    if (L->token.shift >= w) {
        diag_error(diag, sv_loc(msg, SM_ATTENTION, "shift"), "torchvision shifts by window / 2",
                   "attention layer '%s': shift %lld is not below the window %lld", L->name,
                   (long long)L->token.shift, (long long)w);
        return 1;
    }
    int64_t cc, proj, quad, table = (2 * w - 1) * (2 * w - 1);
    if (checked_mul(diag, L, c, c, &cc) || checked_mul(diag, L, cc, 4, &L->params) ||
        checked_mul(diag, L, L->params, hw, &proj) || checked_mul(diag, L, hw, w * w * 2 * c, &quad))
        return 1;
    L->params += 4 * c + table * L->token.heads;
    L->macs = proj + quad;
    return 0;
}

static int infer_attention(diag_ctx *diag, const net_desc *net, net_layer *L, const ast_node *msg) {
    L->token.heads = sv_int(msg, SM_ATTENTION, "heads");
    L->token.window = sv_int(msg, SM_ATTENTION, "window");
    if (L->token.window == 0 && sv_has(msg, SM_ATTENTION, "shift")) {
        diag_error(diag, sv_loc(msg, SM_ATTENTION, "shift"), "give a window, or remove shift",
                   "attention layer '%s': a shift without a window", L->name);
        return 1;
    }
    if (L->in.c % L->token.heads == 0 && L->token.window > 0) return infer_window(diag, L, msg);
    if (L->token.window == 0 && need_tokens(diag, net, L, 0)) return 1;
    int64_t c = L->in.c, t = L->in.h;
    if (c % L->token.heads) {
        diag_error(diag, sv_loc(msg, SM_ATTENTION, "heads"), "heads must divide the channels",
                   "attention layer '%s': %lld channels do not split into %lld heads", L->name, (long long)c,
                   (long long)L->token.heads);
        return 1;
    }
    int64_t cc, proj, tt, quad;
    /* in_proj [3C, C] + [3C] and out_proj [C, C] + [C] */
    if (checked_mul(diag, L, c, c, &cc) || checked_mul(diag, L, cc, 4, &L->params) ||
        checked_mul(diag, L, L->params, t, &proj) || checked_mul(diag, L, t, t, &tt) ||
        checked_mul(diag, L, tt, 2 * c, &quad))
        return 1;
    L->params += 4 * c;
    L->macs = proj + quad;
    return 0;
}

static int infer_learned(diag_ctx *diag, net_layer *L, const ast_node *msg) {
    const ast_node *s = sv_get(msg, SM_LEARNED, "shape");
    if (!s || s->kind != AST_LIST || s->n_kids != 3) return 1;   /* the schema checked it */
    L->out = (net_shape){s->kids[0]->ival, s->kids[1]->ival, s->kids[2]->ival};
    if (sema_read_filler(diag, msg, SM_LEARNED, "weight_filler", &L->token.filler)) return 1;
    if (L->token.filler.kind == NET_FILL_TORCH) L->token.filler = (net_filler){ .kind = NET_FILL_CONSTANT };
    if (L->token.filler.kind == NET_FILL_XAVIER || L->token.filler.kind == NET_FILL_MSRA) {
        diag_error(diag, sv_loc(msg, SM_LEARNED, "weight_filler"), "use CONSTANT, UNIFORM or GAUSSIAN",
                   "learned layer '%s': XAVIER and MSRA need fans, which a learned tensor has not", L->name);
        return 1;
    }
    int64_t hw;
    return checked_mul(diag, L, L->out.h, L->out.w, &hw) || checked_mul(diag, L, L->out.c, hw, &L->params);
}

static int infer_concat(diag_ctx *diag, const net_desc *net, net_layer *L) {
    L->channel.tokens = true;
    L->out = L->in;
    for (int k = 0; k < L->n_inputs; k++) {
        if (need_tokens(diag, net, L, k)) return 1;
        net_shape s = shape_of(net, L->inputs[k]);
        if (s.c != L->in.c) {
            char hint[240];
            snprintf(hint, sizeof hint, "'%s' has tokens of %lld features but '%s' of %lld",
                     name_of(net, L->inputs[0]), (long long)L->in.c, name_of(net, L->inputs[k]), (long long)s.c);
            diag_error(diag, L->loc, hint, "inputs of concat layer '%s' (axis: TOKENS) differ in channels", L->name);
            return 1;
        }
        if (k) L->out.h += s.h;
    }
    return 0;
}

int sema_infer_token_op(diag_ctx *diag, const net_desc *net, net_layer *L, const ast_node *msg) {
    L->out = L->in;
    switch (L->kind) {
    case NET_TOKENS: {
        int64_t t;
        if (checked_mul(diag, L, L->in.h, L->in.w, &t)) return 1;
        L->out = (net_shape){L->in.c, t, 1};
        return 0;
    }
    case NET_LEARNED: return infer_learned(diag, L, msg);
    case NET_SELECT_TOKEN:
        if (need_tokens(diag, net, L, 0)) return 1;
        L->token.index = sv_int(msg, SM_SELECT_TOKEN, "index");
        if (L->token.index >= L->in.h) {
            char hint[120];
            snprintf(hint, sizeof hint, "the input has %lld tokens: take 0 to %lld", (long long)L->in.h,
                     (long long)L->in.h - 1);
            diag_error(diag, sv_loc(msg, SM_SELECT_TOKEN, "index"), hint, "select_token layer '%s': no token %lld",
                       L->name, (long long)L->token.index);
            return 1;
        }
        L->out = (net_shape){L->in.c, 1, 1};
        return 0;
    case NET_ATTENTION: return infer_attention(diag, net, L, msg);
    case NET_SPACE_TO_DEPTH: {
        int64_t b = L->token.index = sv_int(msg, SM_SPACE_TO_DEPTH, "block");
        if (L->in.h % b || L->in.w % b) {
            char hint[160];
            snprintf(hint, sizeof hint, "the input is %lldx%lld; pad or crop it to a multiple of %lld first",
                     (long long)L->in.h, (long long)L->in.w, (long long)b);
            diag_error(diag, sv_loc(msg, SM_SPACE_TO_DEPTH, "block"), hint,
                       "space_to_depth layer '%s': block %lld does not divide the input's height and width", L->name,
                       (long long)b);
            return 1;
        }
        L->out = (net_shape){L->in.c * b * b, L->in.h / b, L->in.w / b};
        return 0;
    }
    case NET_CONCAT: return infer_concat(diag, net, L);
    default:
        return 1;
    }
}
