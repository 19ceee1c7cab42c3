/* What the packer does with one file: keep a good RGB JPEG as it is, re-encode one that is
 * PNG content, CMYK or grayscale (or larger than --max-side), and say why it skips the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include "pack_internal.h"

static int encode(pack_worker *pw, const uint8_t *rgb, int w, int h, int quality, char *why, size_t cap) {
    unsigned long n = pw->out_cap;
    if (tjCompress2(pw->enc, rgb, w, 0, h, TJPF_RGB, &pw->out, &n, TJSAMP_420, quality, 0) != 0) {
        snprintf(why, cap, "cannot re-encode: %s", tjGetErrorStr2(pw->enc));
        return -1;
    }
    if (n > pw->out_cap) pw->out_cap = n;   /* TurboJPEG grew the buffer with tjAlloc */
    pw->out_len = n;
    return 0;
}

/* Shrinks rgb (w x h) so that its longer side is max_side, with the loader's resampler. */
static uint8_t *shrink(const uint8_t *rgb, int w, int h, int max_side, int *nw, int *nh) {
    double f = (double)max_side / (w > h ? w : h);
    *nw = (int)(w * f + 0.5), *nh = (int)(h * f + 0.5);
    if (*nw < 1) *nw = 1;
    if (*nh < 1) *nh = 1;
    rt_image_window win = { 0, 0, w, h, 0, 1, 0, RT_IMG_BILINEAR, 0, 0, w, h };
    uint8_t *tmp = rt_xmalloc(rt_image_resample_tmp_bytes(h, *nw));
    uint8_t *chw = rt_xmalloc((size_t)3 * *nw * *nh), *hwc = rt_xmalloc((size_t)3 * *nw * *nh);
    rt_image_resample(chw, *nh, *nw, rgb, w, h, &win, tmp);
    size_t plane = (size_t)*nw * *nh;
    for (size_t p = 0; p < plane; p++)
        for (int c = 0; c < 3; c++) hwc[3 * p + c] = chw[c * plane + p];
    free(tmp);
    free(chw);
    return hwc;
}

pack_outcome pack_convert(pack_worker *pw, const pack_options *o, const uint8_t *buf, size_t len,
                          const uint8_t **out, size_t *out_len, char *note, size_t cap) {
    const char *kind = rt_image_sniff(buf, len);
    const uint8_t *rgb = NULL;
    uint8_t *owned = NULL;
    int w = 0, h = 0, convert = 0;
    const char *cs = "YCbCr";
    if (len == 0) {
        snprintf(note, cap, "empty file");
        return PACK_SKIPPED;
    }
    if (kind && !strcmp(kind, "PNG")) {
        size_t owned_cap = 0;
        if (rt_png_decode(buf, len, &owned, &owned_cap, &w, &h, note, cap)) {
            free(owned);
            return PACK_SKIPPED;
        }
        rgb = owned, convert = 1;
        snprintf(note, cap, "PNG content under a JPEG name, re-encoded as JPEG");
    } else if (!kind) {
        snprintf(note, cap, "not an image (first bytes %02x %02x %02x)", buf[0], len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0);
        return PACK_SKIPPED;
    } else if (strcmp(kind, "JPEG")) {
        snprintf(note, cap, "a %s image: convert it to JPEG", kind);
        return PACK_SKIPPED;
    } else {
        if (rt_jpeg_header(pw->jpeg, buf, len, &w, &h, &cs, note, cap)) return PACK_SKIPPED;
        if (rt_jpeg_decode(pw->jpeg, buf, len, 8, &rgb, &w, &h, note, cap)) return PACK_SKIPPED;   /* truncated, corrupt */
        convert = strcmp(cs, "YCbCr") != 0 && strcmp(cs, "RGB") != 0;
        if (convert) snprintf(note, cap, "%s JPEG, converted to RGB", cs);
    }
    int resize = o->max_side > 0 && (w > o->max_side || h > o->max_side);
    if (!convert && !resize) {
        *out = buf, *out_len = len;
        return PACK_KEPT;
    }
    uint8_t *small = NULL;
    if (resize) {
        int nw, nh;
        small = shrink(rgb, w, h, o->max_side, &nw, &nh);
        rgb = small, w = nw, h = nh;
        if (!convert) snprintf(note, cap, "resized to %dx%d", w, h);
    }
    int bad = encode(pw, rgb, w, h, o->quality, note, cap);
    free(owned);
    free(small);
    if (bad) return PACK_SKIPPED;
    *out = pw->out, *out_len = pw->out_len;
    return convert ? PACK_CONVERTED : PACK_RESIZED;
}

pack_outcome pack_convert_gray(pack_worker *pw, const pack_options *o, const uint8_t *gray, int w, int h,
                               const uint8_t **out, size_t *out_len, char *note, size_t cap) {
    size_t px = (size_t)w * h;
    uint8_t *rgb = rt_xmalloc(3 * px), *small = NULL;
    for (size_t p = 0; p < px; p++) rgb[3 * p] = rgb[3 * p + 1] = rgb[3 * p + 2] = gray[p];
    const uint8_t *img = rgb;
    if (o->max_side > 0 && (w > o->max_side || h > o->max_side)) img = small = shrink(rgb, w, h, o->max_side, &w, &h);
    int bad = encode(pw, img, w, h, o->quality, note, cap);
    free(rgb);
    free(small);
    if (bad) return PACK_SKIPPED;
    *out = pw->out, *out_len = pw->out_len;
    return PACK_KEPT;
}
