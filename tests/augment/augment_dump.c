/* Test driver of the modern-recipe data and loss code, for tests/augment/reference_test.py to compare
 * against torch/torchvision:
 *   augment_dump loss N K MIXED BCE EPS THRESHOLD OUT     logits, targets, loss, dlogits (float32)
 *   augment_dump erase H W P S0 S1 R0 R1 COUNT            one "hit top left h w" line per draw
 *   augment_dump mix H W MIXUP CUTMIX PROB SWITCH COUNT   one "mixed cutmix lam y0 x0 y1 x1" line per batch
 *   augment_dump loader IDX_DIR|images:TREE WORLD THREADS EPOCH0 EPOCHS STEPS BATCH SEED MIXUP CUTMIX ERASE_P
 *                       ERASE_RANDOM REPEATS OUT
 *       global batches (assembled from ranks 0..WORLD-1, each with its own loader) of the IDX
 *       training set from epoch EPOCH0 on: floats to OUT, the 1 or 3 target words of each
 *       sample to OUT.targets (int32), the epoch order's dataset indices to OUT.order.
 *   augment_dump op OP MAGNITUDE BILINEAR C H W IN OUT   augment_op OP on the 8-bit image IN
 *   augment_dump table POLICY BINS H W                   each op's magnitude per bin, one op a line
 *   augment_dump timm OP INC LEVEL NEG BICUBIC F0,F1,F2 C H W IN OUT   timm's op OP at LEVEL (fill F)
 *   augment_dump auto SET KEY BILINEAR C H W IN OUT   AutoAugment (SET: rt_auto_policy) on IN with the
 *       stream of KEY: "policy ID" and one "op K OP MAGNITUDE" line per op applied, the image to OUT
 * THREADS > 0 turns the prefetch thread on (and is the decode thread count of a JPEG tree);
 * AUGMENT_POLICY=1|2|3|4 turns TrivialAugment (nearest), RandAugment (2 ops at bin 9 of 31,
 * bilinear), timm's RandAugment (rand-m7-mstd0.5-inc1, random bilinear/bicubic) or AutoAugment's
 * ImageNet policy (nearest) on in the loader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../runtime/data/loader_internal.h"
#include "rt_ops.h"
#include "rt_rng.h"

static int loss_cmd(char **a) {
    int n = atoi(a[0]), k = atoi(a[1]), mixed = atoi(a[2]), bce = atoi(a[3]);
    float eps = (float)atof(a[4]), thr = (float)atof(a[5]);
    rt_rng r;
    rt_rng_init(&r, 7, RT_STREAM_DATA);
    float *z = malloc(sizeof(float) * n * k), *d = malloc(sizeof(float) * n * k);
    int32_t *t = malloc(sizeof(int32_t) * 3 * n);
    for (long i = 0; i < (long)n * k; i++) z[i] = 4 * rt_rng_normal(&r);
    for (int b = 0; b < n; b++) {
        t[b] = (int32_t)rt_rng_below(&r, (uint32_t)k);
        t[n + b] = (int32_t)rt_rng_below(&r, (uint32_t)k);
        float w = rt_rng_uniform(&r);
        memcpy(&t[2 * n + b], &w, sizeof w);
    }
    double loss = target_loss_forward(d, z, t, mixed, n, k, bce, eps, thr, 1.0f / n);
    FILE *f = fopen(a[6], "wb");
    if (!f) return 1;
    fwrite(z, sizeof(float), (size_t)n * k, f);
    fwrite(t, sizeof(int32_t), (size_t)3 * n, f);
    fwrite(&loss, sizeof loss, 1, f);
    fwrite(d, sizeof(float), (size_t)n * k, f);
    fclose(f);
    free(z), free(d), free(t);
    return 0;
}

static int erase_cmd(char **a) {
    int h = atoi(a[0]), w = atoi(a[1]), count = atoi(a[7]);
    rt_augment_config c = { .erase_p = (float)atof(a[2]), .erase_scale = { (float)atof(a[3]), (float)atof(a[4]) },
                            .erase_ratio = { (float)atof(a[5]), (float)atof(a[6]) } };
    for (int i = 0; i < count; i++) {
        rt_rng r;
        rt_rng_init(&r, rt_hash_u64(11, (uint64_t)i, 1), RT_STREAM_AUGMENT);
        int box[4] = { 0, 0, 0, 0 };
        int hit = augment_erase_box(&r, &c, h, w, box);
        printf("%d %d %d %d %d\n", hit, box[0], box[1], box[2], box[3]);
    }
    return 0;
}

static int mix_cmd(char **a) {
    int h = atoi(a[0]), w = atoi(a[1]), count = atoi(a[6]);
    rt_augment_config c = { .mixup_alpha = (float)atof(a[2]), .cutmix_alpha = (float)atof(a[3]),
                            .mix_prob = (float)atof(a[4]), .mix_switch_prob = (float)atof(a[5]) };
    for (int i = 0; i < count; i++) {
        augment_mix m;
        int mixed = augment_mix_plan(&c, rt_hash_u64(13, (uint64_t)i, 2), h, w, &m);
        printf("%d %d %.17g %d %d %d %d\n", mixed, m.cutmix, m.lam, m.y0, m.x0, m.y1, m.x1);
    }
    return 0;
}

static int loader_cmd(char **a) {
    int world = atoi(a[1]), threads = atoi(a[2]), epoch0 = atoi(a[3]), epochs = atoi(a[4]), steps = atoi(a[5]);
    int batch = atoi(a[6]);
    rt_dataset ds;
    int images = !strncmp(a[0], "images:", 7);   /* a JPEG tree: random-resized crops to 32x32, THREADS decoders */
    if (images) rt_dataset_open_images(&ds, a[0] + 7, NULL, 32, 32, 0, NULL);
    else rt_dataset_load_idx(&ds, a[0], "train", 10, NULL);
    rt_augment_config aug = { .mixup_alpha = (float)atof(a[8]), .cutmix_alpha = (float)atof(a[9]), .mix_prob = 1.0f,
                              .mix_switch_prob = 0.5f, .erase_p = (float)atof(a[10]), .erase_scale = { 0.02f, 0.33f },
                              .erase_ratio = { 0.3f, 3.3f }, .erase_value = 0.5f, .erase_random = atoi(a[11]),
                              .repeats = atoi(a[12]), .num_ops = 2, .magnitude = 9, .num_bins = 31 };
    aug.policy = getenv("AUGMENT_POLICY") ? atoi(getenv("AUGMENT_POLICY")) : 0;
    aug.bilinear = aug.policy == 2;   /* RandAugment's runs through the bilinear warps */
    if (aug.policy == RT_POLICY_TIMM_RAND_AUGMENT) aug.magnitude = 7, aug.magnitude_std = 0.5f, aug.increasing = 1;
    rt_loader *l = calloc((size_t)world, sizeof *l);
    for (int r = 0; r < world; r++) {
        rt_loader_config cfg;
        rt_loader_config_default(&cfg);
        cfg.global_batch = batch, cfg.rank = r, cfg.world = world, cfg.train = 1;
        cfg.seed = strtoull(a[7], NULL, 10);
        cfg.crop_pad = 2, cfg.flip = 1, cfg.mean[0] = 0.286f, cfg.std[0] = 0.353f;
        cfg.prefetch = threads > 0;
        if (images) {
            cfg.decode_threads = threads > 0 ? threads : 1;
            cfg.image = (rt_image_transform){ .mode = RT_IMG_RRC, .out_h = 32, .out_w = 32, .flip = 1,
                                              .scale = { 0.08f, 1.0f }, .ratio = { 0.75f, 4.0f / 3.0f } };
        }
        cfg.augment = aug;
        rt_loader_init(&l[r], &ds, &cfg, NULL);
    }
    char path[4096];
    FILE *out = fopen(a[13], "wb");
    snprintf(path, sizeof path, "%s.targets", a[13]);
    FILE *targets = fopen(path, "wb");
    snprintf(path, sizeof path, "%s.order", a[13]);
    FILE *order = fopen(path, "wb");
    if (!out || !targets || !order) rt_die("cannot write %s", a[13]);
    int words = RT_TARGET_WORDS(aug), n = rt_loader_batch_per_rank(&l[0]);
    int32_t *ys = malloc(sizeof(int32_t) * (size_t)world * n * words);
    for (int e = epoch0; e < epoch0 + epochs; e++) {
        for (int r = 0; r < world; r++) rt_loader_seek(&l[r], e, 0);
        uint32_t *perm = NULL;
        int64_t cached = -1;
        fwrite(loader_perm(&l[0], &perm, &cached, e), sizeof(uint32_t), (size_t)ds.n, order);
        free(perm);
        for (int s = 0; s < steps; s++) {
            for (int r = 0; r < world; r++) {
                const void *x;
                const int32_t *y;
                rt_loader_next_view(&l[r], &x, &y);
                fwrite(x, rt_loader_sample_bytes(&l[r]), (size_t)n, out);
                memcpy(ys + (size_t)r * n * words, y, sizeof(int32_t) * (size_t)n * words);
            }
            for (int w = 0; w < words; w++)   /* word block by block, over the global batch */
                for (int r = 0; r < world; r++) fwrite(ys + ((size_t)r * words + w) * n, sizeof(int32_t), (size_t)n, targets);
        }
    }
    free(ys);
    fclose(out), fclose(targets), fclose(order);
    for (int r = 0; r < world; r++) rt_loader_free(&l[r]);
    free(l);
    rt_dataset_free(&ds);
    return 0;
}

static int op_cmd(char **a) {
    int bilinear = atoi(a[2]), c = atoi(a[3]), h = atoi(a[4]), w = atoi(a[5]);
    size_t n = (size_t)c * h * w;
    uint8_t *img = malloc(n), *scratch = malloc(n);
    FILE *f = fopen(a[6], "rb");
    if (!f || fread(img, 1, n, f) != n) return 1;
    fclose(f);
    augment_op_apply((augment_op)atoi(a[0]), atof(a[1]), bilinear, img, scratch, c, h, w);
    f = fopen(a[7], "wb");
    if (!f || fwrite(img, 1, n, f) != n) return 1;
    fclose(f);
    free(img), free(scratch);
    return 0;
}

static int timm_cmd(char **a) {
    int c = atoi(a[6]), h = atoi(a[7]), w = atoi(a[8]);
    unsigned f[3] = { 0, 0, 0 };
    if (sscanf(a[5], "%u,%u,%u", &f[0], &f[1], &f[2]) != 3) return 2;
    const uint8_t fill[3] = { (uint8_t)f[0], (uint8_t)f[1], (uint8_t)f[2] };
    size_t n = (size_t)c * h * w;
    uint8_t *img = malloc(n), *scratch = malloc(n);
    FILE *in = fopen(a[9], "rb");
    if (!in || fread(img, 1, n, in) != n) return 1;
    fclose(in);
    timm_op op = (timm_op)atoi(a[0]);
    double arg = timm_level_arg(op, atoi(a[1]), atof(a[2]), atoi(a[3]));
    timm_op_apply(op, arg, atoi(a[4]), fill, img, scratch, c, h, w);
    FILE *out = fopen(a[10], "wb");
    if (!out || fwrite(img, 1, n, out) != n) return 1;
    fclose(out);
    printf("%.17g\n", arg);
    free(img), free(scratch);
    return 0;
}

static int auto_cmd(char **a) {
    int set = atoi(a[0]), bilinear = atoi(a[2]), c = atoi(a[3]), h = atoi(a[4]), w = atoi(a[5]);
    size_t n = (size_t)c * h * w;
    uint8_t *img = malloc(n), *scratch = malloc(n);
    FILE *in = fopen(a[6], "rb");
    if (!in || fread(img, 1, n, in) != n) return 1;
    fclose(in);
    rt_rng r;
    rt_rng_init(&r, strtoull(a[1], NULL, 10), RT_STREAM_AUGMENT);
    augment_auto_apply(set, bilinear, img, scratch, c, h, w, &r, stdout);
    FILE *out = fopen(a[7], "wb");
    if (!out || fwrite(img, 1, n, out) != n) return 1;
    fclose(out);
    free(img), free(scratch);
    return 0;
}

static int table_cmd(char **a) {
    int policy = atoi(a[0]), bins = atoi(a[1]), h = atoi(a[2]), w = atoi(a[3]);
    for (int op = 0; op < AUG_OP_COUNT; op++) {
        for (int b = 0; b < bins; b++) printf("%s%.9g", b ? " " : "", augment_policy_magnitude(policy, op, b, bins, h, w));
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 10 && !strcmp(argv[1], "op")) return op_cmd(argv + 2);
    if (argc >= 6 && !strcmp(argv[1], "table")) return table_cmd(argv + 2);
    if (argc >= 10 && !strcmp(argv[1], "auto")) return auto_cmd(argv + 2);
    if (argc >= 13 && !strcmp(argv[1], "timm")) return timm_cmd(argv + 2);
    if (argc >= 9 && !strcmp(argv[1], "loss")) return loss_cmd(argv + 2);
    if (argc >= 10 && !strcmp(argv[1], "erase")) return erase_cmd(argv + 2);
    if (argc >= 9 && !strcmp(argv[1], "mix")) return mix_cmd(argv + 2);
    if (argc >= 16 && !strcmp(argv[1], "loader")) return loader_cmd(argv + 2);
    fprintf(stderr, "usage: see tests/augment/augment_dump.c\n");
    return 2;
}
