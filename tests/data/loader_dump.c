/* Test driver of the image loader: writes global batches (epoch 0.., step 0..STEPS-1) of an
 * image dataset to OUT, assembled from the slices of ranks 0..WORLD-1, each rank with its
 * own loader (prefetch thread and THREADS decode threads), as each MPI rank runs it. The
 * same bytes for every WORLD and THREADS is the determinism contract.
 *   loader_dump TRAIN VAL|- rrc|center|crop OH OW RESIZE FLIP WORLD THREADS EPOCHS STEPS BATCH SEED RAW OUT
 * VAL "-": batches of TRAIN in training mode (shuffled); else batches of VAL in eval mode.
 * RAW 1: bytes (CHW; HWC with LOADER_NHWC=1); 0: floats x/255. The labels go to OUT.labels (int32).
 * LOADER_FILTER=bicubic resamples with Pillow's bicubic filter instead of bilinear, =opencv with
 * OpenCV's linear resize (Caffe's).
 * WORLD "mpi": one rank per process under mpirun (OMPI_COMM_WORLD_RANK / _SIZE); each writes
 * only its own slices, to OUT.rankR and OUT.rankR.labels.
 * Caffe's ImageData: LOADER_LIST_ROOT=DIR/ reads TRAIN and VAL as "path label" lists under that
 * root_folder; LOADER_RESIZE_TO=HxW resizes to exactly that first; LOADER_BGR=1 orders B, G, R;
 * LOADER_GRAY=1 decodes one gray channel (is_color: false). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_data.h"

int main(int argc, char **argv) {
    if (argc != 16) {
        fprintf(stderr, "usage: see tests/data/loader_dump.c\n");
        return 2;
    }
    const char *train_path = argv[1], *val_path = argv[2];
    rt_image_transform t = { .out_h = atoi(argv[4]), .out_w = atoi(argv[5]), .resize = atoi(argv[6]),
                             .flip = atoi(argv[7]), .scale = { 0.08f, 1.0f }, .ratio = { 0.75f, 4.0f / 3.0f } };
    t.mode = !strcmp(argv[3], "rrc") ? RT_IMG_RRC : !strcmp(argv[3], "center") ? RT_IMG_CENTER : RT_IMG_RANDOM_CROP;
    if (getenv("LOADER_FILTER") && !strcmp(getenv("LOADER_FILTER"), "bicubic")) t.filter = RT_IMG_BICUBIC;
    if (getenv("LOADER_FILTER") && !strcmp(getenv("LOADER_FILTER"), "opencv")) t.filter = RT_IMG_CV_LINEAR;
    t.gray = getenv("LOADER_GRAY") ? atoi(getenv("LOADER_GRAY")) : 0;
    int mpi = !strcmp(argv[8], "mpi");
    int world = mpi ? atoi(getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE") : "1") : atoi(argv[8]);
    int my_rank = mpi ? atoi(getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK") : "0") : -1;
    int threads = atoi(argv[9]), epochs = atoi(argv[10]), steps = atoi(argv[11]);
    int batch = atoi(argv[12]), raw = atoi(argv[14]);
    uint64_t seed = strtoull(argv[13], NULL, 10);
    if (getenv("LOADER_RESIZE_TO")) sscanf(getenv("LOADER_RESIZE_TO"), "%dx%d", &t.resize_h, &t.resize_w);
    t.bgr = getenv("LOADER_BGR") ? atoi(getenv("LOADER_BGR")) : 0;
    const char *list_root = getenv("LOADER_LIST_ROOT");
    rt_dataset train, val;
    int eval = strcmp(val_path, "-") != 0;
    if (list_root) {
        rt_dataset_open_image_list(&train, train_path, list_root, t.out_h, t.out_w, 0, NULL);
        if (eval) rt_dataset_open_image_list(&val, val_path, list_root, t.out_h, t.out_w, train.classes, NULL);
    } else {
        rt_dataset_open_images(&train, train_path, NULL, t.out_h, t.out_w, 0, NULL);
        if (eval) rt_dataset_open_images(&val, val_path, &train, t.out_h, t.out_w, 0, NULL);
    }
    if (t.gray) train.c = val.c = 1;   /* as rt_data_open_images sets it */
    const rt_dataset *ds = eval ? &val : &train;
    rt_loader *l = calloc((size_t)world, sizeof *l);
    int r_lo = mpi ? my_rank : 0, r_hi = mpi ? my_rank + 1 : world;
    for (int r = r_lo; r < r_hi; r++) {
        rt_loader_config cfg;
        rt_loader_config_default(&cfg);
        cfg.global_batch = batch, cfg.rank = r, cfg.world = world, cfg.train = !eval, cfg.seed = seed;
        cfg.raw_u8 = raw, cfg.image = t, cfg.decode_threads = threads;
        cfg.slots = getenv("LOADER_SLOTS") ? atoi(getenv("LOADER_SLOTS")) : 0;   /* the ring's depth */
        cfg.nhwc = getenv("LOADER_NHWC") ? atoi(getenv("LOADER_NHWC")) : 0;   /* channels-last samples */
        for (int c = 0; c < 3; c++) cfg.mean[c] = 0.0f, cfg.std[c] = 1.0f;
        rt_loader_init(&l[r], ds, &cfg, NULL);
    }
    char path[4096], lpath[4200];
    if (mpi) snprintf(path, sizeof path, "%s.rank%d", argv[15], my_rank);
    else snprintf(path, sizeof path, "%s", argv[15]);
    snprintf(lpath, sizeof lpath, "%s.labels", path);
    FILE *out = fopen(path, "wb"), *labels = fopen(lpath, "wb");
    if (!out || !labels) rt_die("cannot write %s", argv[15]);
    int failures = 0;
    for (int e = 0; e < epochs; e++)
        for (int s = 0; s < steps; s++)
            for (int r = r_lo; r < r_hi; r++) {
                if (s == 0) rt_loader_seek(&l[r], e, 0);
                const void *x;
                const int32_t *y;
                int got = rt_loader_next_view(&l[r], &x, &y);
                failures += rt_loader_last_failures(&l[r]);
                fwrite(x, rt_loader_sample_bytes(&l[r]), (size_t)got, out);
                fwrite(y, sizeof(int32_t), (size_t)got, labels);
            }
    fclose(out);
    fclose(labels);
    printf("%ld samples, %d classes, %d decode failures\n", ds->n, train.classes, failures);
    for (int r = r_lo; r < r_hi; r++) rt_loader_free(&l[r]);
    free(l);
    if (eval) rt_dataset_free(&val);
    rt_dataset_free(&train);
    return 0;
}
