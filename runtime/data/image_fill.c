/* Batches from an encoded dataset: a pool of decode threads shares out the samples of a
 * batch; each sample is read, decoded, cropped, resized and flipped (rt_jpeg_sample) with
 * randomness from (seed, epoch, position in the epoch) alone, so the thread count and the
 * rank count never change a pixel. A sample that cannot be used is named on stderr and
 * replaced by the next one in dataset order that decodes (same crop randomness). Caffe's
 * mean_file on an image list is subtracted at the sample's place in the resized image. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "image_set.h"
#include "loader_internal.h"
#include "rt_rng.h"

/* A chain of unusable files this long means the data, not a file, is broken. */
#define MAX_REPLACEMENTS 64

typedef struct {
    rt_jpeg *jpeg;
    uint8_t *buf;        /* encoded bytes */
    size_t cap;
    uint8_t *chw;        /* the decoded sample before normalization */
} worker_state;

struct image_pool {
    const rt_loader *l;
    int n_threads;
    pthread_t *threads;
    worker_state *ws;
    pthread_mutex_t mu, submit;
    pthread_cond_t work_cv, done_cv;
    long gen;            /* job number; workers wait for it to change */
    int stop;
    /* the current job */
    const uint32_t *perm;
    long first, lo, hi, next;
    uint64_t aug_key;
    unsigned char *x;
    int32_t *y;
    int busy, failures;
    unsigned char *reported;   /* [n]: this file was named on stderr already */
};

/* Caffe's ImageData with a mean_file: the mean image is of the resized image, subtracted at
 * each pixel's place there before the crop and the mirror (data_transformer.cpp): the sample's
 * (y, x) came from the resized image's (top + y, left + x'), x' = W - 1 - x when mirrored. */
static void subtract_mean(const rt_loader *l, const rt_image_window *place, float *out) {
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w, MH = l->cfg.mean_h, MW = l->cfg.mean_w;
    for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++) {
            const float *m = l->cfg.mean_image + ((size_t)c * MH + (size_t)(place->top + y)) * MW + place->left;
            float *d = out + ((size_t)c * H + y) * W;
            for (int x = 0; x < W; x++) d[x] -= m[place->flip ? W - 1 - x : x];
        }
}

static void fill_one(struct image_pool *p, worker_state *w, long j) {
    const rt_loader *l = p->l;
    const rt_dataset *ds = l->ds;
    long pos = p->first + j, idx = p->perm ? (long)p->perm[pos] : pos;
    uint64_t seed = rt_hash_u64(p->aug_key, (uint64_t)pos, 0);
    rt_image_transform t = l->cfg.image;
    t.out_h = ds->h, t.out_w = ds->w;
    size_t plane = (size_t)ds->h * ds->w;
    unsigned char *dst = p->x + (size_t)(j - p->lo) * l->sample_bytes;
    uint8_t *chw = l->cfg.raw_u8 && !l->cfg.nhwc ? dst : w->chw;
    rt_image_window place = { 0 };
    for (int attempt = 0;; attempt++) {
        long i = (idx + attempt) % ds->n;
        char why[512], where[4096];
        size_t len;
        if (!image_set_read(ds->encoded, i, &w->buf, &w->cap, &len, why, sizeof why) &&
            !rt_jpeg_sample_placed(w->jpeg, w->buf, len, &t, seed, chw, &place, why, sizeof why)) {
            if (l->cfg.mean_image && (place.rh != l->cfg.mean_h || place.rw != l->cfg.mean_w)) {
                image_set_where(ds->encoded, i, where, sizeof where);
                rt_die_hint("give the images the mean's size (resize_to, Caffe's new_height/new_width), or compute "
                            "the mean of these images (Caffe's compute_image_mean)", "data: %s is %ldx%ld (after "
                            "resize_to), and the mean image (mean_file) %dx%d; Caffe refuses them too", where,
                            place.rh, place.rw, l->cfg.mean_h, l->cfg.mean_w);
            }
            p->y[j - p->lo] = ds->labels[i];
            break;
        }
        image_set_where(ds->encoded, i, where, sizeof where);
        pthread_mutex_lock(&p->mu);
        p->failures++;
        int first_time = !p->reported[i];
        p->reported[i] = 1;
        pthread_mutex_unlock(&p->mu);
        if (first_time)
            fprintf(stderr, "warning: data: %s: %s; the next sample takes its place each time it comes up "
                            "(data.max_decode_failures caps how many a run accepts)\n", where, why);
        if (attempt + 1 >= MAX_REPLACEMENTS)
            rt_die_hint("check the data (trainc pack reports every unusable file)",
                        "data: %d samples in a row from %s cannot be decoded", MAX_REPLACEMENTS, where);
    }
    augment_policy_apply(l, chw, p->aug_key, pos);   /* TrivialAugment/RandAugment, when on (training only) */
    if (l->cfg.nhwc && l->cfg.raw_u8) {   /* channels-last bytes, pixel by pixel */
        for (size_t q = 0; q < plane; q++)
            for (int c = 0; c < ds->c; c++) dst[(size_t)ds->c * q + c] = chw[c * plane + q];
    } else if (!l->cfg.raw_u8) {   /* floats [c][hw]: loader_fill makes them channels-last after erasing and mixing */
        float *out = (float *)dst;
        for (int c = 0; c < ds->c; c++)
            for (size_t q = 0; q < plane; q++) out[c * plane + q] = l->lut[c][chw[c * plane + q]];
        if (l->cfg.mean_image) subtract_mean(l, &place, out);
    }
}

static void *worker(void *arg) {
    struct image_pool *p = ((void **)arg)[0];
    worker_state *w = ((void **)arg)[1];
    free(arg);
    long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->gen == seen) pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        for (;;) {
            long j = p->next++;
            if (j >= p->hi) break;
            pthread_mutex_unlock(&p->mu);
            fill_one(p, w, j);
            pthread_mutex_lock(&p->mu);
        }
        if (--p->busy == 0) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int default_threads(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = (int)(cores / 2);
    return n < 1 ? 1 : n > 8 ? 8 : n;
}

struct image_pool *image_pool_start(const rt_loader *l) {
    struct image_pool *p = rt_xcalloc(1, sizeof *p);
    p->l = l;
    p->n_threads = l->cfg.decode_threads > 0 ? l->cfg.decode_threads : default_threads();
    p->threads = rt_xcalloc((size_t)p->n_threads, sizeof(pthread_t));
    p->ws = rt_xcalloc((size_t)p->n_threads, sizeof(worker_state));
    p->reported = rt_xcalloc((size_t)l->ds->n, 1);
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->submit, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    for (int k = 0; k < p->n_threads; k++) {
        p->ws[k].jpeg = rt_jpeg_new();
        p->ws[k].chw = rt_xmalloc((size_t)3 * l->ds->h * l->ds->w);
        void **arg = rt_xmalloc(2 * sizeof(void *));
        arg[0] = p, arg[1] = &p->ws[k];
        int rc = pthread_create(&p->threads[k], NULL, worker, arg);
        if (rc) rt_die("data loader: cannot start decode thread %d of %d: %s", k + 1, p->n_threads, strerror(rc));
    }
    return p;
}

void image_pool_stop(struct image_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < p->n_threads; k++) {
        pthread_join(p->threads[k], NULL);
        rt_jpeg_free(p->ws[k].jpeg);
        free(p->ws[k].buf);
        free(p->ws[k].chw);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->submit);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p->ws);
    free(p->reported);
    free(p);
}

int image_pool_fill(struct image_pool *p, const uint32_t *perm, int64_t epoch, long first, long lo,
                    long hi, void *x, int32_t *y) {
    pthread_mutex_lock(&p->submit);   /* one batch at a time */
    pthread_mutex_lock(&p->mu);
    p->perm = perm, p->first = first, p->lo = lo, p->hi = hi, p->next = lo;
    p->aug_key = rt_hash_u64(p->l->cfg.seed, RT_STREAM_AUGMENT, (uint64_t)epoch);
    p->x = x, p->y = y;
    p->failures = 0;
    p->busy = p->n_threads;
    p->gen++;
    pthread_cond_broadcast(&p->work_cv);
    while (p->busy > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    int failures = p->failures;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->submit);
    return failures;
}
