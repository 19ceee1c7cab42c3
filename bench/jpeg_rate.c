/* `make bench-data`, our side: decode + random-resized crop 224 + flip + normalize to FP32
 * CHW (what torchvision's RandomResizedCrop, RandomHorizontalFlip, ToTensor, Normalize give),
 * on JPEGs held in memory, with 1 thread (per core) and with THREADS threads (total).
 *   jpeg_rate DIR THREADS SECONDS  -> "threads N: X img/s wall, Y img/s per CPU second" lines */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rt_core.h"
#include "rt_data.h"

typedef struct { uint8_t *bytes; size_t len; } blob;
static blob *blobs;
static int n_blobs;
static double seconds;

static const float MEAN[3] = { 0.485f, 0.456f, 0.406f }, STD[3] = { 0.229f, 0.224f, 0.225f };
static float lut[3][256];

typedef struct { int id; long done; double took, cpu; } job;

/* CPU time of the calling thread: on a shared machine the per-core rate is work per CPU
 * second, which other processes' load does not dilute. */
static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *run(void *arg) {
    job *jb = arg;
    rt_jpeg *j = rt_jpeg_new();
    rt_image_transform t = { .out_h = 224, .out_w = 224, .mode = RT_IMG_RRC, .scale = { 0.08f, 1.0f },
                             .ratio = { 0.75f, 4.0f / 3.0f }, .flip = 1 };
    uint8_t *chw = rt_xmalloc(3 * 224 * 224);
    float *out = rt_xmalloc(3 * 224 * 224 * sizeof(float));
    char why[256];
    double t0 = rt_time_s(), c0 = thread_cpu_s();
    long i = 0;
    while (rt_time_s() - t0 < seconds) {
        for (int k = 0; k < 16; k++, i++) {
            const blob *b = &blobs[(i * 7 + jb->id * 13) % n_blobs];
            if (rt_jpeg_sample(j, b->bytes, b->len, &t, (uint64_t)i * 1000003 + (uint64_t)jb->id, chw, why, sizeof why))
                rt_die("jpeg_rate: %s", why);
            for (int c = 0; c < 3; c++)
                for (int p = 0; p < 224 * 224; p++) out[c * 224 * 224 + p] = lut[c][chw[c * 224 * 224 + p]];
        }
    }
    jb->took = rt_time_s() - t0;
    jb->cpu = thread_cpu_s() - c0;
    jb->done = i;
    free(chw);
    free(out);
    rt_jpeg_free(j);
    return NULL;
}

/* Returns the wall-clock rate over all threads; *per_cpu: images per CPU second. */
static double rate(int threads, double *per_cpu) {
    pthread_t th[256];
    job jobs[256];
    for (int k = 0; k < threads; k++) {
        jobs[k] = (job){ .id = k };
        pthread_create(&th[k], NULL, run, &jobs[k]);
    }
    double total = 0, cpu = 0;
    long done = 0;
    for (int k = 0; k < threads; k++) {
        pthread_join(th[k], NULL);
        total += jobs[k].done / jobs[k].took;
        cpu += jobs[k].cpu, done += jobs[k].done;
    }
    *per_cpu = done / cpu;
    return total;
}

int main(int argc, char **argv) {
    if (argc != 4) rt_die("usage: jpeg_rate DIR THREADS SECONDS");
    int threads = atoi(argv[2]);
    seconds = atof(argv[3]);
    if (threads < 1 || threads > 256) rt_die("jpeg_rate: THREADS is 1..256");
    DIR *d = opendir(argv[1]);
    if (!d) rt_die("jpeg_rate: cannot open %s", argv[1]);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".jpg")) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", argv[1], e->d_name);
        FILE *f = fopen(p, "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        blobs = realloc(blobs, (size_t)(n_blobs + 1) * sizeof *blobs);
        blobs[n_blobs].bytes = rt_xmalloc((size_t)n);
        blobs[n_blobs].len = fread(blobs[n_blobs].bytes, 1, (size_t)n, f);
        fclose(f);
        n_blobs++;
    }
    closedir(d);
    if (!n_blobs) rt_die("jpeg_rate: no .jpg files in %s", argv[1]);
    rt_normalize_lut(MEAN, STD, 3, lut);
    printf("ours: %d JPEGs in memory; RRC 224 + flip + normalize to FP32 CHW\n", n_blobs);
    double per_cpu, wall = rate(1, &per_cpu);
    printf("ours threads 1: %.1f img/s wall, %.1f img/s per CPU second\n", wall, per_cpu);
    if (threads > 1) {
        wall = rate(threads, &per_cpu);
        printf("ours threads %d: %.1f img/s wall, %.1f img/s per CPU second\n", threads, wall, per_cpu);
    }
    return 0;
}
