/* Element type and symbol naming for type-generic CPU ops: float by default, double (names
 * suffixed _f64) when compiled with -DRT_REAL_DOUBLE for the central-difference gradient checks. */
#ifndef RT_REAL_H
#define RT_REAL_H
#include <math.h>

#ifdef RT_REAL_DOUBLE
typedef double real_t;
/* Both precisions are linked into one test binary, so every exported op needs its own name. */
#define RT_FN(name) name##_f64
#define rt_sqrt sqrt
#define rt_exp  exp
#define rt_log  log
#define rt_pow  pow
#define rt_erf  erf
#define rt_fabs fabs
#define rt_log1p log1p
#else
typedef float real_t;
#define RT_FN(name) name
#define rt_sqrt sqrtf
#define rt_exp  expf
#define rt_log  logf
#define rt_pow  powf
#define rt_erf  erff
#define rt_fabs fabsf
#define rt_log1p log1pf
#endif

#endif
