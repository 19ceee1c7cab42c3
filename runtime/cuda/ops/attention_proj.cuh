/* The projections around an attention core (attention.cu), which Swin's windowed attention
 * (window_attention.cu) and cuDNN's fused core (attention_sdpa.cu) share: x [N, C, T] channel-major in the activation type, qkv [N, T, 3C]
 * and the heads' outputs o [N, T, C] FP32, weights and their gradients FP32 as torch lays
 * them out (W_in [3C, C] then W_out [C, C]; b_in [3C] then b_out [C]). */
#pragma once

/* The core (attention.cu's kernels): o [N, T, C] and each row's log-sum-exp lse [N, heads, T]
 * from qkv; its backward, dqkv from dO and the forward's values. */
void attn_launch_core_forward(float *o, float *lse, const float *qkv, int n, int c, int t, int heads);
void attn_launch_core_backward(float *dqkv, const float *qkv, const float *o, const float *dO, const float *lse, int n,
                               int c, int t, int heads);
/* qkv = x^T W_in^T + b_in */
void attn_launch_in_proj(float *qkv, const void *x, const float *w, const float *b, int n, int c, int t);
/* out = W_out o^T + b_out */
void attn_launch_out_proj(void *out, const float *o, const float *wo, const float *bo, int n, int c, int t);
/* dO = dout^T W_out; dW_out, db_out (sums in a fixed order) */
void attn_launch_out_backward(float *dO, float *dwo, float *dbo, const void *dout, const float *o, const float *wo,
                              int n, int c, int t);
/* dW_in, db_in from dqkv; dx = W_in^T dqkv^T unless dx is NULL */
void attn_launch_in_backward(void *dx, float *dw, float *db, const float *dqkv, const void *x, const float *w, int n,
                             int c, int t);
