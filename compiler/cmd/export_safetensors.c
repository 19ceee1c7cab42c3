/* Writes a safetensors file from its specification (huggingface/safetensors, "Format"):
 *   8 bytes: N, the header's length, unsigned little-endian
 *   N bytes: a JSON object, UTF-8: per tensor "name": {"dtype": "F32", "shape": [..],
 *            "data_offsets": [begin, end]} (byte offsets into the data that follows), and
 *            "__metadata__": {string: string}; padded with spaces to a multiple of 8 bytes
 *   the data: every tensor's bytes, little-endian, row-major, back to back without holes.
 * Tensors are written in the order given; the reader (safetensors.torch.load_file, or the
 * format's few lines in tests/interop/) looks them up by name. */
#include "export.h"
#include "output_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dtype_name(export_dtype d) { return d == EXPORT_I64 ? "I64" : "F32"; }
static size_t dtype_bytes(export_dtype d) { return d == EXPORT_I64 ? 8 : 4; }

size_t export_tensor_bytes(const export_tensor *t) {
    size_t n = 1;
    for (int k = 0; k < t->ndim; k++) n *= (size_t)t->shape[k];
    return n * dtype_bytes(t->dtype);
}

/* A JSON string: the names are layer names (letters, digits, dots, underscores), but a
 * quote or backslash in a spec's name must not break the header. */
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int export_write_safetensors(const char *path, const export_tensor *ts, int n, const char *const *meta, int n_meta,
                             char *err, size_t cap) {
    char *header = NULL;
    size_t len = 0;
    FILE *h = open_memstream(&header, &len);
    if (!h) return snprintf(err, cap, "out of memory"), 1;
    fputc('{', h);
    fputs("\"__metadata__\":{", h);
    for (int i = 0; i + 1 < 2 * n_meta; i += 2) {
        if (i) fputc(',', h);
        json_string(h, meta[i]);
        fputc(':', h);
        json_string(h, meta[i + 1]);
    }
    fputc('}', h);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const export_tensor *t = &ts[i];
        size_t bytes = export_tensor_bytes(t);
        fputc(',', h);
        json_string(h, t->name);
        fprintf(h, ":{\"dtype\":\"%s\",\"shape\":[", dtype_name(t->dtype));
        for (int k = 0; k < t->ndim; k++) fprintf(h, "%s%ld", k ? "," : "", t->shape[k]);
        fprintf(h, "],\"data_offsets\":[%zu,%zu]}", at, at + bytes);
        at += bytes;
    }
    fputc('}', h);
    while ((ftell(h) % 8) != 0) fputc(' ', h);   /* the data then starts 8-byte aligned */
    fclose(h);
    output_file out;
    if (output_open(&out, path, OUTPUT_BINARY | OUTPUT_DURABLE, err, cap)) {
        free(header);
        return 1;
    }
    FILE *f = out.f;
    unsigned char le[8];
    for (int k = 0; k < 8; k++) le[k] = (unsigned char)((uint64_t)len >> (8 * k));
    int ok = fwrite(le, 1, 8, f) == 8 && fwrite(header, 1, len, f) == len;
    for (int i = 0; ok && i < n; i++) {   /* x86-64 and the format are both little-endian */
        size_t bytes = export_tensor_bytes(&ts[i]);
        ok = fwrite(ts[i].data, 1, bytes, f) == bytes;
    }
    free(header);
    if (!ok) {
        snprintf(err, cap, "writing '%s' failed: %s (any existing '%s' is unchanged)", out.tmp, strerror(errno), path);
        output_abandon(&out);
        return 1;
    }
    return output_commit(&out, err, cap);
}
