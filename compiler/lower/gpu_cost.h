/* The CUDA trainer's step as device work, predicted from the lowered schedule alone (lower.h):
 * for every op, the kernels and library calls the generated code and the runtime launch, in
 * launch order, with the distinct device bytes each reads and writes (what the emulator's
 * EMU_TRAFFIC counts, tests/emu/emu_traffic.cpp) and its floating-point work; and their time
 * on a device at its bandwidth and peak, library calls at the measured rates of
 * compiler/lower/gpu_rates.def. Read by `trainc show --gpu-cost` and `make bench-gpu-model`. */
#ifndef TRAINC_GPU_COST_H
#define TRAINC_GPU_COST_H
#include "lower.h"

typedef enum {
    GK_KERNEL = 0,   /* our own kernel: time at bandwidth (and peak) */
    GK_CONV_FWD,     /* cuDNN convolution forward */
    GK_CONV_DGRAD,   /* cuDNN convolution data gradient */
    GK_CONV_WGRAD,   /* cuDNN convolution weight gradient */
    GK_GEMM,         /* cuBLASLt matmul */
    GK_BN_FINALIZE,  /* cuDNN's BN finalize graph (per-channel vectors only) */
    GK_CLASSES
} gpu_class;

typedef struct {
    char name[112];     /* the kernel's name as the emulator reports it, or the library call's */
    int op;             /* schedule op (-1: the loss, n_ops: after the backward) */
    int backward;
    gpu_class cls;
    double read, write; /* bytes per step */
    double flops;
    int bn_sized;       /* a pass over a batch-norm-sized tensor (counted in passes) */
    double rounds;      /* rounds of dependent loads on its critical path after its bytes:
                         * adding the per-channel partial sums (gpu_cost.c sums_rounds) */
} gpu_kernel;

typedef struct {
    int n, cap;
    gpu_kernel *k;
    int modeled;        /* 0: some op of the schedule has no model (named on stderr) */
} gpu_cost;

typedef struct {
    const char *name;
    double bandwidth;   /* bytes/s, the HBM's peak */
    double peak16;      /* dense BF16/FP16 tensor FLOP/s */
    double peak32;      /* FP32 (non-tensor) FLOP/s */
    double launch_s;    /* a kernel's fixed time inside a CUDA graph */
    double round_s;     /* one round of a serial loop's loads in flight (gpu_kernel.rounds) */
    double lib_scale;   /* the library rates measured on an H100, scaled to this device */
} gpu_device;

/* The device by name (h100, h200, a100), or NULL. */
const gpu_device *gpu_device_named(const char *name);
/* The step's device work in launch order (forward, loss, backward; the step graph the
 * runtime captures, which TRAINC_CUDA_PROFILE_STEP brackets). old_kernels: the batch-norm
 * kernels before the vectorized ones (TRAINC_CUDA_BN=old, the code the H100 measured). */
void gpu_cost_of(const schedule *s, int old_kernels, gpu_cost *out);
void gpu_cost_free(gpu_cost *c);
/* A kernel's modeled time in seconds on dev. */
double gpu_kernel_seconds(const gpu_kernel *k, const gpu_device *dev, int half);
/* The measured rate of a library class (FLOP/s on an H100), and its source line. */
double gpu_class_rate(gpu_class c, const char **source);
const char *gpu_class_name(gpu_class c);

#endif
