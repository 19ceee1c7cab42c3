/* Environment switches back to an op's previous kernels (TRAINC_CUDA_BN=old, TRAINC_CUDA_POOL=old,
 * TRAINC_CUDA_BIAS=old), kept so that one GPU lease can time both in the same build. */
#include <stdlib.h>
#include <string.h>
#include "cuda_common.cuh"

int rt_cuda_env_old(const char *name, int *cached) {
    if (*cached < 0) {
        const char *e = getenv(name);
        *cached = e && strcmp(e, "old") == 0;
    }
    return *cached;
}
