/* Checkpoints: every bad file gives its own clear message, and a failed save loses nothing. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rt_checkpoint.h"
#include "testlib.h"

static const char *HASH_A = "aaaa1111bbbb2222cccc3333dddd4444eeee5555ffff66667777888899990000";
static const char *HASH_B = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
enum { N = 1000 };
static float params[N], back[N];
static char root[] = "/tmp/test_ckpt_errors.XXXXXX";

/* Checks the status and that the message contains every given fragment. */
static void expect(rt_status got, rt_status want, const rt_err *e, const char *a, const char *b) {
    if (got != want) {
        fprintf(stderr, "  expected status %s, got %s: %s\n", rt_status_name(want),
                rt_status_name(got), got ? e->msg : "");
        test_failures++;
        return;
    }
    if ((a && !strstr(e->msg, a)) || (b && !strstr(e->msg, b))) {
        fprintf(stderr, "  message lacks \"%s\" / \"%s\":\n    %s\n", a ? a : "", b ? b : "", e->msg);
        test_failures++;
    }
    fprintf(stderr, "ok: error: %s\n      HINT: %s\n", e->msg, e->hint);
}

static rt_status load(const char *path, const char *hash, rt_err *e) {
    rt_ckpt_section s = {"params", back, sizeof back};
    int64_t step, epoch;
    return rt_ckpt_load(path, hash, &step, &epoch, &s, 1, e);
}

static void copy_file(const char *from, const char *to, long keep_bytes, long flip_at) {
    FILE *f = fopen(from, "rb");
    static unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (keep_bytes >= 0 && (size_t)keep_bytes < n) n = (size_t)keep_bytes;
    if (flip_at >= 0) buf[flip_at] ^= 0x20;
    f = fopen(to, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += e->d_name[0] != '.' || strncmp(e->d_name, ".ckpt", 5) == 0;
    if (d) closedir(d);
    return n;
}

int main(void) {
    CHECK(mkdtemp(root) != NULL);
    for (int i = 0; i < N; i++) params[i] = (float)i * 0.25f;
    rt_ckpt_section s = {"params", params, sizeof params};
    char good[1024], bad[1024];
    rt_err e;
    CHECK(rt_ckpt_save(root, HASH_A, 10, 1, &s, 1, 0, good, sizeof good, &e) == RT_OK);
    long size = sizeof params + 112 + 16 + 4 + 6 + 8 + 4;
    snprintf(bad, sizeof bad, "%s/bad.bin", root);

    /* Corrupt one byte of the data: names the section. */
    copy_file(good, bad, -1, 112 + 22 + 500);
    expect(load(bad, HASH_A, &e), RT_E_CHECKSUM, &e, "checksum mismatch in section 'params'", bad);
    /* Corrupt the header (inside the step field): header checksum, not a spec-hash complaint. */
    copy_file(good, bad, -1, 17);
    expect(load(bad, HASH_A, &e), RT_E_CHECKSUM, &e, "header checksum", NULL);
    /* Corrupt the trailer CRC. */
    copy_file(good, bad, -1, size - 7);
    expect(load(bad, HASH_A, &e), RT_E_CHECKSUM, &e, "file checksum", NULL);

    /* Truncated: expected vs actual byte counts. */
    copy_file(good, bad, size - 100, -1);
    char frag[128];
    snprintf(frag, sizeof frag, "expected %ld bytes, file has %ld", size, size - 100);
    expect(load(bad, HASH_A, &e), RT_E_TRUNCATED, &e, "truncated", frag);
    copy_file(good, bad, 50, -1);
    expect(load(bad, HASH_A, &e), RT_E_TRUNCATED, &e, "truncated", NULL);

    /* Not a checkpoint at all. */
    FILE *f = fopen(bad, "w");
    fputs("name: \"resnet\"\n", f);
    fclose(f);
    expect(load(bad, HASH_A, &e), RT_E_FORMAT, &e, "not a trainc checkpoint", bad);
    /* A future version. */
    copy_file(good, bad, -1, -1);
    f = fopen(bad, "r+b");
    fseek(f, 8, SEEK_SET);
    fputc(7, f);
    fclose(f);
    expect(load(bad, HASH_A, &e), RT_E_VERSION, &e, "format version 7", NULL);
    /* Missing file. */
    expect(load("/nonexistent/ckpt.bin", HASH_A, &e), RT_E_NOT_FOUND, &e, "/nonexistent/ckpt.bin", NULL);

    /* Foreign spec: the message names both hashes. */
    expect(load(good, HASH_B, &e), RT_E_MISMATCH, &e, HASH_A, HASH_B);
    CHECK(strstr(e.msg, "different spec") != NULL);

    /* Missing section and size mismatch name the section. */
    rt_ckpt_section want2[2] = {{"params", back, sizeof back}, {"momentum", back, sizeof back}};
    int64_t st, ep;
    expect(rt_ckpt_load(good, HASH_A, &st, &ep, want2, 2, &e), RT_E_MISMATCH, &e,
           "no section 'momentum'", NULL);
    rt_ckpt_section small = {"params", back, 16};
    expect(rt_ckpt_load(good, HASH_A, &st, &ep, &small, 1, &e), RT_E_MISMATCH, &e,
           "section 'params' has 4000 bytes", "expects 16");

    /* A save that fails part-way (file size limit standing in for a full disk) leaves the
     * previous checkpoint intact and loadable, and no temp file or new final file. */
    unlink(bad);
    int before = count_entries(root);
    struct rlimit old, lim = {.rlim_cur = 2000, .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_FSIZE, &old);
    lim.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    char path[1024] = "";
    rt_status r = rt_ckpt_save(root, HASH_A, 20, 2, &s, 1, 1, path, sizeof path, &e);
    setrlimit(RLIMIT_FSIZE, &old);
    expect(r, RT_E_IO, &e, "writing checkpoint for step 20", "File too large");
    CHECK(strstr(e.hint, "previous checkpoints") != NULL);
    CHECK(path[0] == '\0');
    CHECK(count_entries(root) == before);
    char latest[1024];
    CHECK(rt_ckpt_find_latest(root, latest, sizeof latest) == 1 && strcmp(latest, good) == 0);
    memset(back, 0, sizeof back);
    CHECK(load(good, HASH_A, &e) == RT_OK && memcmp(back, params, sizeof back) == 0);

    /* Target "directory" is a regular file. */
    char notdir[1024];
    snprintf(notdir, sizeof notdir, "%s/plainfile", root);
    fclose(fopen(notdir, "w"));
    expect(rt_ckpt_save(notdir, HASH_A, 1, 0, &s, 1, 0, NULL, 0, &e), RT_E_IO, &e,
           "cannot create checkpoint directory", "Not a directory");
    /* Unwritable directory (only meaningful when not root: root ignores permissions). */
    if (geteuid() != 0) {
        char ro[1024];
        snprintf(ro, sizeof ro, "%s/ro", root);
        mkdir(ro, 0555);
        expect(rt_ckpt_save(ro, HASH_A, 1, 0, &s, 1, 0, NULL, 0, &e), RT_E_IO, &e,
               "Permission denied", NULL);
        chmod(ro, 0755);
    }
    /* Bad arguments. */
    rt_ckpt_section noname = {"", params, 4};
    expect(rt_ckpt_save(root, HASH_A, 1, 0, &noname, 1, 0, NULL, 0, &e), RT_E_ARG, &e, "name", NULL);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    return test_finish("test_ckpt_errors");
}
