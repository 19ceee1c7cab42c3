/* IDX file reader (the MNIST / Fashion-MNIST format), gzip or plain, with one clear message
 * for each way a file can be wrong: missing, not gzip, corrupt, mislabeled, truncated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "rt_data.h"

#define IDX_FIRST_CHUNK ((size_t)64 << 20)
#define REFETCH_HINT "re-download the dataset (Debian: apt-get install --reinstall dataset-fashion-mnist)"

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A .gz name whose bytes are not gzip would be read "transparently" by zlib as raw data
 * and then fail with a baffling bad-magic message; name the real problem instead. */
static rt_status check_gzip_magic(const char *path, rt_err *err) {
    rt_status regular = rt_require_regular_file(path, "IDX file", REFETCH_HINT, err);
    if (regular) return regular;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, REFETCH_HINT,
                       "cannot open %s: %s", path, strerror(errno));
    unsigned char m[2] = {0, 0};
    size_t got = fread(m, 1, 2, f);
    int is_dir = ferror(f) && errno == EISDIR;
    fclose(f);
    if (is_dir)
        return rt_fail(err, RT_E_FORMAT, REFETCH_HINT, "%s is a directory, not an IDX file", path);
    if (got == 0)
        return rt_fail(err, RT_E_TRUNCATED, REFETCH_HINT, "%s is empty (0 bytes)", path);
    if (ends_with(path, ".gz") && (got < 2 || m[0] != 0x1f || m[1] != 0x8b))
        return rt_fail(err, RT_E_FORMAT,
                       "re-download it; if it is an uncompressed IDX file, drop the .gz suffix",
                       "%s is not a gzip file (it ends in .gz but does not start with the gzip "
                       "magic 1f 8b)", path);
    return RT_OK;
}

static const char *kind_name(int dims) {
    return dims == 3 ? "an images file (idx3)" : dims == 1 ? "a labels file (idx1)" : "an IDX file";
}

/* Reads exactly n bytes; on a short read reports corrupt gzip or truncation. `before`: bytes
 * of the same item already read (by earlier calls), counted in the message. */
static rt_status read_exact(gzFile g, const char *path, void *dst, size_t n, long at, size_t before,
                            const char *what, rt_err *err) {
    size_t done = 0;
    while (done < n) {
        unsigned chunk = n - done > (1u << 30) ? (1u << 30) : (unsigned)(n - done);
        int r = gzread(g, (char *)dst + done, chunk);
        if (r <= 0) break;
        done += (size_t)r;
    }
    if (done == n) return RT_OK;
    int zerr = 0;
    const char *zmsg = gzerror(g, &zerr);
    size_t plen = strlen(path);   /* zlib prefixes the path; we already print it */
    if (strncmp(zmsg, path, plen) == 0 && strncmp(zmsg + plen, ": ", 2) == 0) zmsg += plen + 2;
    /* zlib inflates a whole buffer ahead of the bytes asked for, so the offset reached
     * says nothing about where the damage is: name only the zlib reason. */
    if (zerr == Z_DATA_ERROR || zerr == Z_STREAM_ERROR || zerr == Z_MEM_ERROR)
        return rt_fail(err, RT_E_FORMAT, REFETCH_HINT, "%s: corrupt gzip data (%s)", path, zmsg);
    return rt_fail(err, RT_E_TRUNCATED, REFETCH_HINT,
                   "%s is truncated: expected %zu bytes of %s after offset %ld, got %zu "
                   "(file ends at uncompressed offset %ld)", path, before + n, what, at, before + done,
                   at + (long)(before + done));
}

/* Reads on to the end so zlib verifies the gzip trailer (CRC-32 and length): a download
 * cut inside the trailer, or flipped bits in the data, are caught here. Extra bytes after
 * what the header promised are ignored. */
static rt_status check_stream_end(gzFile g, const char *path, rt_err *err) {
    char sink[4096];
    int r;
    while ((r = gzread(g, sink, sizeof sink)) > 0) {}
    int zerr = 0;
    gzerror(g, &zerr);
    if (r < 0 && zerr == Z_DATA_ERROR)
        return rt_fail(err, RT_E_FORMAT, REFETCH_HINT,
                       "%s: corrupt gzip data (the gzip checksum does not match)", path);
    if (zerr == Z_BUF_ERROR)
        return rt_fail(err, RT_E_TRUNCATED, REFETCH_HINT,
                       "%s is truncated: the gzip stream ends before its trailer", path);
    if (r < 0) return rt_fail(err, RT_E_IO, NULL, "%s: read error", path);
    return RT_OK;
}

static rt_status check_header(const char *path, const uint8_t h[4], int expect_dims, rt_err *err) {
    uint32_t magic = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (h[0] == 0 && h[1] == 0 && h[2] == 0x08 && (h[3] == 1 || h[3] == 3) && h[3] != expect_dims)
        return rt_fail(err, RT_E_FORMAT,
                       "the files look mislabeled: check which file is the images and which the "
                       "labels, and their names (<split>-images-idx3-ubyte, <split>-labels-idx1-ubyte)",
                       "%s is %s but %s was expected (IDX magic 0x%08x at offset 0)", path,
                       kind_name(h[3]), kind_name(expect_dims), magic);
    if (h[0] != 0 || h[1] != 0 || h[3] != expect_dims)
        return rt_fail(err, RT_E_FORMAT, REFETCH_HINT,
                       "%s is not %s: bad magic 0x%08x at offset 0 (expected 0x0000080%d)", path,
                       kind_name(expect_dims), magic, expect_dims);
    if (h[2] != 0x08)
        return rt_fail(err, RT_E_FORMAT, "convert the data to unsigned-byte IDX",
                       "%s: IDX element type 0x%02x is not supported (only 0x08, unsigned byte)",
                       path, h[2]);
    return RT_OK;
}

rt_status rt_idx_read(const char *path, int expect_dims, uint8_t **data, long dims[3],
                      rt_err *err) {
    *data = NULL;
    rt_status st = check_gzip_magic(path, err);
    if (st) return st;
    gzFile g = gzopen(path, "rb");
    if (!g) return rt_fail(err, RT_E_IO, NULL, "cannot open %s: %s", path, strerror(errno));
    gzbuffer(g, 1 << 17);
    uint8_t h[4], d[12];
    st = read_exact(g, path, h, 4, 0, 0, "IDX magic", err);
    if (!st) st = check_header(path, h, expect_dims, err);
    if (!st) st = read_exact(g, path, d, 4 * (size_t)expect_dims, 4, 0, "IDX dimensions", err);
    long total = 1;
    for (int i = 0; i < expect_dims && !st; i++) {
        dims[i] = (long)((uint32_t)d[4 * i] << 24 | (uint32_t)d[4 * i + 1] << 16 |
                         (uint32_t)d[4 * i + 2] << 8 | d[4 * i + 3]);
        if (dims[i] == 0)
            st = rt_fail(err, RT_E_FORMAT, REFETCH_HINT,
                         "%s: IDX dimension %d (%s) is 0 at offset %d: the file holds no %s", path,
                         i, i == 0 ? "count" : i == 1 ? "rows" : "columns", 4 + 4 * i,
                         i == 0 && expect_dims == 1 ? "labels" : "images");
        else if (dims[i] > (1L << 31) || total > (1L << 40) / dims[i])
            st = rt_fail(err, RT_E_FORMAT, REFETCH_HINT,
                         "%s: implausible IDX dimension %d = %ld at offset %d (damaged header?)",
                         path, i, dims[i], 4 + 4 * i);
        else total *= dims[i];
    }
    if (!st) {
        char what[96];
        if (expect_dims == 3)
            snprintf(what, sizeof what, "pixel data (%ld images of %ldx%ld)", dims[0], dims[1], dims[2]);
        else
            snprintf(what, sizeof what, "label data (%ld labels)", dims[0]);
        /* The buffer grows with the bytes that really arrive: a damaged header that claims a
         * terabyte ends in "truncated", not in an attempt to allocate it. */
        size_t got = 0, cap = 0, want = (size_t)total;
        while (!st && got < want) {
            cap = cap ? (want - cap < cap ? want : 2 * cap) : (want < IDX_FIRST_CHUNK ? want : IDX_FIRST_CHUNK);
            uint8_t *grown = realloc(*data, cap);
            if (!grown) rt_die("reading %s: cannot allocate %zu bytes", path, cap);
            *data = grown;
            st = read_exact(g, path, *data + got, cap - got, 4 + 4L * expect_dims, got, what, err);
            if (!st) got = cap;
        }
    }
    if (!st) st = check_stream_end(g, path, err);
    gzclose(g);
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}
