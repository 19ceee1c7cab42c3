/* data.train_samples and data.val_samples against a real dataset (IDX files, an image folder,
 * packed shards): a count the data cannot give is refused at start-up on every rank, before
 * any file is written; a smaller one keeps an evenly spaced subset, the same on every rank
 * and in every run, so the steps per epoch `trainc show` printed are the ones trained. */
#include <stdio.h>
#include "image_set.h"
#include "rt_trainer.h"

/* Kept sample i of n is sample floor(i * total / n): strictly increasing (n <= total), spread
 * over the whole set, so a folder listed class by class keeps every class. */
static long subset_index(long i, long n, long total) {
    return (long)((unsigned __int128)i * (unsigned long)total / (unsigned long)n);
}

/* Compacts ds to its n kept samples in place (a kept sample never moves up). */
static void dataset_keep_subset(rt_dataset *ds, long n) {
    const long total = ds->n;
    const size_t sample = (size_t)ds->c * ds->h * ds->w;
    struct rt_image_set *s = ds->encoded;
    long kept = 0;
    for (long j = 0; j < total; j++) {
        if (kept == n || subset_index(kept, n, total) != j) {
            if (s && s->paths) free(s->paths[j]);
            continue;
        }
        ds->labels[kept] = ds->labels[j];
        if (ds->images) memmove(ds->images + (size_t)kept * sample, ds->images + (size_t)j * sample, sample);
        if (ds->values) memmove(ds->values + (size_t)kept * sample, ds->values + (size_t)j * sample, sample * sizeof(float));
        if (s && s->paths) s->paths[kept] = s->paths[j];
        if (s && s->packed) s->shard[kept] = s->shard[j], s->offset[kept] = s->offset[j], s->length[kept] = s->length[j];
        kept++;
    }
    ds->n = n;
    if (s) s->n = n;
}

static void honour_count(rt_dataset *ds, long want, const char *field, const char *split, const char *where,
                         int speak) {
    if (ds->encoded) where = ds->encoded->root;
    if (want <= 0 || want == ds->n) return;
    if (want > ds->n) {
        char hint[256];
        snprintf(hint, sizeof hint, "set data.%s to %ld or less in the spec and rebuild, or point --data at "
                 "the dataset the spec describes", field, ds->n);
        rt_die_hint(hint, "data.%s is %ld, but the %s set in '%s' has only %ld samples", field, want, split,
                    where, ds->n);
    }
    if (speak)
        printf("data: %s on %ld of the %ld samples in '%s' (data.%s): samples i*%ld/%ld, evenly spaced, the same "
               "in every run\n", split, want, ds->n, where, field, ds->n, want);
    dataset_keep_subset(ds, want);
}

void rt_data_honour_sample_counts(const rt_run_config *run, const char *where, rt_dataset *train, rt_dataset *val,
                                  int speak) {
    if (run->source == RT_DATA_SYNTHETIC) return;   /* made to the spec's sizes */
    honour_count(train, run->spec_train_samples, "train_samples", "training", where, speak);
    honour_count(val, run->spec_val_samples, "val_samples", "validation", where, speak);
}
