/* The CUDA emulator's device-side language, force-included (-include) before every .cu file
 * the emulator compiles with the host compiler: the real CUDA headers for types and host
 * conversions, then threadIdx / blockIdx / blockDim / gridDim of the running fiber, the
 * block barrier, warp shuffles across 32 lanes, and the kernel launch that tests/emu/emu-nvcc
 * rewrites `k<<<grid, block, smem, stream>>>(args)` into: `k | emu::cfg(..., "k", ...) | emu::args(...)`,
 * which freezes the arguments (converted to the kernel's parameter types) and enqueues the
 * grid on its stream. `__shared__` variables are static: blocks run one after another;
 * arrays among them are shared_array (emu-nvcc), which checks for races between barriers. */
#ifndef EMU_CUDA_H
#define EMU_CUDA_H
#ifdef __cplusplus
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace emu {
/* One thread of the running block (a fiber). */
struct fiber;
struct thread_state {
    uint3 tid;
    int linear;   /* x + y·X + z·X·Y: the thread's number in the block */
    unsigned or_calls;   /* __syncthreads_or calls so far in this block */
};
extern thread_state *cur;                /* the fiber that runs now */
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;

void syncthreads(const char *file, int line);
/* __syncthreads_or: the barrier, and whether any thread of the block passed a non-zero pred. */
int syncthreads_or(int pred, const char *file, int line);
/* A warp shuffle of a 64-bit pattern: kind 0 down (arg = delta), 1 xor (arg = lane mask),
 * 2 idx (arg = source lane), 3 up (arg = delta). */
uint64_t shuffle(int kind, unsigned mask, uint64_t bits, int arg, int width, const char *file, int line);
template <typename T> T shfl(int kind, unsigned mask, T v, const char *file, int line, int arg, int width = 32) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffle of a type wider than 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    bits = shuffle(kind, mask, bits, arg, width, file, line);
    T out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

/* A kernel's __launch_bounds__(max_threads[, min_blocks]), checked by each of its threads
 * (tests/emu/emu-nvcc moves the qualifier there): a block larger than max_threads is a
 * launch the GPU refuses (cudaErrorLaunchOutOfResources); the emulator stops at it. */
void launch_bounds(const char *file, int line, int max_threads, int min_blocks = 0);

/* Shared memory with a race check. tests/emu/emu-nvcc rewrites each `__shared__ T name[D]...;`
 * array into a static shared_array<T, D...>, whose elements record, per barrier interval
 * (from one __syncthreads of the block to the next), which thread wrote them and which read
 * them: one thread writing an element that another thread wrote or read in the same
 * interval, or reading one another thread wrote, is a race (the GPU gives no order between
 * them), and the emulator stops with the array, the index, both threads and the stack. */
struct shared_meta {
    unsigned long interval;   /* the barrier interval the fields describe */
    int writer, reader;       /* linear thread ids, -1 none */
    bool many_readers;
};
struct shared_where {
    const char *name, *file;
    int line;
};
void shared_access(shared_meta &m, bool write, const shared_where &w, long index);
template <typename T> struct shared_ref {
    T *data;
    shared_meta *meta;
    const shared_where *w;
    long i;
    operator T() const {
        shared_access(meta[i], false, *w, i);
        return data[i];
    }
    shared_ref &operator=(T v) {
        shared_access(meta[i], true, *w, i);
        data[i] = v;
        return *this;
    }
    shared_ref &operator=(const shared_ref &o) { return *this = (T)o; }
    template <typename U> shared_ref &operator+=(U v) { return *this = (T)((T) * this + v); }
    template <typename U> shared_ref &operator-=(U v) { return *this = (T)((T) * this - v); }
    template <typename U> shared_ref &operator*=(U v) { return *this = (T)((T) * this * v); }
};
template <size_t... D> constexpr size_t extent_product() { return (D * ... * (size_t)1); }
void shared_index_error(const shared_where &w, long i, size_t n);
template <typename T, size_t N, size_t... Rest> struct shared_view {
    T *data;
    shared_meta *meta;
    const shared_where *w;
    long base;
    auto operator[](long i) const {
        if (i < 0 || (size_t)i >= N) shared_index_error(*w, i, N);
        if constexpr (sizeof...(Rest) == 0) return shared_ref<T>{ data, meta, w, base + i };
        else return shared_view<T, Rest...>{ data, meta, w, (base + i) * (long)extent_product<Rest...>() };
    }
};
template <typename T, size_t... D> struct shared_array {
    T data[extent_product<D...>()];
    shared_meta meta[extent_product<D...>()];
    shared_where w;
    shared_array(const char *name, const char *file, int line) : w{ name, file, line } {}
    auto operator[](long i) { return shared_view<T, D...>{ data, meta, &w, 0 }[i]; }
};

/* A launch: where it is written, its geometry and stream. */
struct launch_cfg {
    const char *file;
    int line;
    const char *name;   /* the kernel's name as launched (for EMU_TRAFFIC) */
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
};
inline launch_cfg cfg(const char *file, int line, const char *name, dim3 grid, dim3 block, size_t smem = 0,
                      cudaStream_t s = 0) {
    return launch_cfg{ file, line, name, grid, block, smem, s };
}
/* Enqueues a grid whose every thread calls body (the runtime, emu_runtime.cpp). */
void launch(const launch_cfg &c, std::function<void()> body);

template <typename... P> struct pending {
    void (*kernel)(P...);
    launch_cfg c;
};
template <typename... A> struct argpack {
    std::tuple<typename std::decay<A>::type...> values;
};
template <typename... A> argpack<A...> args(A &&...a) {
    return argpack<A...>{ std::tuple<typename std::decay<A>::type...>(std::forward<A>(a)...) };
}
template <typename... P> pending<P...> operator|(void (*k)(P...), launch_cfg c) { return pending<P...>{ k, c }; }
template <typename... P, typename... A, size_t... I>
std::tuple<typename std::decay<P>::type...> freeze(const std::tuple<A...> &a, std::index_sequence<I...>) {
    return std::tuple<typename std::decay<P>::type...>(static_cast<typename std::decay<P>::type>(std::get<I>(a))...);
}
/* The arguments are converted and copied now, as the driver copies them at the launch. */
template <typename... P, typename... A> void operator|(pending<P...> p, argpack<A...> a) {
    static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
    auto frozen = freeze<P...>(a.values, std::index_sequence_for<A...>{});
    void (*k)(P...) = p.kernel;
    launch(p.c, [k, frozen]() { std::apply(k, frozen); });
}
}   // namespace emu

/* CUDA's device min / max (any arithmetic pair, in their common type). */
template <typename A, typename B, typename = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
inline typename std::common_type<A, B>::type min(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return (C)a < (C)b ? (C)a : (C)b;
}
template <typename A, typename B, typename = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
inline typename std::common_type<A, B>::type max(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return (C)a > (C)b ? (C)a : (C)b;
}

/* Device atomics and fences: a block's fibers never run at once and blocks run one after
 * another, so a plain read-modify-write is atomic and every store is seen in order. */
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    unsigned old = *p;
    *p = old + v;
    return old;
}
inline void __threadfence(void) {}

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __syncthreads() emu::syncthreads(__FILE__, __LINE__)
#define __syncthreads_or(pred) emu::syncthreads_or((pred), __FILE__, __LINE__)
#define __shfl_down_sync(mask, v, ...) emu::shfl(0, (mask), (v), __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(mask, v, ...) emu::shfl(1, (mask), (v), __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_sync(mask, v, ...) emu::shfl(2, (mask), (v), __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(mask, v, ...) emu::shfl(3, (mask), (v), __FILE__, __LINE__, __VA_ARGS__)
#undef __shared__
#define __shared__ static
#endif
#endif
