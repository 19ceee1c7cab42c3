/* Checkpoint writing: temp file in the same directory, fsync, rename, fsync the directory,
 * so a crash or a full disk never leaves a partial file under a final name. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "checkpoint_format.h"

#define SAVE_HINT_FMT "check free space (df -h %s) and that the directory is writable; " \
                      "the previous checkpoints there are untouched"

typedef struct {
    FILE *f;
    uint32_t crc;       /* of everything written so far (the trailer's CRC) */
    const char *path;
} ckpt_writer;

static int write_bytes(ckpt_writer *w, const void *p, size_t n) {
    if (n == 0) return 0;   /* fwrite(NULL, ...) is undefined even for 0 bytes */
    w->crc = ckpt_crc(w->crc, p, n);
    return fwrite(p, 1, n, w->f) == n ? 0 : -1;
}

static rt_status check_args(const char *dir, const char *spec_hash, const rt_ckpt_section *secs,
                            int n, rt_err *err) {
    if (!dir || !dir[0]) return rt_fail(err, RT_E_ARG, NULL, "checkpoint save: empty directory");
    if (spec_hash && strlen(spec_hash) > RT_CKPT_MAX_HASH)
        return rt_fail(err, RT_E_ARG, NULL, "checkpoint save: spec hash longer than %d chars",
                       RT_CKPT_MAX_HASH);
    for (int i = 0; i < n; i++) {
        size_t len = secs[i].name ? strlen(secs[i].name) : 0;
        if (len == 0 || len > RT_CKPT_MAX_NAME)
            return rt_fail(err, RT_E_ARG, NULL,
                           "checkpoint save: section %d needs a name of 1..%d chars", i,
                           RT_CKPT_MAX_NAME);
        if (secs[i].bytes && !secs[i].data)
            return rt_fail(err, RT_E_ARG, NULL, "checkpoint save: section '%s' has no data",
                           secs[i].name);
    }
    return RT_OK;
}

/* Everything after the temp file is open: header, sections, trailer, flush, fsync, close. */
static int write_all(ckpt_writer *w, const rt_ckpt_header *h, const rt_ckpt_section *secs,
                     int n) {
    uint8_t hdr[CKPT_HEADER_BYTES];
    ckpt_encode_header(hdr, h);
    if (write_bytes(w, hdr, sizeof hdr)) return -1;
    for (int i = 0; i < n; i++) {
        uint8_t sh[16 + RT_CKPT_MAX_NAME];
        uint32_t crc = ckpt_crc(0, secs[i].data, secs[i].bytes);
        size_t len = ckpt_encode_section_header(sh, secs[i].name, secs[i].bytes, crc);
        if (write_bytes(w, sh, len) || write_bytes(w, secs[i].data, secs[i].bytes)) return -1;
    }
    uint8_t tr[CKPT_TRAILER_BYTES] = {0};
    memcpy(tr, CKPT_TRAILER_MAGIC, 8);
    ckpt_put_u32(tr + 8, w->crc);
    if (fwrite(tr, 1, sizeof tr, w->f) != sizeof tr) return -1;
    if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) return -1;
    int rc = fclose(w->f);
    w->f = NULL;
    return rc == 0 ? 0 : -1;
}

static void fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    fsync(fd);   /* best effort: some filesystems refuse fsync on directories */
    close(fd);
}

rt_status rt_ckpt_save(const char *dir, const char *spec_hash, int64_t step, int64_t epoch,
                       const rt_ckpt_section *secs, int n, int keep_last, char *saved_path,
                       size_t cap, rt_err *err) {
    rt_status st = check_args(dir, spec_hash, secs, n, err);
    if (st) return st;
    char hint[512];
    snprintf(hint, sizeof hint, SAVE_HINT_FMT, dir);
    if (ckpt_mkdir_p(dir) != 0)
        return rt_fail(err, RT_E_IO, hint, "cannot create checkpoint directory %s: %s", dir,
                       strerror(errno));

    rt_ckpt_header h = {.version = RT_CKPT_VERSION, .n_sections = (uint32_t)n, .step = step,
                        .epoch = epoch, .total_bytes = CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES};
    snprintf(h.spec_hash, sizeof h.spec_hash, "%s", spec_hash ? spec_hash : "");
    for (int i = 0; i < n; i++) h.total_bytes += ckpt_section_header_bytes(secs[i].name) + secs[i].bytes;

    char final_path[4096], tmp_path[4096];
    rt_ckpt_path(dir, step, final_path, sizeof final_path);
    snprintf(tmp_path, sizeof tmp_path, "%s/.ckpt-%012" PRId64 ".tmp.XXXXXX", dir, step);
    int fd = mkstemp(tmp_path);
    if (fd < 0)
        return rt_fail(err, RT_E_IO, hint, "cannot create temporary checkpoint file in %s: %s",
                       dir, strerror(errno));
    ckpt_writer w = {.f = fdopen(fd, "wb"), .crc = 0, .path = tmp_path};
    if (!w.f) {
        close(fd);
        unlink(tmp_path);
        return rt_fail(err, RT_E_IO, hint, "cannot open %s: %s", tmp_path, strerror(errno));
    }
    setvbuf(w.f, NULL, _IOFBF, 1 << 20);
    if (write_all(&w, &h, secs, n) != 0) {
        int e = errno;
        if (w.f) fclose(w.f);
        unlink(tmp_path);
        return rt_fail(err, RT_E_IO, hint,
                       "writing checkpoint for step %" PRId64 " (%" PRIu64 " bytes) to %s failed: %s",
                       step, h.total_bytes, tmp_path, strerror(e));
    }
    if (rename(tmp_path, final_path) != 0) {
        int e = errno;
        unlink(tmp_path);
        return rt_fail(err, RT_E_IO, hint, "cannot rename %s to %s: %s", tmp_path, final_path,
                       strerror(e));
    }
    fsync_dir(dir);
    if (saved_path) snprintf(saved_path, cap, "%s", final_path);
    ckpt_prune(dir, keep_last, final_path);
    return RT_OK;
}
