/* Environment switches back to an op's previous kernels (TRAINC_CUDA_BN=old, TRAINC_CUDA_POOL=old,
 * TRAINC_CUDA_BIAS=old), kept so that one GPU lease can time both in the same build. */
#include "cuda_common.cuh"

int rt_cuda_env_old(rt_env_id id, int *cached) {
    if (*cached < 0) *cached = rt_env_is(id, "old");
    return *cached;
}
