/* Checkpoint reading: checks magic, version, header CRC, size, spec hash, then streams each
 * section into the caller's buffer while verifying its CRC and the whole-file CRC. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "checkpoint_format.h"

#define CORRUPT_HINT "the file is damaged; resume from an older checkpoint in the same directory"

typedef struct {
    FILE *f;
    const char *path;
    uint32_t crc;     /* of everything read so far */
    uint64_t off;
} ckpt_reader;

static int read_bytes(ckpt_reader *r, void *p, size_t n) {
    if (fread(p, 1, n, r->f) != n) return -1;
    r->crc = ckpt_crc(r->crc, p, n);
    r->off += n;
    return 0;
}

static rt_status check_header(const char *path, FILE *f, rt_ckpt_header *h, rt_err *err) {
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return rt_fail(err, RT_E_IO, NULL, "cannot stat checkpoint %s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return rt_fail(err, RT_E_ARG, "pass one of the ckpt-<step>.bin files in it (the newest "
                       "has the highest step)", "checkpoint %s is a directory, not a file", path);
    uint64_t size = (uint64_t)st.st_size;
    uint8_t b[CKPT_HEADER_BYTES] = {0};
    size_t got = fread(b, 1, sizeof b, f);
    if (got < 8 || memcmp(b, CKPT_MAGIC, 8) != 0)
        return rt_fail(err, RT_E_FORMAT, "pass a ckpt-<step>.bin file written by a trainc trainer",
                       "%s is not a trainc checkpoint (bad magic: expected \"TRAINCKP\" at offset 0)",
                       path);
    if (got < 12 || ckpt_get_u32(b + 8) != RT_CKPT_VERSION) {
        if (got >= 12)
            return rt_fail(err, RT_E_VERSION, "use the trainc version that wrote this checkpoint",
                           "checkpoint %s has format version %u; this build reads version %d",
                           path, ckpt_get_u32(b + 8), RT_CKPT_VERSION);
    }
    if (got < CKPT_HEADER_BYTES)
        return rt_fail(err, RT_E_TRUNCATED, CORRUPT_HINT,
                       "checkpoint %s is truncated: %" PRIu64 " bytes, shorter than its %d-byte header",
                       path, size, CKPT_HEADER_BYTES);
    if (ckpt_get_u32(b + CKPT_HEADER_CRC_AT) != ckpt_crc(0, b, CKPT_HEADER_CRC_AT))
        return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                       "checkpoint %s is corrupt: header checksum mismatch", path);
    h->version = ckpt_get_u32(b + 8);
    h->n_sections = ckpt_get_u32(b + 12);
    h->step = (int64_t)ckpt_get_u64(b + 16);
    h->epoch = (int64_t)ckpt_get_u64(b + 24);
    h->total_bytes = ckpt_get_u64(b + 32);
    memcpy(h->spec_hash, b + 40, RT_CKPT_MAX_HASH);
    h->spec_hash[RT_CKPT_MAX_HASH] = '\0';
    if (size < h->total_bytes)
        return rt_fail(err, RT_E_TRUNCATED, CORRUPT_HINT,
                       "checkpoint %s is truncated: expected %" PRIu64 " bytes, file has %" PRIu64
                       " (an interrupted copy?)", path, h->total_bytes, size);
    if (size > h->total_bytes)
        return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                       "checkpoint %s is corrupt: expected %" PRIu64 " bytes, file has %" PRIu64
                       " (trailing data)", path, h->total_bytes, size);
    return RT_OK;
}

#define RESUME_HINT "check the --resume path; checkpoints are named ckpt-<step>.bin"

/* A directory gets its own hint (check_header); a FIFO or a device is refused before any
 * read could block on it or trust its size. */
static rt_status check_regular(const char *path, rt_err *err) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return RT_OK;
    return rt_require_regular_file(path, "checkpoint", RESUME_HINT, err);
}

rt_status rt_ckpt_read_header(const char *path, rt_ckpt_header *h, rt_err *err) {
    rt_status regular = check_regular(path, err);
    if (regular) return regular;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO,
                       "check the --resume path; checkpoints are named ckpt-<step>.bin",
                       "cannot open checkpoint %s: %s", path, strerror(errno));
    rt_status st = check_header(path, f, h, err);
    fclose(f);
    return st;
}

/* Reads n bytes into dst (or discards them when dst is NULL), updating the file CRC;
 * returns the CRC of just these bytes, or sets *fail. */
static uint32_t read_payload(ckpt_reader *r, void *dst, uint64_t n, int *fail) {
    uint32_t crc = 0;
    static const size_t chunk = 1 << 20;
    uint8_t *scratch = dst ? NULL : rt_xmalloc(chunk);
    uint8_t *p = dst;
    while (n > 0 && !*fail) {
        size_t take = n < chunk ? (size_t)n : chunk;
        uint8_t *buf = dst ? p : scratch;
        if (read_bytes(r, buf, take)) *fail = 1;
        else crc = ckpt_crc(crc, buf, take);
        if (dst) p += take;
        n -= take;
    }
    free(scratch);
    return crc;
}

static int find_section(rt_ckpt_section *secs, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(secs[i].name, name) == 0) return i;
    return -1;
}

static rt_status read_sections(ckpt_reader *r, const rt_ckpt_header *h, rt_ckpt_section *secs,
                               int n, int *found, rt_err *err) {
    for (uint32_t s = 0; s < h->n_sections; s++) {
        uint8_t b[16 + RT_CKPT_MAX_NAME];
        uint64_t at = r->off;
        if (read_bytes(r, b, 4) || ckpt_get_u32(b) == 0 || ckpt_get_u32(b) > RT_CKPT_MAX_NAME)
            return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                           "checkpoint %s is corrupt: bad section header at offset %" PRIu64,
                           r->path, at);
        uint32_t len = ckpt_get_u32(b);
        char name[RT_CKPT_MAX_NAME + 1];
        if (read_bytes(r, name, len) || read_bytes(r, b, 12))
            return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                           "checkpoint %s is corrupt: bad section header at offset %" PRIu64,
                           r->path, at);
        name[len] = '\0';
        uint64_t bytes = ckpt_get_u64(b);
        uint32_t want_crc = ckpt_get_u32(b + 8);
        if (bytes > h->total_bytes - r->off)
            return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                           "checkpoint %s is corrupt: section '%s' at offset %" PRIu64
                           " claims %" PRIu64 " bytes, past the end of the file", r->path, name,
                           at, bytes);
        int i = find_section(secs, n, name);
        if (i >= 0 && secs[i].bytes != bytes)
            return rt_fail(err, RT_E_MISMATCH,
                           "the model or optimizer changed shape since this checkpoint was "
                           "written; resume with the spec that wrote it",
                           "checkpoint %s: section '%s' has %" PRIu64 " bytes, this trainer "
                           "expects %zu", r->path, name, bytes, secs[i].bytes);
        int fail = 0;
        uint32_t crc = read_payload(r, i >= 0 ? secs[i].data : NULL, bytes, &fail);
        if (fail)
            return rt_fail(err, RT_E_TRUNCATED, CORRUPT_HINT,
                           "checkpoint %s is truncated inside section '%s'", r->path, name);
        if (crc != want_crc)
            return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                           "checkpoint %s is corrupt: checksum mismatch in section '%s' "
                           "(offset %" PRIu64 ", %" PRIu64 " bytes)", r->path, name, at, bytes);
        if (i >= 0) found[i] = 1;
    }
    return RT_OK;
}

static rt_status check_trailer(ckpt_reader *r, rt_err *err) {
    uint32_t want = r->crc;
    uint8_t tr[CKPT_TRAILER_BYTES];
    if (fread(tr, 1, sizeof tr, r->f) != sizeof tr || memcmp(tr, CKPT_TRAILER_MAGIC, 8) != 0 ||
        ckpt_get_u32(tr + 8) != want)
        return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                       "checkpoint %s is corrupt: file checksum mismatch in the trailer at "
                       "offset %" PRIu64, r->path, r->off);
    /* The trailer's last 4 bytes are reserved and written as zeros; the file CRC does not
     * cover the trailer, so these bytes are checked here or not at all. */
    if (ckpt_get_u32(tr + 12) != 0)
        return rt_fail(err, RT_E_CHECKSUM, CORRUPT_HINT,
                       "checkpoint %s is corrupt: the trailer's reserved bytes at offset %" PRIu64
                       " are not zero", r->path, r->off + 12);
    return RT_OK;
}

static rt_status load_open(FILE *f, const char *path, const char *expected_spec_hash,
                           int64_t *step, int64_t *epoch, rt_ckpt_section *secs, int n,
                           rt_err *err) {
    rt_ckpt_header h;
    rt_status st = check_header(path, f, &h, err);
    if (st) return st;
    if (expected_spec_hash && strcmp(expected_spec_hash, h.spec_hash) != 0)
        return rt_fail(err, RT_E_MISMATCH,
                       "resume with the spec that wrote this checkpoint (compare them with "
                       "`trainc diff`), or start a fresh run in a new --out directory",
                       "checkpoint %s was written by a different spec: checkpoint spec hash %s, "
                       "this trainer's spec hash %s", path, h.spec_hash[0] ? h.spec_hash : "(none)",
                       expected_spec_hash);
    ckpt_reader r = {.f = f, .path = path, .crc = 0, .off = 0};
    uint8_t hdr[CKPT_HEADER_BYTES];
    rewind(f);
    if (read_bytes(&r, hdr, sizeof hdr))
        return rt_fail(err, RT_E_IO, NULL, "cannot read checkpoint %s", path);
    int *found = rt_xcalloc((size_t)(n > 0 ? n : 1), sizeof *found);
    st = read_sections(&r, &h, secs, n, found, err);
    if (!st) st = check_trailer(&r, err);
    for (int i = 0; i < n && !st; i++)
        if (!found[i])
            st = rt_fail(err, RT_E_MISMATCH,
                         "the checkpoint was written by a trainer with different state; "
                         "resume with the spec that wrote it",
                         "checkpoint %s has no section '%s'", path, secs[i].name);
    free(found);
    if (!st) {
        if (step) *step = h.step;
        if (epoch) *epoch = h.epoch;
    }
    return st;
}

rt_status rt_ckpt_load(const char *path, const char *expected_spec_hash, int64_t *step,
                       int64_t *epoch, rt_ckpt_section *secs, int n, rt_err *err) {
    rt_status regular = check_regular(path, err);
    if (regular) return regular;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO,
                       "check the --resume path; checkpoints are named ckpt-<step>.bin",
                       "cannot open checkpoint %s: %s", path, strerror(errno));
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    rt_status st = load_open(f, path, expected_spec_hash, step, epoch, secs, n, err);
    fclose(f);
    return st;
}
