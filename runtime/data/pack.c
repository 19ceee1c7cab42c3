/* trainc pack: lists the source splits, packs their shards on all cores (each shard written
 * to a temporary name and renamed when whole; its .idx sidecar last, which marks it done),
 * then writes each split's index and classes.txt, and reports every file it converted or
 * skipped, by path and reason, with the counts. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>
#include "pack_internal.h"
#include "rt_pack.h"

typedef struct {
    const pack_options *o;
    pack_split *splits;
    int n_splits;
    int next_split, next_shard;    /* the next job, under mu */
    pthread_mutex_t mu;
} pack_jobs;

static void shard_path(char *out, size_t cap, const pack_options *o, const char *split, int k, const char *ext) {
    snprintf(out, cap, "%s/%s-%05d.%s", o->dst, split, k, ext);
}

static void write_all(FILE *f, const void *p, size_t n, const char *path) {
    if (fwrite(p, 1, n, f) != n) rt_die("trainc pack: cannot write %s: %s", path, strerror(errno));
}

static void finish_file(FILE *f, const char *tmp, const char *final) {
    if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, final))
        rt_die("trainc pack: cannot finish %s: %s", final, strerror(errno));
}

/* One shard: records for files [k*S, (k+1)*S) of the split, then the sidecar that lists them
 * ("offset length label path"), files converted ("# converted path\tnote") and skipped. */
static void pack_shard(pack_worker *pw, const pack_options *o, pack_split *sp, int k) {
    char rec[4096], rec_tmp[4200], idx[4096], idx_tmp[4200];
    shard_path(rec, sizeof rec, o, sp->name, k, "rec");
    shard_path(idx, sizeof idx, o, sp->name, k, "idx");
    if (access(idx, F_OK) == 0 && access(rec, F_OK) == 0) return;   /* done before: resume */
    snprintf(rec_tmp, sizeof rec_tmp, "%s.tmp", rec);
    snprintf(idx_tmp, sizeof idx_tmp, "%s.tmp", idx);
    FILE *fr = fopen(rec_tmp, "wb"), *fi = fopen(idx_tmp, "w");
    if (!fr || !fi) rt_die("trainc pack: cannot create %s: %s", fr ? idx_tmp : rec_tmp, strerror(errno));
    uint64_t offset = 0;
    long lo = (long)k * o->shard_records, hi = lo + o->shard_records;
    if (hi > sp->set.n) hi = sp->set.n;
    for (long i = lo; i < hi; i++) {
        char why[512], note[512] = "";
        size_t len;
        const uint8_t *bytes;
        size_t n_bytes;
        pack_outcome what;
        if (sp->idx.images) {
            size_t px = (size_t)sp->idx.h * sp->idx.w;
            what = pack_convert_gray(pw, o, sp->idx.images + (size_t)i * px, sp->idx.w, sp->idx.h, &bytes,
                                     &n_bytes, note, sizeof note);
        } else if (image_set_read(&sp->set, i, &pw->in, &pw->in_cap, &len, why, sizeof why)) {
            snprintf(note, sizeof note, "%s", why);
            what = PACK_SKIPPED;
        } else {
            what = pack_convert(pw, o, pw->in, len, &bytes, &n_bytes, note, sizeof note);
        }
        if (what == PACK_SKIPPED) {
            fprintf(fi, "# skipped %s\t%s\n", sp->set.paths[i], note);
            continue;
        }
        if (what != PACK_KEPT) fprintf(fi, "# %s %s\t%s\n", what == PACK_CONVERTED ? "converted" : "resized", sp->set.paths[i], note);
        rt_rec_header h = { RT_REC_MAGIC, sp->labels[i], (uint32_t)n_bytes, (uint32_t)crc32(0L, bytes, (uInt)n_bytes) };
        write_all(fr, &h, sizeof h, rec_tmp);
        write_all(fr, bytes, n_bytes, rec_tmp);
        fprintf(fi, "%llu %u %d\t%s\n", (unsigned long long)offset, (unsigned)n_bytes, sp->labels[i], sp->set.paths[i]);
        offset += sizeof h + n_bytes;
    }
    finish_file(fr, rec_tmp, rec);
    finish_file(fi, idx_tmp, idx);   /* last: its presence says the shard is whole */
}

static void *pack_thread(void *arg) {
    pack_jobs *J = arg;
    pack_worker pw = { .jpeg = rt_jpeg_new(), .enc = tjInitCompress() };
    if (!pw.enc) rt_die("trainc pack: cannot create a JPEG encoder: %s", tjGetErrorStr2(NULL));
    for (;;) {
        pthread_mutex_lock(&J->mu);
        while (J->next_split < J->n_splits && J->next_shard >= J->splits[J->next_split].n_shards)
            J->next_split++, J->next_shard = 0;
        int s = J->next_split, k = J->next_shard++;
        pthread_mutex_unlock(&J->mu);
        if (s >= J->n_splits) break;
        pack_shard(&pw, J->o, &J->splits[s], k);
    }
    rt_jpeg_free(pw.jpeg);
    tjDestroy(pw.enc);
    tjFree(pw.out);
    free(pw.in);
    return NULL;
}

/* Reads the sidecars in shard order: writes the split's index and reports its files. */
static void write_index(const pack_options *o, pack_split *sp, long counts[PACK_OUTCOMES]) {
    char path[4096], tmp[4200], line[8192];
    snprintf(path, sizeof path, "%s/%s.index", o->dst, sp->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    long n = 0;
    char *body = NULL;
    size_t body_len = 0;
    FILE *mem = open_memstream(&body, &body_len);
    for (int k = 0; k < sp->n_shards; k++) {
        char idx[4096];
        shard_path(idx, sizeof idx, o, sp->name, k, "idx");
        FILE *f = fopen(idx, "r");
        if (!f) rt_die("trainc pack: cannot read %s: %s", idx, strerror(errno));
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (line[0] == '#') {
                char kind[16];
                sscanf(line, "# %15s", kind);
                pack_outcome w = !strcmp(kind, "skipped") ? PACK_SKIPPED : !strcmp(kind, "converted") ? PACK_CONVERTED : PACK_RESIZED;
                counts[w]++;
                char *file = line + 3 + strlen(kind), *tab = strchr(file, '\t');
                if (tab) *tab = 0;
                fprintf(w == PACK_SKIPPED ? stderr : stdout, "%s%s/%s: %s: %s\n", w == PACK_SKIPPED ? "warning: " : "",
                        sp->set.root, file, kind, tab ? tab + 1 : "");
                continue;
            }
            unsigned long long off;
            unsigned len;
            int lab;
            if (sscanf(line, "%llu %u %d", &off, &len, &lab) != 3) rt_die("trainc pack: %s is damaged: delete it and pack again", idx);
            fprintf(mem, "%d %llu %u %d\n", k, off, len, lab);
            n++;
        }
        fclose(f);
    }
    fclose(mem);
    counts[PACK_KEPT] += n;
    FILE *f = fopen(tmp, "w");
    if (!f) rt_die("trainc pack: cannot create %s: %s", tmp, strerror(errno));
    fprintf(f, "%s 1 %ld %d\n", RT_PACK_INDEX_MAGIC, n, sp->n_shards);
    for (int k = 0; k < sp->n_shards; k++) fprintf(f, "shard %s-%05d.rec\n", sp->name, k);
    write_all(f, body, body_len, tmp);
    free(body);
    finish_file(f, tmp, path);
}

static int usage(const char *prog, const char *why) {
    if (why) fprintf(stderr, "%s pack: error: %s\n", prog, why);
    fprintf(why ? stderr : stdout,
            "usage: %s pack SRC -o DST [--max-side N] [--quality Q] [--shard-records N] [--threads N]\n"
            "  SRC holds train/<class>/... and optionally val/<class>/... (or a flat val/ with labels.txt),\n"
            "  or IDX files: train-{images-idx3,labels-idx1}-ubyte[.gz] and optionally t10k-... (val)\n"
            "  --max-side N       re-encode images whose longer side exceeds N (default: keep)\n"
            "  --quality Q        JPEG quality of re-encoded images (default 90)\n"
            "  --shard-records N  records per shard (default 1024)\n"
            "  --threads N        packing threads (default: every core)\n", prog);
    return 2;
}

/* Options must match an earlier, interrupted pack into the same DST: DST/pack.txt says them. */
static void check_manifest(const pack_options *o) {
    char path[4096], want[8192], have[8192] = "";
    snprintf(path, sizeof path, "%s/pack.txt", o->dst);
    snprintf(want, sizeof want, "src %s\nmax_side %d\nquality %d\nshard_records %d\n", o->src, o->max_side,
             o->quality, o->shard_records);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(have, 1, sizeof have - 1, f);
        have[n] = 0;
        fclose(f);
        if (strcmp(have, want))
            rt_die_hint("resume with the same SRC and options, or pack into a new DST",
                        "trainc pack: %s was packed from another source or with other options:\n%s", o->dst, have);
        return;
    }
    f = fopen(path, "w");
    if (!f || fputs(want, f) < 0 || fclose(f)) rt_die("trainc pack: cannot write %s: %s", path, strerror(errno));
}

int rt_pack_main(const char *prog, int argc, char **argv) {
    pack_options o = { .quality = 90, .shard_records = 1024 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-o") && has) o.dst = argv[++i];
        else if (!strcmp(a, "--max-side") && has) o.max_side = atoi(argv[++i]);
        else if (!strcmp(a, "--quality") && has) o.quality = atoi(argv[++i]);
        else if (!strcmp(a, "--shard-records") && has) o.shard_records = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && has) o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(prog, NULL), 0;
        else if (a[0] == '-') return usage(prog, "unknown or incomplete option");
        else if (o.src) return usage(prog, "pack takes one SRC");
        else o.src = a;
    }
    if (!o.src || !o.dst) return usage(prog, "pack needs SRC and -o DST");
    if (o.quality < 1 || o.quality > 100 || o.shard_records < 1 || o.max_side < 0 || o.threads < 0)
        return usage(prog, "--quality is 1..100, --shard-records and --threads positive, --max-side >= 0");
    if (o.threads == 0) o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pack_split splits[2] = { { .name = "train" }, { .name = "val" } };
    int n_splits = 0, idx = pack_idx_source(o.src);
    for (int s = 0; s < 2; s++) {
        if (idx) {   /* IDX files: t10k is the val split */
            if (!pack_idx_open(&splits[s], o.src, s ? "t10k" : "train")) break;
            splits[s].n_shards = (int)((splits[s].set.n + o.shard_records - 1) / o.shard_records);
            n_splits++;
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o.src, splits[s].name);
        struct stat st;
        if (s == 1 && stat(path, &st) != 0) break;   /* no validation split */
        rt_status bad = image_folder_open(&splits[s].set, &splits[s].labels, path, s ? &splits[0].set : NULL, NULL);
        (void)bad;
        splits[s].n_shards = (int)((splits[s].set.n + o.shard_records - 1) / o.shard_records);
        n_splits++;
    }
    if (mkdir(o.dst, 0777) != 0 && errno != EEXIST) rt_die("trainc pack: cannot create %s: %s", o.dst, strerror(errno));
    check_manifest(&o);
    pack_jobs J = { .o = &o, .splits = splits, .n_splits = n_splits };
    pthread_mutex_init(&J.mu, NULL);
    pthread_t *th = rt_xcalloc((size_t)o.threads, sizeof *th);
    for (int t = 0; t < o.threads; t++)
        if (pthread_create(&th[t], NULL, pack_thread, &J)) rt_die("trainc pack: cannot start thread %d", t + 1);
    for (int t = 0; t < o.threads; t++) pthread_join(th[t], NULL);
    free(th);
    pthread_mutex_destroy(&J.mu);
    char path[4096];
    snprintf(path, sizeof path, "%s/classes.txt", o.dst);
    FILE *f = fopen(path, "w");
    if (!f) rt_die("trainc pack: cannot write %s: %s", path, strerror(errno));
    for (int k = 0; k < splits[0].set.n_classes; k++) fprintf(f, "%s\n", splits[0].set.classes[k]);
    if (fclose(f)) rt_die("trainc pack: cannot write %s", path);
    for (int s = 0; s < n_splits; s++) {
        long c[PACK_OUTCOMES] = { 0 };
        write_index(&o, &splits[s], c);
        printf("%s: %ld records in %d shard%s (%ld converted, %ld resized), %ld files skipped\n", splits[s].name,
               c[PACK_KEPT], splits[s].n_shards, splits[s].n_shards == 1 ? "" : "s", c[PACK_CONVERTED],
               c[PACK_RESIZED], c[PACK_SKIPPED]);
    }
    for (int s = 0; s < n_splits; s++) {
        image_set_free(&splits[s].set);
        free(splits[s].labels);
        if (splits[s].idx.images) rt_dataset_free(&splits[s].idx);
    }
    return 0;
}
