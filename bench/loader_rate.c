/* `make bench-loader`: what the data loader costs the host per batch of the GPU benchmark's
 * shape (224x224x3, batch 256, crop pad 8 + flip), filling normalized floats (the CPU trainer)
 * and raw bytes (the CUDA trainer), on one thread without prefetch; and a memcpy of one
 * batch of each, the copy the trainer no longer makes. Figures go in bench/RESULTS.md. */
#include <stdio.h>
#include <string.h>
#include "rt_core.h"
#include "rt_data.h"

enum { BATCH = 256, C = 3, H = 224, W = 224, ROUNDS = 8 };

int main(void) {
    rt_dataset ds;
    rt_dataset_synthetic(&ds, 4 * BATCH, C, H, W, 1000, 1);
    for (int raw = 0; raw < 2; raw++) {
        rt_loader_config cfg;
        rt_loader_config_default(&cfg);
        cfg.global_batch = BATCH;
        cfg.crop_pad = 8;
        cfg.flip = 1;
        cfg.prefetch = 0;   /* time the filling itself, as the prefetch thread does it */
        cfg.raw_u8 = raw;
        rt_loader l;
        rt_loader_init(&l, &ds, &cfg, NULL);
        const void *x;
        const int32_t *y;
        rt_loader_next_view(&l, &x, &y);   /* warm-up: page faults, the permutation */
        double t0 = rt_time_s();
        for (int i = 0; i < ROUNDS; i++) rt_loader_next_view(&l, &x, &y);
        double fill = (rt_time_s() - t0) / ROUNDS;
        size_t bytes = (size_t)BATCH * rt_loader_sample_bytes(&l);
        unsigned char *copy = rt_alloc_aligned(bytes);
        t0 = rt_time_s();
        for (int i = 0; i < ROUNDS; i++) {
            memcpy(copy, x, bytes);
            __asm__ volatile("" : : "r"(copy) : "memory");   /* keep every copy */
        }
        double cp = (rt_time_s() - t0) / ROUNDS;
        printf("bench-loader: %-6s fill %.1f ms/batch (%.0f img/s), memcpy of the %.1f MB batch %.1f ms\n",
               raw ? "bytes" : "floats", 1e3 * fill, BATCH / fill, bytes / 1e6, 1e3 * cp);
        rt_free_aligned(copy);
        rt_loader_free(&l);
    }
    rt_dataset_free(&ds);
    return 0;
}
