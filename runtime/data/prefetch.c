/* Background prefetch: one thread fills the loader's slots in turn, so batch k+1 is being
 * prepared while the trainer computes on batch k. The thread walks the same (epoch, step)
 * sequence as the loader, so prefetching never changes what a batch contains. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "loader_internal.h"

struct rt_prefetch {
    rt_loader *l;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count[RT_LOADER_MAX_SLOTS];
    int full[RT_LOADER_MAX_SLOTS];   /* filled, or handed out and not yet given back */
    int head, tail;              /* the consumer takes head, the producer fills tail */
    int held[RT_LOADER_HELD];    /* the slots of the consumer's last views, oldest first; -1: none */
    int stop;
    int64_t epoch, step;         /* next batch the producer makes */
    uint32_t *perm;              /* the thread's own permutation cache */
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
        int failures;
        int n = loader_fill(p->l, perm, epoch, step, p->l->slot_x[slot], p->l->slot_y[slot], &failures);
        pthread_mutex_lock(&p->mu);
        p->l->slot_failures[slot] = failures;
        p->count[slot] = n;
        p->full[slot] = 1;
        p->tail = (slot + 1) % p->l->slots;
        loader_advance(p->l, &p->epoch, &p->step);
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct rt_prefetch *prefetch_start(rt_loader *l, int64_t epoch, int64_t step) {
    struct rt_prefetch *p = rt_xcalloc(1, sizeof *p);
    p->l = l;
    for (int h = 0; h < RT_LOADER_HELD; h++) p->held[h] = -1;
    p->epoch = epoch;
    p->step = step;
    p->perm_epoch = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int rc = pthread_create(&p->thread, NULL, producer, p);
    if (rc != 0) rt_die("data loader: cannot start the prefetch thread: %s", strerror(rc));
    return p;
}

int prefetch_view(struct rt_prefetch *p, int *slot) {
    pthread_mutex_lock(&p->mu);
    if (p->held[0] >= 0) {   /* the oldest view is over: its slot may be refilled */
        p->full[p->held[0]] = 0;
        pthread_cond_broadcast(&p->cv);
    }
    while (!p->full[p->head]) pthread_cond_wait(&p->cv, &p->mu);
    int s = p->head, n = p->count[s];
    for (int h = 0; h + 1 < RT_LOADER_HELD; h++) p->held[h] = p->held[h + 1];
    p->held[RT_LOADER_HELD - 1] = s;
    p->head = (s + 1) % p->l->slots;
    pthread_mutex_unlock(&p->mu);
    *slot = s;
    return n;
}

void prefetch_stop(struct rt_prefetch *p) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    free(p->perm);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
