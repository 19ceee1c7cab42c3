/* A thread's V consecutive elements as one access (the channels-last kernels: V neighbouring
 * channels): up to 16 bytes, so 8 channels of BF16/FP16 or 4 of FP32 move in one load; V = 1
 * is the plain element (channel counts the vector does not divide). */
#ifndef RT_CUDA_ACT_VEC_CUH
#define RT_CUDA_ACT_VEC_CUH
#include "../cuda_common.cuh"

/* Elements per 16-byte vector of activations of type T. */
template <typename T> constexpr int act_vec_width() { return 16 / (int)sizeof(T); }

/* V elements of type E aligned to their size up to 16 bytes, so a copy is one 16-byte load
 * (two for 8 int32s) in registers that stay packed until used. */
template <typename E, int V> struct alignas(V * sizeof(E) >= 16 ? 16 : V * sizeof(E)) act_vec {
    E e[V];
};

template <typename E, int V> __device__ __forceinline__ act_vec<E, V> vec_load(const E *p) {
    return *reinterpret_cast<const act_vec<E, V> *>(p);
}
template <typename E, int V> __device__ __forceinline__ void vec_store(E *p, const act_vec<E, V> &v) {
    *reinterpret_cast<act_vec<E, V> *>(p) = v;
}

/* Whether every pointer suits a vector of up to 16 bytes (NULL does). */
static inline int vec_aligned(const void *a, const void *b = NULL, const void *c = NULL, const void *d = NULL) {
    return (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)d) & 15) == 0;
}

/* Runs the statements with V bound to the constant `width` when `vec`, else to 1 (inside
 * RT_ACT_DISPATCH, so width may name T). */
#define ACT_VEC_DISPATCH(vec, width, ...)                              \
    do {                                                               \
        if (vec) { constexpr int V = (width); __VA_ARGS__; }           \
        else { constexpr int V = 1; __VA_ARGS__; }                     \
    } while (0)
#endif
