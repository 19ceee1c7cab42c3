/* Checkpoints: save/load round trip, find_latest, keep_last pruning, directory creation. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rt_checkpoint.h"
#include "rt_rng.h"
#include "testlib.h"

static const char *HASH = "3f2a9c0d5e6b7a8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e";

static int count_files(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    if (d) closedir(d);
    return n;
}

static void save_small(const char *dir, int64_t step, int keep) {
    float x[4] = {(float)step, 1, 2, 3};
    rt_ckpt_section s = {"params", x, sizeof x};
    rt_err e;
    CHECK(rt_ckpt_save(dir, HASH, step, 0, &s, 1, keep, NULL, 0, &e) == RT_OK);
}

int main(void) {
    char root[] = "/tmp/test_ckpt_roundtrip.XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/nested/out", root);   /* created on save */

    enum { N = 300007 };   /* odd size; 1.2 MB crosses the 1 MiB read chunk */
    float *params = malloc(N * sizeof(float)), *mom = malloc(N * sizeof(float));
    rt_rng rng, rng_back;
    rt_rng_init(&rng, 99, RT_STREAM_INIT);
    for (int i = 0; i < N; i++) { params[i] = rt_rng_normal(&rng); mom[i] = -params[i] * 0.5f; }
    int32_t order[3] = {7, 8, 9};
    rt_ckpt_section secs[] = {
        {"params", params, N * sizeof(float)},
        {"momentum", mom, N * sizeof(float)},
        {"rng", &rng, sizeof rng},
        {"data_order", order, sizeof order},
        {"empty", NULL, 0},
    };
    char path[1024];
    rt_err e;
    CHECK(rt_ckpt_save(dir, HASH, 1200, 3, secs, 5, 0, path, sizeof path, &e) == RT_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s/ckpt-000000001200.bin", dir);
    CHECK(strcmp(path, want) == 0);
    CHECK(count_files(dir, ".ckpt-") == 0);   /* no temp file left behind */

    float *p2 = calloc(N, sizeof(float)), *m2 = calloc(N, sizeof(float));
    int32_t order2[3] = {0};
    rt_ckpt_section back[] = {   /* different order than saved, and one section left out */
        {"rng", &rng_back, sizeof rng_back},
        {"momentum", m2, N * sizeof(float)},
        {"params", p2, N * sizeof(float)},
        {"data_order", order2, sizeof order2},
    };
    int64_t step = -1, epoch = -1;
    CHECK(rt_ckpt_load(path, HASH, &step, &epoch, back, 4, &e) == RT_OK);
    CHECK(step == 1200 && epoch == 3);
    CHECK(memcmp(p2, params, N * sizeof(float)) == 0);
    CHECK(memcmp(m2, mom, N * sizeof(float)) == 0);
    CHECK(memcmp(order2, order, sizeof order) == 0);
    CHECK(rng_back.key == rng.key && rng_back.counter == rng.counter);
    CHECK(rt_rng_u64(&rng_back) == rt_rng_u64(&rng));   /* the stream continues exactly */

    rt_ckpt_header h;
    CHECK(rt_ckpt_read_header(path, &h, &e) == RT_OK);
    CHECK(h.version == RT_CKPT_VERSION && h.n_sections == 5 && h.step == 1200);
    CHECK(strcmp(h.spec_hash, HASH) == 0);

    /* NULL expected hash skips the check (for --force). */
    CHECK(rt_ckpt_load(path, NULL, &step, &epoch, back, 1, &e) == RT_OK);

    /* find_latest and keep_last pruning. */
    char pdir[512], latest[1024];
    snprintf(pdir, sizeof pdir, "%s/prune", root);
    CHECK(rt_ckpt_find_latest(pdir, latest, sizeof latest) == 0);   /* missing dir: none */
    for (int s = 1; s <= 5; s++) save_small(pdir, s * 100, 2);
    CHECK(count_files(pdir, "ckpt-") == 2);
    CHECK(rt_ckpt_find_latest(pdir, latest, sizeof latest) == 1);
    snprintf(want, sizeof want, "%s/ckpt-000000000500.bin", pdir);
    CHECK(strcmp(latest, want) == 0);
    snprintf(want, sizeof want, "%s/ckpt-000000000400.bin", pdir);
    CHECK(access(want, F_OK) == 0);
    /* Saving an older step with keep_last = 1 must keep what was just written. */
    save_small(pdir, 50, 1);
    snprintf(want, sizeof want, "%s/ckpt-000000000050.bin", pdir);
    CHECK(access(want, F_OK) == 0);
    CHECK(count_files(pdir, "ckpt-") == 1);
    /* Unrelated files are never touched. */
    char other[1024];
    snprintf(other, sizeof other, "%s/ckpt-notes.txt", pdir);
    FILE *f = fopen(other, "w");
    fputs("keep me\n", f);
    fclose(f);
    save_small(pdir, 60, 1);
    CHECK(access(other, F_OK) == 0);

    free(params); free(mom); free(p2); free(m2);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    return test_finish("test_ckpt_roundtrip");
}
