/* Background prefetch: one thread fills a two-slot ring so batch k+1 is being prepared
 * while the trainer computes on batch k. The thread walks the same (epoch, step) sequence
 * as the loader, so prefetching never changes what a batch contains. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "loader_internal.h"

#define SLOTS 2

struct rt_prefetch {
    rt_loader *l;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    float *x[SLOTS];
    int32_t *y[SLOTS];
    int count[SLOTS];
    int full[SLOTS];
    int head, tail;          /* consumer takes head, producer fills tail */
    int stop;
    int64_t epoch, step;     /* next batch the producer makes */
    uint32_t *perm;          /* the thread's own permutation cache */
    int64_t perm_epoch;
};

static void *producer(void *arg) {
    struct rt_prefetch *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->full[p->tail]) pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop) break;
        int slot = p->tail;
        int64_t epoch = p->epoch, step = p->step;
        pthread_mutex_unlock(&p->mu);
        /* The slot is ours until marked full: fill it without holding the lock. */
        const uint32_t *perm = loader_perm(p->l, &p->perm, &p->perm_epoch, epoch);
        int n = loader_fill(p->l, perm, epoch, step, p->x[slot], p->y[slot]);
        pthread_mutex_lock(&p->mu);
        p->count[slot] = n;
        p->full[slot] = 1;
        p->tail = (slot + 1) % SLOTS;
        loader_advance(p->l, &p->epoch, &p->step);
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct rt_prefetch *prefetch_start(rt_loader *l, int64_t epoch, int64_t step) {
    struct rt_prefetch *p = rt_xcalloc(1, sizeof *p);
    size_t sample = (size_t)l->ds->c * l->ds->h * l->ds->w;
    p->l = l;
    for (int s = 0; s < SLOTS; s++) {
        p->x[s] = rt_alloc_aligned((size_t)l->batch_per_rank * sample * sizeof(float));
        p->y[s] = rt_xcalloc((size_t)l->batch_per_rank, sizeof(int32_t));
    }
    p->epoch = epoch;
    p->step = step;
    p->perm_epoch = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int rc = pthread_create(&p->thread, NULL, producer, p);
    if (rc != 0) rt_die("data loader: cannot start the prefetch thread: %s", strerror(rc));
    return p;
}

int prefetch_take(struct rt_prefetch *p, float *x, int32_t *y) {
    size_t sample = (size_t)p->l->ds->c * p->l->ds->h * p->l->ds->w;
    pthread_mutex_lock(&p->mu);
    while (!p->full[p->head]) pthread_cond_wait(&p->cv, &p->mu);
    int slot = p->head, n = p->count[slot];
    pthread_mutex_unlock(&p->mu);
    memcpy(x, p->x[slot], (size_t)n * sample * sizeof(float));
    memcpy(y, p->y[slot], (size_t)n * sizeof(int32_t));
    pthread_mutex_lock(&p->mu);
    p->full[slot] = 0;
    p->head = (slot + 1) % SLOTS;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return n;
}

void prefetch_stop(struct rt_prefetch *p) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    for (int s = 0; s < SLOTS; s++) {
        rt_free_aligned(p->x[s]);
        free(p->y[s]);
    }
    free(p->perm);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
