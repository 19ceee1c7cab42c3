/* IDX reader: the real Fashion-MNIST test split, then broken files generated here, each of
 * which must give its own clear message naming the path. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "rt_data.h"
#include "testlib.h"

static char root[] = "/tmp/test_data_idx.XXXXXX";

static void expect(rt_status got, rt_status want, const rt_err *e, const char *a, const char *b) {
    if (got != want) {
        fprintf(stderr, "  expected %s, got %s: %s\n", rt_status_name(want), rt_status_name(got),
                got ? e->msg : "(success)");
        test_failures++;
        return;
    }
    if ((a && !strstr(e->msg, a)) || (b && !strstr(e->msg, b))) {
        fprintf(stderr, "  message lacks \"%s\" / \"%s\":\n    %s\n", a ? a : "", b ? b : "", e->msg);
        test_failures++;
    }
    printf("ok: error: %s\n      HINT: %s\n", e->msg, e->hint);
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* Writes an IDX file into its own directory: dims[0..ndims), payload_bytes of data
 * (which may disagree with the dims, to make truncated files). */
static void write_idx(const char *path, uint32_t magic, int ndims, const uint32_t *dims,
                      long payload_bytes, uint8_t fill, int gz) {
    uint8_t hdr[16];
    put_be32(hdr, magic);
    for (int i = 0; i < ndims; i++) put_be32(hdr + 4 + 4 * i, dims[i]);
    uint8_t *data = malloc((size_t)payload_bytes + 1);
    for (long i = 0; i < payload_bytes; i++) data[i] = (uint8_t)(fill == 255 ? i % 10 : fill);
    if (gz) {
        gzFile g = gzopen(path, "wb");
        gzwrite(g, hdr, 4 + 4 * (unsigned)ndims);
        if (payload_bytes) gzwrite(g, data, (unsigned)payload_bytes);
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(hdr, 1, 4 + 4 * (size_t)ndims, f);
        fwrite(data, 1, (size_t)payload_bytes, f);
        fclose(f);
    }
    free(data);
}

/* A fresh split directory holding a good pair of files (n images of 4x4, labels 0..9). */
static void make_split(char *dir, size_t cap, const char *name, int gz) {
    snprintf(dir, cap, "%s/%s", root, name);
    mkdir(dir, 0755);
    char p[1024];
    uint32_t idims[3] = {20, 4, 4}, ldims[1] = {20};
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte%s", dir, gz ? ".gz" : "");
    write_idx(p, 0x803, 3, idims, 20 * 16, 7, gz);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte%s", dir, gz ? ".gz" : "");
    write_idx(p, 0x801, 1, ldims, 20, 255, gz);
}

static void real_data(void) {
    rt_dataset ds;
    rt_err e;
    if (access(RT_DEFAULT_DATA_DIR "/t10k-images-idx3-ubyte.gz", R_OK) != 0) {
        fprintf(stderr, "Fashion-MNIST not installed at %s: cannot check the real data\n",
                RT_DEFAULT_DATA_DIR);
        test_failures++;
        return;
    }
    rt_status st = rt_dataset_load_idx(&ds, RT_DEFAULT_DATA_DIR, "t10k", 10, &e);
    CHECK(st == RT_OK);
    if (st) { fprintf(stderr, "%s\n", e.msg); return; }
    CHECK(ds.n == 10000 && ds.c == 1 && ds.h == 28 && ds.w == 28 && ds.classes == 10);
    long per_class[10] = {0};
    int bad = 0;
    for (long i = 0; i < ds.n; i++) {
        if (ds.labels[i] < 0 || ds.labels[i] > 9) bad++;
        else per_class[ds.labels[i]]++;
    }
    CHECK(bad == 0);
    for (int k = 0; k < 10; k++) CHECK(per_class[k] == 1000);   /* the test split is balanced */
    double mean = 0;
    for (long i = 0; i < ds.n * 784; i++) mean += ds.images[i];
    mean /= ds.n * 784.0 * 255.0;
    CHECK(mean > 0.2 && mean < 0.4);   /* Fashion-MNIST's pixel mean is about 0.286 */
    rt_dataset_free(&ds);
    /* classes = 0 infers 10. */
    CHECK(rt_dataset_load_idx(&ds, RT_DEFAULT_DATA_DIR, "t10k", 0, &e) == RT_OK && ds.classes == 10);
    rt_dataset_free(&ds);
}

int main(void) {
    CHECK(mkdtemp(root) != NULL);
    real_data();

    rt_dataset ds;
    rt_err e;
    char dir[512], p[1024], q[1024];
    uint32_t idims[3] = {20, 4, 4}, ldims[1] = {20};

    /* Good synthetic-IDX files, gzip and plain. */
    make_split(dir, sizeof dir, "good_gz", 1);
    CHECK(rt_dataset_load_idx(&ds, dir, "train", 10, &e) == RT_OK);
    CHECK(ds.n == 20 && ds.h == 4 && ds.w == 4 && ds.labels[13] == 3 && ds.images[5] == 7);
    rt_dataset_free(&ds);
    make_split(dir, sizeof dir, "good_plain", 0);
    CHECK(rt_dataset_load_idx(&ds, dir, "train", 10, &e) == RT_OK);
    CHECK(ds.n == 20 && ds.labels[19] == 9);
    rt_dataset_free(&ds);

    /* Missing directory, missing file. */
    expect(rt_dataset_load_idx(&ds, "/nonexistent/fmnist", "train", 10, &e), RT_E_NOT_FOUND, &e,
           "/nonexistent/fmnist", "does not exist");
    make_split(dir, sizeof dir, "missing", 1);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte.gz", dir);
    unlink(p);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_NOT_FOUND, &e, "missing file", p);
    expect(rt_dataset_load_idx(&ds, dir, "t10k", 10, &e), RT_E_NOT_FOUND, &e,
           "t10k-images-idx3-ubyte.gz", NULL);

    /* Not gzip: a text file named .gz. */
    make_split(dir, sizeof dir, "notgz", 1);
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", dir);
    FILE *f = fopen(p, "w");
    fputs("<html>404 Not Found</html>\n", f);
    fclose(f);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_FORMAT, &e, p, "not a gzip file");

    /* Corrupt gzip: damage the compressed stream after the gzip header. */
    make_split(dir, sizeof dir, "corrupt", 1);
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", dir);
    f = fopen(p, "r+b");
    fseek(f, 12, SEEK_SET);
    for (int i = 0; i < 8; i++) fputc(0xff, f);
    fclose(f);
    rt_status st = rt_dataset_load_idx(&ds, dir, "train", 10, &e);
    CHECK(st == RT_E_FORMAT || st == RT_E_TRUNCATED);
    if (st) expect(st, st, &e, p, "gzip");   /* either way the message must say gzip */

    /* Mislabeled: the labels file where the images file should be. */
    make_split(dir, sizeof dir, "swapped", 1);
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", dir);
    snprintf(q, sizeof q, "%s/train-labels-idx1-ubyte.gz", dir);
    write_idx(p, 0x801, 1, ldims, 20, 1, 1);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_FORMAT, &e,
           "is a labels file (idx1) but an images file (idx3) was expected", p);
    CHECK(strstr(e.hint, "mislabeled") != NULL);
    /* ...and garbage magic. */
    write_idx(p, 0x12345678, 3, idims, 320, 1, 1);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_FORMAT, &e, "bad magic 0x12345678", p);

    /* Truncated: the header promises 20 images of 4x4 = 320 bytes, the file has 100. */
    make_split(dir, sizeof dir, "trunc", 1);
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", dir);
    write_idx(p, 0x803, 3, idims, 100, 1, 1);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_TRUNCATED, &e,
           "expected 320 bytes", "got 100");
    /* Truncated gzip stream itself (cut the compressed file in half), plain file too. */
    make_split(dir, sizeof dir, "trunc_plain", 0);
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte", dir);
    CHECK(truncate(p, 16 + 50) == 0);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_TRUNCATED, &e, p, "got 50");

    /* A gzip stream cut short (an interrupted download). */
    make_split(dir, sizeof dir, "trunc_gz", 1);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte.gz", dir);
    struct stat sb;
    stat(p, &sb);
    CHECK(truncate(p, sb.st_size - 12) == 0);   /* drops the gzip trailer and some data */
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_TRUNCATED, &e, p, "truncated");

    /* Only the gzip trailer cut: every data byte arrived, the stream is still incomplete. */
    make_split(dir, sizeof dir, "trunc_trailer", 1);
    snprintf(p, sizeof p, "%s/train-labels-idx1-ubyte.gz", dir);
    stat(p, &sb);
    CHECK(truncate(p, sb.st_size - 3) == 0);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_TRUNCATED, &e, p, "trailer");

    /* Count mismatch. */
    make_split(dir, sizeof dir, "count", 1);
    snprintf(q, sizeof q, "%s/train-labels-idx1-ubyte.gz", dir);
    uint32_t l19[1] = {19};
    write_idx(q, 0x801, 1, l19, 19, 1, 1);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_MISMATCH, &e,
           "has 19 labels", "has 20 images");

    /* Label out of range for 10 classes. */
    make_split(dir, sizeof dir, "range", 1);
    snprintf(q, sizeof q, "%s/train-labels-idx1-ubyte.gz", dir);
    write_idx(q, 0x801, 1, ldims, 20, 12, 1);
    expect(rt_dataset_load_idx(&ds, dir, "train", 10, &e), RT_E_RANGE, &e, "label 12 at index 0",
           "outside 0..9");

    /* Synthetic dataset: deterministic, labels in range. */
    rt_dataset a, b;
    rt_dataset_synthetic(&a, 50, 3, 8, 8, 5, 11);
    rt_dataset_synthetic(&b, 50, 3, 8, 8, 5, 11);
    CHECK(memcmp(a.images, b.images, 50 * 3 * 64) == 0 && memcmp(a.labels, b.labels, 50 * 4) == 0);
    for (int i = 0; i < 50; i++) CHECK(a.labels[i] >= 0 && a.labels[i] < 5);
    rt_dataset_free(&a);
    rt_dataset_free(&b);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    return test_finish("test_data_idx");
}
