/* libFuzzer harness over the torch.save reader (runtime/core/torch_pt.c, the zip, and
 * torch_pickle.c, the pickle machine): any byte string given as a .pth must be refused with an
 * error or read whole, its tensors read back, never crash, leak, hang or read out of bounds.
 * Run by tests/fuzz/fuzz_long.sh and tests/fuzz/fuzz_targets_test.sh. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input_file.h"
#include "rt_torch_pt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    rt_safetensors st;
    rt_err err;
    if (rt_torch_pt_open(&st, path, &err) == RT_OK) {
        static float out[4096];
        for (int i = 0; i < st.n; i++)
            if (rt_st_numel(&st.t[i]) <= 4096) rt_safetensors_read_f32(&st, &st.t[i], out, &err);
        rt_safetensors_close(&st);
    }
    close(fd);
    return 0;
}
