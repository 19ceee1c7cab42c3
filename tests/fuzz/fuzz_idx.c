/* libFuzzer harness over the IDX reader (runtime/data/idx.c): gzip or raw bytes given as an
 * images (idx3) or labels (idx1) file must be refused with an error or read whole, never
 * crash, leak or allocate what a damaged header claims. The first byte picks the kind. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_input_file.h"
#include "rt_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int dims_wanted = data[0] & 1 ? 3 : 1;
    char path[64];
    int fd = fuzz_input_file(data + 1, size - 1, path, sizeof path);
    rt_err err;
    uint8_t *out = NULL;
    long dims[3];
    if (rt_idx_read(path, dims_wanted, &out, dims, &err) == RT_OK) free(out);
    close(fd);
    return 0;
}
