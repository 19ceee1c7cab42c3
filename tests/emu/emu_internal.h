/* Shared inside the CUDA emulator (not seen by the code under test): failure reports, the
 * schedule, grid execution, stream work and device-memory checks. */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H
#include <stddef.h>
#include <functional>
#include "emu_cuda.h"

namespace emu {
typedef launch_cfg launch_desc;
/* Prints "emu: error: ..." and aborts: what a GPU would hang on, fault on or compute wrongly. */
[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* EMU_SCHEDULE: 0 streams, blocks and threads in order; 1 in reverse order. */
int schedule(void);
void run_grid(const launch_desc &d, const std::function<void()> &fn);
/* Operations on one communicator run in the order they were issued (NCCL's rule). */
struct ordered {
    long issued = 0, executed = 0;
};
/* Enqueues library work (cuDNN, cuBLASLt, NCCL) on a stream, or records it in the stream's
 * capture; it runs when the stream reaches it. With `finished`, fn only starts the work, which
 * stays in flight at the stream's head until finished() returns true (NCCL waiting for peers). */
void enqueue(cudaStream_t s, const char *what, std::function<void()> fn, ordered *order = nullptr,
             std::function<bool()> finished = nullptr);
/* FP32 -> TF32 (10 mantissa bits, rounded to nearest): what tensor cores read in TF32 mode. */
inline double tf32(double v) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & ~0x1fffu;
    memcpy(&f, &b, 4);
    return f;
}
/* The convolutions this process has run so far, as a sum of one hash per call of (direction,
 * algorithm, TF32 or not): the emulated NCCL compares it between ranks at every collective,
 * so ranks that run different cuDNN algorithms (and so compute differently) are stopped. */
extern uint64_t cudnn_digest;
/* The stream a cuDNN handle runs its work on (emu_cudnn.cpp; the graph API's calls use it). */
cudaStream_t cudnn_stream(struct cudnnContext *h);
/* This process's MPI rank from the launcher's environment (0 without one). */
int launcher_rank(void);
/* A library allocating device memory of its own (cuDNN's legacy algorithm search): memory no
 * start-up memory check of the trainer counts, so the emulator stops there, naming the call. */
[[noreturn]] void library_alloc(const char *what, size_t bytes);
/* The device allocation holding p: its base and size; false for host memory. */
bool device_range(const void *p, uintptr_t *base, size_t *size);
/* Device-memory traffic (emu_traffic.cpp, EMU_TRAFFIC=FILE): a piece of work begins (kind:
 * "kernel", a library call's name, a copy), a kernel names itself and its geometry, bytes are
 * touched (counted once per piece of work), the piece ends (its line is written); marks are
 * lines of their own (the profiler's start and stop). */
bool traffic_enabled(void);
void traffic_begin(const char *kind);
void traffic_kernel(const launch_cfg &d);
void traffic_touch(const void *p, size_t bytes, bool write);
void traffic_end(void);
void traffic_mark(const char *line);
void traffic_forget(const void *base);
bool traffic_recording(void);
/* Dies unless [p, p + bytes) lies inside one device allocation. */
void check_device(const void *p, size_t bytes, const char *what);
}   // namespace emu
#endif
