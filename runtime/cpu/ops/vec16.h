/* 16-lane vectors of real_t for the CPU ops that work 16 values at a time (the Winograd
 * tile transforms, 2x2 max pooling): GCC's generic vectors, which keep the code portable
 * to any -march and to double; lanes are picked apart with two-vector shuffles
 * (vpermt2ps on AVX-512). rsel holds the lane masks of comparisons and the shuffle indices. */
#ifndef RT_OPS_VEC16_H
#define RT_OPS_VEC16_H
#include "rt_real.h"

typedef real_t rvec __attribute__((vector_size(16 * sizeof(real_t))));
#ifdef RT_REAL_DOUBLE
typedef long long rsel __attribute__((vector_size(16 * sizeof(long long))));
#else
typedef int rsel __attribute__((vector_size(16 * sizeof(int))));
#endif
#endif
