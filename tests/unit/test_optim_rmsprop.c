/* RMSprop, both forms (rt_optim.h): torch's against torch.optim.RMSprop itself (values printed
 * by Debian's python3-torch 1.13 in float64, below), TF's against TF's RMSPropOptimizer update
 * written out in double; both against those double references over many steps with weight
 * decay, grad_scale folding, momentum or none; the dispatcher's state layout and names. */
#include <math.h>
#include <string.h>
#include "rt_optim.h"
#include "testlib.h"

/* torch.optim.RMSprop(lr=0.01, alpha=0.99, eps=1e-8, momentum, weight_decay) over these
 * three gradients from p0, in float64:
 *   p = torch.tensor(P0, requires_grad=True); opt = torch.optim.RMSprop([p], ...)
 *   for g in G: p.grad = torch.tensor(g); opt.step() */
static const double P0[5] = { 0.5, -1.0, 2.0, 0.1, -0.3 };
static const double G[3][5] = { { 0.2, -0.1, 0.4, -0.05, 0.0 }, { 0.1, 0.3, -0.2, 0.02, 0.5 },
                                { -0.3, 0.05, 0.1, 0.2, -0.4 } };
static const double TORCH_PLAIN[5] = { 0.435534904599, -1.01061764451, 1.92289092571, 0.0660782658492,
                                       -0.337339153817 };
static const double TORCH_MOM_WD[5] = { 0.205228949797, -0.853739768838, 1.68940346582, 0.13936684291,
                                        -0.152581823458 };

static void run_float(float *p, const rt_rmsprop_config *cfg, float wd, float *state) {
    rt_optim_config oc = { .kind = RT_OPTIM_RMSPROP, .rmsprop = *cfg };
    for (int k = 0; k < 3; k++) {
        float g[5];
        for (int i = 0; i < 5; i++) g[i] = (float)G[k][i];
        rt_optim_args a = { .lr = 0.01f, .weight_decay = wd, .grad_scale = 1.0f, .step = k };
        rt_optim_step(p, state, g, 5, false, &oc, &a);
    }
}

static void test_against_torch(void) {
    rt_rmsprop_config plain = { .alpha = 0.99, .eps = 1e-8 }, mom = { .alpha = 0.99, .eps = 1e-8, .momentum = 0.9f };
    float p[5], state[10] = { 0 };
    for (int i = 0; i < 5; i++) p[i] = (float)P0[i];
    run_float(p, &plain, 0.0f, state);
    for (int i = 0; i < 5; i++) CHECK_NEAR(p[i], TORCH_PLAIN[i], 2e-6);
    memset(state, 0, sizeof state);
    for (int i = 0; i < 5; i++) p[i] = (float)P0[i];
    run_float(p, &mom, 0.1f, state);
    for (int i = 0; i < 5; i++) CHECK_NEAR(p[i], TORCH_MOM_WD[i], 2e-6);
}

/* TF1's RMSPropOptimizer (training/rmsprop.py, ApplyRMSProp): ms starts at 1,
 *   ms = decay ms + (1 - decay) g^2;  mom = momentum mom + lr g / sqrt(ms + eps);  var -= mom
 * and torch's form, both in double, with coupled weight decay and the gradient scale. */
static void ref_step(double *p, double *ms, double *mom, const double *g, long n, double lr, double wd,
                     double scale, double alpha, double eps, double momentum, int tf, long step) {
    for (long i = 0; i < n; i++) {
        double d = g[i] * scale + wd * p[i];
        double prev = tf && step == 0 ? 1.0 : ms[i];
        ms[i] = alpha * prev + (1 - alpha) * d * d;
        double u = tf ? d / sqrt(ms[i] + eps) : d / (sqrt(ms[i]) + eps);
        if (momentum == 0) { p[i] -= lr * u; continue; }
        mom[i] = momentum * mom[i] + (tf ? lr * u : u);
        p[i] -= tf ? mom[i] : lr * mom[i];
    }
}

static unsigned long long rng = 88172645463325252ULL;
static double uniform(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static void test_many_steps(const char *name, double alpha, double eps, float momentum, int tf) {
    enum { N = 3000, STEPS = 40 };
    rt_optim_config oc = { .kind = RT_OPTIM_RMSPROP, .rmsprop = { alpha, eps, momentum, tf } };
    int per = rt_optim_state_per_param(&oc);
    CHECK(per == (momentum != 0 ? 2 : 1));
    float *p = calloc(N, sizeof *p), *st = calloc((size_t)per * N, sizeof *st), *g = calloc(N, sizeof *g);
    double *rp = calloc(N, sizeof *rp), *rms = calloc(N, sizeof *rms), *rmom = calloc(N, sizeof *rmom);
    double *rg = calloc(N, sizeof *rg);
    for (long i = 0; i < N; i++) rp[i] = uniform(), p[i] = (float)rp[i];
    for (long s = 0; s < STEPS; s++) {
        for (long i = 0; i < N; i++) g[i] = (float)(2 * uniform()), rg[i] = g[i];
        double lr = 0.01 * (1 + 0.5 * sin((double)s)), scale = 0.5;
        rt_optim_args a = { .lr = (float)lr, .weight_decay = 1e-2f, .grad_scale = (float)scale, .step = s };
        rt_optim_step(p, st, g, N, false, &oc, &a);
        ref_step(rp, rms, rmom, rg, N, (float)lr, (float)1e-2, (float)scale, alpha, eps, momentum, tf, s);
    }
    double worst = 0, worst_ms = 0;
    for (long i = 0; i < N; i++) {
        worst = fmax(worst, fabs(p[i] - rp[i]) / fmax(1, fabs(rp[i])));
        worst_ms = fmax(worst_ms, fabs(st[i] - rms[i]) / fmax(1e-3, fabs(rms[i])));
    }
    if (!(worst < 2e-5 && worst_ms < 2e-5)) {
        fprintf(stderr, "FAIL rmsprop %s: params off by %.3g, square_avg by %.3g (relative)\n", name, worst, worst_ms);
        test_failures++;
    }
    free(p); free(st); free(g); free(rp); free(rms); free(rmom); free(rg);
}

static void test_names(void) {
    CHECK(strcmp(rt_optim_kind_name(RT_OPTIM_RMSPROP), "rmsprop") == 0);
    CHECK(strcmp(rt_optim_state_name(RT_OPTIM_RMSPROP, 0), "square_avg") == 0);
    CHECK(strcmp(rt_optim_state_name(RT_OPTIM_RMSPROP, 1), "momentum_buffer") == 0);
    /* the TF form's first step: sq = alpha + (1 - alpha) g^2 from a zero state */
    rt_optim_config oc = { .kind = RT_OPTIM_RMSPROP, .rmsprop = { .alpha = 0.9, .eps = 1e-3, .tf = true } };
    float p = 1.0f, st = 0.0f, g = 2.0f;
    rt_optim_args a = { .lr = 0.1f, .grad_scale = 1.0f, .step = 0 };
    rt_optim_step(&p, &st, &g, 1, false, &oc, &a);
    CHECK_NEAR(st, 0.9 + 0.1 * 4, 1e-6);
    CHECK_NEAR(p, 1.0 - 0.1 * 2 / sqrt(1.3 + 1e-3), 1e-6);
}

int main(void) {
    test_against_torch();
    test_many_steps("torch", 0.99, 1e-8, 0.0f, 0);
    test_many_steps("torch, momentum", 0.99, 1e-8, 0.9f, 0);
    test_many_steps("TF", 0.9, 1e-3, 0.0f, 1);
    test_many_steps("TF, momentum", 0.9, 1e-3, 0.9f, 1);
    test_names();
    return test_finish("test_optim_rmsprop");
}
