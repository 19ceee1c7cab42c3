/* cuDNN's fused scaled-dot-product attention in the emulator: the reference that the graph
 * API's SDPA forward and backward operations (emu_cudnn_graph.cpp) run, and the support
 * surface their one emulated engine takes (emu_cudnn_sdpa.cpp). Operands are [B, H, S, D]
 * tensors with strides, as the operations' tensor descriptors give them. */
#ifndef EMU_SDPA_H
#define EMU_SDPA_H
#include <stddef.h>
#include <stdint.h>
#include <cudnn.h>

namespace emu {
enum { SDPA_Q, SDPA_K, SDPA_V, SDPA_O, SDPA_STATS, SDPA_SCALE, SDPA_DO, SDPA_DQ, SDPA_DK, SDPA_DV, SDPA_N };
struct sdpa_tensor {
    bool set;
    cudnnDataType_t dt;
    int64_t dims[4], strides[4], uid;
    bool virt, by_value;
};
/* Why the engine does not take the operation (nullptr: it does); t has SDPA_N entries, the
 * backward's only with bwd. */
const char *sdpa_refusal(bool bwd, const sdpa_tensor *t);
/* The workspace its plan reports. */
size_t sdpa_workspace(bool bwd, const sdpa_tensor *t);
/* Runs the operation on host-visible device memory: p[i] the pointer of t[i] (p[SDPA_SCALE]
 * the by-value FP32 scale's host address). */
void sdpa_run(bool bwd, const sdpa_tensor *t, void *const *p);
/* The last byte + 1 of t from its pointer. */
size_t sdpa_bytes(const sdpa_tensor &t);
}   // namespace emu
#endif
