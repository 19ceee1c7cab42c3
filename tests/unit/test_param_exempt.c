/* Which tensors escape weight decay: exempt_bn_bias (norms, biases, layer scales) against
 * exempt_norm (norm weights and biases only, torchvision's --norm-weight-decay 0), over the
 * tensor kinds the emitter writes (0 weight, RT_PARAM_BIAS, RT_PARAM_NORM). */
#include "rt_trainer.h"
#include "testlib.h"

int main(void) {
    const rt_param_tensor conv_w = { .name = "conv1.weight", .offset = 0, .count = 9 },
                          conv_b = { .name = "conv1.bias", .offset = 9, .count = 1, .no_decay = RT_PARAM_BIAS },
                          bn_w = { .name = "bn1.weight", .offset = 10, .count = 1, .no_decay = RT_PARAM_NORM },
                          bn_b = { .name = "bn1.bias", .offset = 11, .count = 1, .no_decay = RT_PARAM_NORM };
    const rt_param_tensor *all[4] = { &conv_w, &conv_b, &bn_w, &bn_b };
    static const int want[4][4] = {      /* [none, exempt_bn_bias, exempt_norm, both][tensor] */
        { 0, 0, 0, 0 }, { 0, 1, 1, 1 }, { 0, 0, 1, 1 }, { 0, 1, 1, 1 } };
    for (int mode = 0; mode < 4; mode++) {
        rt_run_config run = { .exempt_bn_bias = mode & 1, .exempt_norm = (mode >> 1) & 1 };
        for (int i = 0; i < 4; i++) {
            int got = rt_param_exempt(&run, all[i]);
            if (got != want[mode][i])
                fprintf(stderr, "FAIL exempt_bn_bias %d exempt_norm %d: %s exempt %d, want %d\n", run.exempt_bn_bias,
                        run.exempt_norm, all[i]->name, got, want[mode][i]);
            CHECK(got == want[mode][i]);
        }
    }
    return test_finish("test_param_exempt");
}
