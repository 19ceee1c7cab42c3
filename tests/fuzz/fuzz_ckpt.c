/* libFuzzer harness over the checkpoint reader (runtime/core/checkpoint_load.c): any byte
 * string given as a checkpoint must be refused with an error or read back whole, never crash,
 * leak, hang or read out of bounds. The expected sections mirror a small trainer's: the
 * resume state, parameters, optimizer state. Run by tests/fuzz/fuzz_long.sh and
 * tests/fuzz/fuzz_targets_test.sh. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input_file.h"
#include "rt_checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    rt_err err;
    rt_ckpt_header h;
    rt_ckpt_read_header(path, &h, &err);
    static uint8_t trainer[96], params[256], optimizer[256];
    rt_ckpt_section secs[] = { { "trainer", trainer, sizeof trainer }, { "params", params, sizeof params },
                               { "optimizer", optimizer, sizeof optimizer } };
    int64_t step, epoch;
    /* With and without the spec hash and the sections: the reader's two ways in. */
    rt_ckpt_load(path, "fuzz-spec-hash", &step, &epoch, secs, 3, &err);
    rt_ckpt_load(path, NULL, &step, &epoch, NULL, 0, &err);
    close(fd);
    return 0;
}
