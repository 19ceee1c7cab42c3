/* Loader: batches independent of world size and rank layout, stateless augmentation,
 * seek/resume, prefetch = sync, views, raw bytes = floats through the table, channels-last
 * samples, eval partial batches, normalization; prints throughput. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rt_data.h"
#include "rt_rng.h"
#include "testlib.h"

enum { N = 1000, C = 2, H = 8, W = 8, B = 64, S = C * H * W };
static rt_dataset ds;

static void config(rt_loader_config *cfg, int rank, int world, int train, int prefetch) {
    rt_loader_config_default(cfg);
    cfg->global_batch = B;
    cfg->rank = rank;
    cfg->world = world;
    cfg->train = train;
    cfg->seed = 1234;
    cfg->crop_pad = 2;
    cfg->flip = 1;
    cfg->mean[0] = 0.25f; cfg->std[0] = 0.5f;
    cfg->mean[1] = 0.5f;  cfg->std[1] = 0.25f;
    cfg->prefetch = prefetch;
}

/* Global batch (epoch, step) assembled from `world` ranks, each with its own loader. */
static int global_batch(int world, int train, int64_t epoch, int64_t step, float *x, int32_t *y) {
    int total = 0;
    for (int r = 0; r < world; r++) {
        rt_loader_config cfg;
        rt_loader l;
        config(&cfg, r, world, train, 0);
        CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
        total += rt_loader_batch_at(&l, epoch, step, x + (size_t)total * S, y + total);
        rt_loader_free(&l);
    }
    return total;
}

static void check_layouts(void) {
    static float x1[B * S], x2[B * S], x4[B * S];
    static int32_t y1[B], y2[B], y4[B];
    for (int64_t epoch = 0; epoch < 3; epoch++)
        for (int64_t step = 0; step < 15; step += 7) {
            CHECK(global_batch(1, 1, epoch, step, x1, y1) == B);
            CHECK(global_batch(2, 1, epoch, step, x2, y2) == B);
            CHECK(global_batch(4, 1, epoch, step, x4, y4) == B);
            CHECK(memcmp(y1, y2, sizeof y1) == 0 && memcmp(y1, y4, sizeof y1) == 0);
            CHECK(memcmp(x1, x2, sizeof x1) == 0);   /* identical pixels, augmentation included */
            CHECK(memcmp(x1, x4, sizeof x1) == 0);
        }
    /* Different epochs: different order. */
    uint32_t *p0 = malloc(N * 4), *p1 = malloc(N * 4);
    rt_shuffle_permutation(p0, N, 1234, 0);
    rt_shuffle_permutation(p1, N, 1234, 1);
    CHECK(memcmp(p0, p1, N * 4) != 0);
    char *seen = calloc(N, 1);
    for (int i = 0; i < N; i++) if (p0[i] < N) seen[p0[i]]++;
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= seen[i] == 1;
    CHECK(ok);   /* a permutation: every sample exactly once */
    free(p0); free(p1); free(seen);
}

/* Records `steps` batches through rt_loader_next, starting from a seek (or from 0). */
static void record(int prefetch, int64_t epoch, int64_t step, int steps, float *x, int32_t *y) {
    rt_loader_config cfg;
    rt_loader l;
    config(&cfg, 1, 2, 1, prefetch);
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    if (epoch || step) rt_loader_seek(&l, epoch, step);
    int bpr = rt_loader_batch_per_rank(&l);
    for (int i = 0; i < steps; i++) CHECK(rt_loader_next(&l, x + (size_t)i * bpr * S, y + i * bpr) == bpr);
    rt_loader_free(&l);
}

static void check_resume_and_prefetch(void) {
    /* 15 steps per epoch (1000 / 64, last partial dropped); 40 steps span 3 epochs. */
    enum { STEPS = 40, BPR = B / 2 };
    float *xa = malloc(sizeof(float) * STEPS * BPR * S), *xb = malloc(sizeof(float) * STEPS * BPR * S);
    int32_t *ya = malloc(4 * STEPS * BPR), *yb = malloc(4 * STEPS * BPR);
    record(0, 0, 0, STEPS, xa, ya);
    record(1, 0, 0, STEPS, xb, yb);
    CHECK(memcmp(xa, xb, sizeof(float) * STEPS * BPR * S) == 0);   /* prefetch changes nothing */
    CHECK(memcmp(ya, yb, 4 * STEPS * BPR) == 0);
    /* Resume at global step 22 = epoch 1, step 7: the rest matches the uninterrupted run. */
    record(1, 1, 7, STEPS - 22, xb, yb);
    CHECK(memcmp(xa + (size_t)22 * BPR * S, xb, sizeof(float) * (STEPS - 22) * BPR * S) == 0);
    CHECK(memcmp(ya + 22 * BPR, yb, 4 * (STEPS - 22) * BPR) == 0);
    /* Seeking a running prefetching loader (after it has prepared batches) also works. */
    rt_loader_config cfg;
    rt_loader l;
    config(&cfg, 1, 2, 1, 1);
    rt_loader_init(&l, &ds, &cfg, NULL);
    rt_loader_next(&l, xb, yb);
    rt_loader_next(&l, xb, yb);
    rt_loader_seek(&l, 2, 0);
    rt_loader_next(&l, xb, yb);
    CHECK(memcmp(xa + (size_t)30 * BPR * S, xb, sizeof(float) * BPR * S) == 0);
    rt_loader_free(&l);
    free(xa); free(xb); free(ya); free(yb);
}

static void check_eval(void) {
    static float x[B * S], x2[B * S];
    static int32_t y[B], y2[B];
    rt_loader_config cfg;
    rt_loader l;
    config(&cfg, 0, 1, 0, 1);
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    CHECK(rt_loader_steps_per_epoch(&l) == 16);
    int seen = 0, last = 0;
    for (int s = 0; s < 16; s++) {
        last = rt_loader_next(&l, x, y);
        for (int i = 0; i < last; i++) CHECK(y[i] == ds.labels[seen + i]);   /* dataset order */
        seen += last;
    }
    CHECK(last == 40 && seen == N);   /* the partial batch is kept and its size reported */
    int zero_tail = 1;   /* and the rows past it are zeros, not the previous batch's */
    for (size_t i = (size_t)40 * S; i < (size_t)B * S; i++) zero_tail &= x[i] == 0.0f;
    for (int i = 40; i < B; i++) zero_tail &= y[i] == 0;
    CHECK(zero_tail);
    /* No augmentation: exact normalization of the stored bytes. */
    const uint8_t *img = ds.images + (size_t)(N - 1) * S;
    float want = ((float)img[S - 1] / 255.0f - 0.5f) / 0.25f;
    CHECK(x[(size_t)39 * S + S - 1] == want);
    CHECK(rt_loader_next(&l, x, y) == B);   /* and the next epoch starts over */
    CHECK(y[0] == ds.labels[0]);
    rt_loader_free(&l);
    /* Two ranks split the partial batch: 20 + 20, same samples as one rank. */
    CHECK(global_batch(1, 0, 0, 15, x, y) == 40);
    CHECK(global_batch(2, 0, 0, 15, x2, y2) == 40);
    CHECK(memcmp(x, x2, 40 * S * sizeof(float)) == 0);
}

/* Each augmented output must be the source shifted by (dy, dx) in [-2, 2], possibly
 * flipped, with normalized zeros where the shift uncovers padding. */
static void check_augment_semantics(void) {
    static float x[B * S];
    static int32_t y[B];
    rt_loader_config cfg;
    rt_loader l;
    config(&cfg, 0, 1, 1, 0);
    rt_loader_init(&l, &ds, &cfg, NULL);
    uint32_t *perm = malloc(N * 4);
    rt_shuffle_permutation(perm, N, cfg.seed, 0);
    rt_loader_batch_at(&l, 0, 0, x, y);
    int flipped = 0, shifted = 0;
    for (int i = 0; i < B; i++) {
        const uint8_t *src = ds.images + (size_t)perm[i] * S;
        CHECK(y[i] == ds.labels[perm[i]]);
        int match = 0;
        for (int f = 0; f < 2 && !match; f++)
            for (int dy = -2; dy <= 2 && !match; dy++)
                for (int dx = -2; dx <= 2 && !match; dx++) {
                    int ok = 1;
                    for (int c = 0; c < C && ok; c++)
                        for (int yy = 0; yy < H && ok; yy++)
                            for (int xx = 0; xx < W && ok; xx++) {
                                int sy = yy + dy, sx = (f ? W - 1 - xx : xx) + dx;
                                int v = (sy >= 0 && sy < H && sx >= 0 && sx < W) ? src[(c * H + sy) * W + sx] : 0;
                                float want = ((float)v / 255.0f - cfg.mean[c]) / cfg.std[c];
                                ok = fabsf(x[(size_t)i * S + (c * H + yy) * W + xx] - want) < 1e-6f;
                            }
                    if (ok) { match = 1; flipped += f; shifted += dx || dy; }
                }
        CHECK(match);
    }
    CHECK(flipped > 10 && flipped < 54);   /* p = 0.5 over 64 samples */
    CHECK(shifted > 40);                    /* 24 of 25 offsets shift */
    free(perm);
    rt_loader_free(&l);
}

static void check_errors(void) {
    rt_loader_config cfg;
    rt_loader l;
    rt_err e;
    config(&cfg, 0, 3, 1, 0);
    CHECK(rt_loader_init(&l, &ds, &cfg, &e) == RT_E_ARG && strstr(e.msg, "64 cannot be split evenly over 3"));
    config(&cfg, 2, 2, 1, 0);
    CHECK(rt_loader_init(&l, &ds, &cfg, &e) == RT_E_ARG && strstr(e.msg, "rank 2"));
    config(&cfg, 0, 1, 1, 0);
    cfg.global_batch = 2048;
    CHECK(rt_loader_init(&l, &ds, &cfg, &e) == RT_E_ARG && strstr(e.msg, "do not fill"));
}

/* Views hand out the loader's slots in turn, without a copy; each is what the copying
 * rt_loader_next of a loader without prefetch returns, also across a seek, and stays intact
 * while the consumer takes the next one (it may hold two). A raw-bytes
 * loader (the GPU trainer's) gives the same batches as bytes: through rt_normalize_lut they
 * are the float loader's values exactly. */
static void check_views_and_raw_bytes(void) {
    enum { BPR = B / 2 };
    static float want[BPR * S], got[BPR * S], prev_want[BPR * S];
    static int32_t want_y[BPR];
    float lut[C][256];
    rt_loader_config cfg;
    rt_loader sync, view, raw;
    config(&cfg, 1, 2, 1, 0);
    rt_loader_init(&sync, &ds, &cfg, NULL);
    config(&cfg, 1, 2, 1, 1);
    rt_loader_init(&view, &ds, &cfg, NULL);
    cfg.raw_u8 = 1;
    rt_loader_init(&raw, &ds, &cfg, NULL);
    CHECK(rt_loader_sample_bytes(&view) == S * sizeof(float) && rt_loader_sample_bytes(&raw) == S);
    rt_normalize_lut(cfg.mean, cfg.std, C, lut);
    const void *prev = NULL;
    int same_values = 1, same_bytes = 1, alternates = 1, prev_intact = 1;
    for (int i = 0; i < 34; i++) {   /* over an epoch boundary (15 steps) and a seek */
        if (i == 20) {
            rt_loader_seek(&sync, 2, 3);
            rt_loader_seek(&view, 2, 3);
            rt_loader_seek(&raw, 2, 3);
            prev = NULL;
        }
        const void *vx, *rx;
        const int32_t *vy, *ry;
        CHECK(rt_loader_next(&sync, want, want_y) == BPR);
        CHECK(rt_loader_next_view(&view, &vx, &vy) == BPR);
        CHECK(rt_loader_next_view(&raw, &rx, &ry) == BPR);
        if (prev) {
            alternates &= vx != prev;
            prev_intact &= memcmp(prev, prev_want, sizeof prev_want) == 0;   /* the held view */
        }
        prev = vx;
        memcpy(prev_want, want, sizeof want);
        same_values &= memcmp(vx, want, sizeof want) == 0 && memcmp(vy, want_y, sizeof want_y) == 0;
        const uint8_t *bytes = rx;
        for (int k = 0; k < BPR * S; k++) got[k] = lut[(k / (H * W)) % C][bytes[k]];
        same_bytes &= memcmp(got, want, sizeof want) == 0 && memcmp(ry, want_y, sizeof want_y) == 0;
    }
    CHECK(same_values);
    CHECK(alternates);
    CHECK(prev_intact);   /* the slot of the view before is not refilled under the consumer */
    CHECK(same_bytes);
    rt_loader_free(&sync);
    rt_loader_free(&view);
    rt_loader_free(&raw);
}

/* 28x28 at the rate a CPU trainer consumes, and one 224x224 RGB batch of bytes at the rate a
 * GPU trainer does: printed, not asserted (timings in tests are flaky). */
static void check_throughput(void) {
    rt_dataset big;
    rt_dataset_synthetic(&big, 12800, 1, 28, 28, 10, 5);
    rt_loader_config cfg;
    rt_loader_config_default(&cfg);
    cfg.global_batch = 256;
    cfg.crop_pad = 2;
    cfg.flip = 1;
    rt_loader l;
    rt_loader_init(&l, &big, &cfg, NULL);
    float *x = malloc(sizeof(float) * 256 * 784);
    int32_t y[256];
    double t0 = rt_time_s();
    long imgs = 0;
    for (int s = 0; s < 100; s++) imgs += rt_loader_next(&l, x, y);
    double rate = imgs / (rt_time_s() - t0);
    printf("loader throughput: %.0f img/s (28x28, crop+flip, floats)\n", rate);
    CHECK(imgs == 100 * 256);
    free(x);
    rt_loader_free(&l);
    rt_dataset_free(&big);
    rt_dataset_synthetic(&big, 512, 3, 224, 224, 10, 5);
    cfg.raw_u8 = 1;
    cfg.crop_pad = 8;
    cfg.prefetch = 0;   /* the filling itself, as the prefetch thread does it */
    rt_loader_init(&l, &big, &cfg, NULL);
    const void *vx;
    const int32_t *vy;
    t0 = rt_time_s();
    for (int s = 0; s < 4; s++) CHECK(rt_loader_next_view(&l, &vx, &vy) == 256);
    printf("loader throughput: %.0f img/s (224x224x3, crop+flip, bytes)\n", 4 * 256 / (rt_time_s() - t0));
    rt_loader_free(&l);
    rt_dataset_free(&big);
}

/* Channels-last (a CUDA plan with --layout nhwc): the same samples, [h][w][c] instead of
 * [c][h][w], as floats, as raw bytes, and as floats mixed and erased (the transpose comes
 * after mixup, cutmix and erasing, which work on [c][h][w]). */
static void check_channels_last(void) {
    static float chw[B * S], hwc[B * S];
    static uint8_t chw_u8[B * S], hwc_u8[B * S];
    int32_t y1[3 * B] = { 0 }, y2[3 * B] = { 0 };
    for (int variant = 0; variant < 3; variant++) {
        int raw = variant == 1;
        rt_loader a, b;
        rt_loader_config cfg;
        config(&cfg, 0, 1, 1, 0);
        cfg.raw_u8 = raw;
        if (variant == 2) {
            rt_augment_config *g = &cfg.augment;
            g->mixup_alpha = 0.2f, g->cutmix_alpha = 1.0f, g->mix_prob = 1, g->mix_switch_prob = 0.5f;
            g->erase_p = 0.5f, g->erase_scale[0] = 0.02f, g->erase_scale[1] = 0.33f;
            g->erase_ratio[0] = 0.3f, g->erase_ratio[1] = 3.3f, g->erase_random = 1;
        }
        rt_loader_init(&a, &ds, &cfg, NULL);
        cfg.nhwc = 1;
        rt_loader_init(&b, &ds, &cfg, NULL);
        void *x1 = raw ? (void *)chw_u8 : (void *)chw, *x2 = raw ? (void *)hwc_u8 : (void *)hwc;
        int n = rt_loader_batch_at(&a, 1, 2, x1, y1);
        CHECK(rt_loader_batch_at(&b, 1, 2, x2, y2) == n && n == B && !memcmp(y1, y2, sizeof y1));
        int same = 1;
        for (int i = 0; i < B; i++)
            for (int c = 0; c < C; c++)
                for (int q = 0; q < H * W; q++) {
                    size_t from = (size_t)i * S + (size_t)c * H * W + q, to = (size_t)i * S + (size_t)q * C + c;
                    same &= raw ? chw_u8[from] == hwc_u8[to] : chw[from] == hwc[to];
                }
        CHECK(same);
        rt_loader_free(&a);
        rt_loader_free(&b);
    }
}

/* Caffe's crop_size and mean_file (augment_window.c): every training sample is a K x K window
 * of its stored 8 x 8 image at one of the (8-K+1)^2 offsets, mirrored or not, each value the
 * table's minus the mean image at the pixel's stored place; every offset and both mirrors occur;
 * evaluation takes the center ((8-K)/2, Caffe's rounding); 1 and 2 ranks give the same global
 * batch; the raw-bytes loader gives the same windows; a window larger than the images, and a mean
 * image with raw bytes, are refused. */
static void check_caffe_window(void) {
    enum { K = 5, SK = C * K * K };
    static float x[B * SK], x2[B * SK], mean[C * H * W];
    static uint8_t xb[B * SK];
    static int32_t y[B], y2[B];
    for (int i = 0; i < C * H * W; i++) mean[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    rt_loader_config cfg;
    rt_loader l;
    config(&cfg, 0, 1, 1, 0);
    cfg.crop_pad = 0;
    cfg.window_h = cfg.window_w = K;
    cfg.mean_image = mean;
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    CHECK(rt_loader_sample_bytes(&l) == SK * sizeof(float));
    uint32_t *perm = malloc(N * 4);
    int seen[2][H - K + 1][W - K + 1];
    memset(seen, 0, sizeof seen);
    for (int step = 0; step < 8; step++) {
        rt_shuffle_permutation(perm, N, cfg.seed, 0);
        CHECK(rt_loader_batch_at(&l, 0, step, x, y) == B);
        for (int i = 0; i < B; i++) {
            long idx = perm[step * B + i];
            const uint8_t *src = ds.images + (size_t)idx * S;
            CHECK(y[i] == ds.labels[idx]);
            int match = 0;
            for (int f = 0; f < 2 && !match; f++)
                for (int y0 = 0; y0 <= H - K && !match; y0++)
                    for (int x0 = 0; x0 <= W - K && !match; x0++) {
                        int ok = 1;
                        for (int c = 0; c < C && ok; c++)
                            for (int yy = 0; yy < K && ok; yy++)
                                for (int xx = 0; xx < K && ok; xx++) {
                                    int at = (c * H + y0 + yy) * W + x0 + (f ? K - 1 - xx : xx);
                                    float want = ((float)src[at] / 255.0f - cfg.mean[c]) / cfg.std[c] - mean[at];
                                    ok = fabsf(x[(size_t)i * SK + (c * K + yy) * K + xx] - want) < 1e-5f;
                                }
                        if (ok) match = 1, seen[f][y0][x0]++;
                    }
            CHECK(match);
        }
    }
    int all = 1;
    for (int f = 0; f < 2; f++)
        for (int a = 0; a <= H - K; a++)
            for (int b = 0; b <= W - K; b++) all &= seen[f][a][b] > 0;
    CHECK(all);   /* 512 samples over 32 (offset, mirror) pairs */
    /* the same global batch from 2 ranks */
    for (int r = 0; r < 2; r++) {
        rt_loader lr;
        rt_loader_config c2 = cfg;
        c2.rank = r, c2.world = 2;
        CHECK(rt_loader_init(&lr, &ds, &c2, NULL) == RT_OK);
        CHECK(rt_loader_batch_at(&lr, 3, 5, x2 + (size_t)r * (B / 2) * SK, y2 + r * (B / 2)) == B / 2);
        rt_loader_free(&lr);
    }
    CHECK(rt_loader_batch_at(&l, 3, 5, x, y) == B && !memcmp(x, x2, sizeof x) && !memcmp(y, y2, sizeof y));
    rt_loader_free(&l);
    /* evaluation: the center window, no mirror */
    cfg.train = 0;
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    CHECK(rt_loader_batch_at(&l, 0, 1, x, y) == B);
    int center = 1;
    for (int i = 0; i < B; i++)
        for (int c = 0; c < C; c++)
            for (int yy = 0; yy < K; yy++)
                for (int xx = 0; xx < K; xx++) {
                    int at = (c * H + (H - K) / 2 + yy) * W + (W - K) / 2 + xx;
                    float want = ((float)ds.images[(size_t)(B + i) * S + at] / 255.0f - cfg.mean[c]) / cfg.std[c] - mean[at];
                    center &= fabsf(x[(size_t)i * SK + (c * K + yy) * K + xx] - want) < 1e-5f;
                }
    CHECK(center && y[0] == ds.labels[B]);
    rt_loader_free(&l);
    /* bytes: the same windows, without the mean (refused with one) */
    cfg.train = 1, cfg.mean_image = NULL, cfg.raw_u8 = 1;
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    CHECK(rt_loader_batch_at(&l, 2, 1, xb, y) == B);
    rt_loader_free(&l);
    cfg.raw_u8 = 0;
    CHECK(rt_loader_init(&l, &ds, &cfg, NULL) == RT_OK);
    CHECK(rt_loader_batch_at(&l, 2, 1, x, y2) == B);
    rt_loader_free(&l);
    int bytes_same = !memcmp(y, y2, sizeof y);
    for (int i = 0; i < B * SK; i++) bytes_same &= fabsf(x[i] - ((float)xb[i] / 255.0f - cfg.mean[(i % SK) / (K * K)]) / cfg.std[(i % SK) / (K * K)]) < 1e-6f;
    CHECK(bytes_same);
    rt_err e;
    cfg.mean_image = mean, cfg.raw_u8 = 1;
    CHECK(rt_loader_init(&l, &ds, &cfg, &e) == RT_E_ARG && strstr(e.msg, "mean image"));
    cfg.mean_image = NULL, cfg.raw_u8 = 0, cfg.window_h = cfg.window_w = H + 1;
    CHECK(rt_loader_init(&l, &ds, &cfg, &e) == RT_E_ARG && strstr(e.msg, "crop window"));
    free(perm);
}

int main(void) {
    rt_dataset_synthetic(&ds, N, C, H, W, 10, 77);
    check_channels_last();
    check_layouts();
    check_resume_and_prefetch();
    check_eval();
    check_augment_semantics();
    check_views_and_raw_bytes();
    check_errors();
    check_caffe_window();
    check_throughput();
    rt_dataset_free(&ds);
    return test_finish("test_data_loader");
}
