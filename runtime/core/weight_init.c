/* Weight initialization helpers matching He et al. and PyTorch's layer defaults. */
#include <math.h>
#include "rt_core.h"
#include "rt_rng.h"

void rt_init_const(float *w, long n, float value) {
    for (long i = 0; i < n; i++) w[i] = value;
}

void rt_init_uniform(float *w, long n, float lo, float hi, rt_rng *r) {
    for (long i = 0; i < n; i++) w[i] = rt_rng_uniform_range(r, lo, hi);
}

void rt_init_normal(float *w, long n, float mean, float std, rt_rng *r) {
    for (long i = 0; i < n; i++) w[i] = mean + std * rt_rng_normal(r);
}

static void check_fan(long fan, const char *who) {
    if (fan <= 0) rt_die("%s: fan must be positive, got %ld", who, fan);
}

void rt_init_kaiming_normal(float *w, long n, long fan, rt_rng *r) {
    check_fan(fan, "rt_init_kaiming_normal");
    rt_init_normal(w, n, 0.0f, (float)(sqrt(2.0) / sqrt((double)fan)), r);
}

void rt_init_kaiming_uniform(float *w, long n, long fan, double a, rt_rng *r) {
    check_fan(fan, "rt_init_kaiming_uniform");
    double gain = sqrt(2.0 / (1.0 + a * a));
    float bound = (float)(gain * sqrt(3.0 / (double)fan));
    rt_init_uniform(w, n, -bound, bound, r);
}

void rt_init_torch_default(float *weight, long n_weight, float *bias, long n_bias, long fan_in,
                           rt_rng *r) {
    check_fan(fan_in, "rt_init_torch_default");
    rt_init_kaiming_uniform(weight, n_weight, fan_in, sqrt(5.0), r);
    if (bias) {
        float bound = (float)(1.0 / sqrt((double)fan_in));
        rt_init_uniform(bias, n_bias, -bound, bound, r);
    }
}

void rt_init_torch_linear(float *weight, float *bias, long out_features, long in_features,
                          rt_rng *r) {
    rt_init_torch_default(weight, out_features * in_features, bias, out_features, in_features, r);
}

void rt_init_torch_conv(float *weight, float *bias, long out_ch, long in_ch, long kh, long kw,
                        rt_rng *r) {
    long fan_in = in_ch * kh * kw;
    rt_init_torch_default(weight, out_ch * fan_in, bias, out_ch, fan_in, r);
}
