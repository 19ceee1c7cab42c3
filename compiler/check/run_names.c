/* The spec's spelling of each run_config enum value: the one table sema reads with and show
 * prints with, so an enum value never travels as a string past sema. */
#include "run_config.h"

const char *const run_compute_names[RUN_BF16 + 1] = {
    [RUN_FP32] = "FP32", [RUN_TF32] = "TF32", [RUN_FP16] = "FP16", [RUN_BF16] = "BF16",
};
const char *const run_loss_scale_names[RUN_LOSS_SCALE_DYNAMIC + 1] = {
    [RUN_LOSS_SCALE_NONE] = "NONE", [RUN_LOSS_SCALE_STATIC] = "STATIC",
    [RUN_LOSS_SCALE_DYNAMIC] = "DYNAMIC",
};
const char *const run_lr_scaling_names[RT_LR_SCALE_SQRT + 1] = {
    [RT_LR_SCALE_NONE] = "NONE", [RT_LR_SCALE_LINEAR] = "LINEAR", [RT_LR_SCALE_SQRT] = "SQRT",
};
const char *const run_warmup_kind_names[RT_WARMUP_QUADRATIC + 1] = {
    [RT_WARMUP_LINEAR] = "LINEAR", [RT_WARMUP_CONSTANT] = "CONSTANT", [RT_WARMUP_QUADRATIC] = "QUADRATIC",
};
const char *const run_loss_kind_names[RUN_LOSS_BCE + 1] = {
    [RUN_LOSS_SOFTMAX_CE] = "SOFTMAX_CE", [RUN_LOSS_BCE] = "BCE",
};
