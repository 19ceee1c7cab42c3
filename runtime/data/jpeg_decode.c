/* JPEG decoding with libjpeg-turbo's TurboJPEG API, one decoder per thread: RGB output for
 * every colour space JPEG files use (CMYK/YCCK converted as Pillow does, or as OpenCV does for
 * Caffe's images, gray too), DCT-domain scaling by k/8, and the whole sample path (window,
 * scale, decode, resample). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include "jpeg_internal.h"
#include "rt_core.h"
#include "rt_image.h"

rt_jpeg *rt_jpeg_new(void) {
    rt_jpeg *j = rt_xcalloc(1, sizeof *j);
    j->tj = tjInitDecompress();
    if (!j->tj) rt_die("libjpeg-turbo: cannot create a decompressor: %s", tjGetErrorStr2(NULL));
    j->region = jpeg_region_new();
    return j;
}

void rt_jpeg_free(rt_jpeg *j) {
    if (!j) return;
    tjDestroy(j->tj);
    jpeg_region_free(j->region);
    free(j->pix);
    free(j->tmp);
    free(j->aux);
    free(j->turn);
    free(j);
}

void *jpeg_grow(uint8_t **buf, size_t *cap, size_t need) {
    if (need > *cap) {
        free(*buf);
        *buf = rt_xmalloc(need);
        *cap = need;
    }
    return *buf;
}

const char *rt_image_sniff(const uint8_t *b, size_t n) {
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return "JPEG";
    if (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8)) return "PNG";
    if (n >= 6 && (!memcmp(b, "GIF87a", 6) || !memcmp(b, "GIF89a", 6))) return "GIF";
    if (n >= 2 && b[0] == 'B' && b[1] == 'M') return "BMP";
    if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4)) return "WebP";
    if (n >= 4 && (!memcmp(b, "II*\0", 4) || !memcmp(b, "MM\0*", 4))) return "TIFF";
    return NULL;
}

static int not_jpeg(const uint8_t *buf, size_t len, char *why, size_t cap) {
    if (len == 0) {
        snprintf(why, cap, "empty file");
        return 1;
    }
    const char *kind = rt_image_sniff(buf, len);
    if (kind && !strcmp(kind, "JPEG")) return 0;
    if (kind) snprintf(why, cap, "a %s image, not a JPEG", kind);
    else snprintf(why, cap, "not an image (no JPEG signature; first bytes %02x %02x %02x)",
                  buf[0], len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0);
    return 1;
}

/* After an error TurboJPEG 2.1's handle can report stale header fields for the next image
 * (seen: a valid JPEG's colour space after a truncated one): start from a fresh one. */
static int fail(rt_jpeg *j, const uint8_t *buf, size_t len, const char *what, char *why, size_t cap) {
    int truncated = len < 2 || buf[len - 2] != 0xff || buf[len - 1] != 0xd9;   /* no end-of-image marker */
    snprintf(why, cap, "%s JPEG%s: %s", truncated ? "truncated" : "corrupt",
             truncated ? " (no end-of-image marker)" : what, tjGetErrorStr2(j->tj));
    tjDestroy(j->tj);
    j->tj = tjInitDecompress();
    if (!j->tj) rt_die("libjpeg-turbo: cannot create a decompressor: %s", tjGetErrorStr2(NULL));
    return -1;
}

/* The header of a JPEG that holds an image. TurboJPEG accepts a tables-only stream (SOI,
 * tables, EOI: legal JPEG, no frame) and returns success without writing the size, so the
 * size starts at 0 here and 0 x 0 is refused: the crop planner divided by it and the pack
 * path multiplied garbage (the image fuzzer found both). */
static int read_header(rt_jpeg *j, const uint8_t *buf, size_t len, int *w, int *h, int *cs,
                       char *why, size_t why_cap) {
    int sub;
    *w = *h = 0;
    if (not_jpeg(buf, len, why, why_cap)) return -1;
    if (tjDecompressHeader3(j->tj, buf, (unsigned long)len, w, h, &sub, cs) != 0)
        return fail(j, buf, len, " header", why, why_cap);
    if (*w < 1 || *h < 1) {
        snprintf(why, why_cap, "a JPEG without an image (%d x %d: only tables, no frame)", *w, *h);
        return -1;
    }
    return 0;
}

int rt_jpeg_header(rt_jpeg *j, const uint8_t *buf, size_t len, int *w, int *h,
                   const char **colorspace, char *why, size_t why_cap) {
    int cs;
    if (read_header(j, buf, len, w, h, &cs, why, why_cap)) return -1;
    static const char *const names[] = { "RGB", "YCbCr", "gray", "CMYK", "YCCK" };
    if (colorspace) *colorspace = cs >= 0 && cs <= TJCS_YCCK ? names[cs] : "unknown";
    return 0;
}

/* Pillow's CMYK -> RGB for Adobe (inverted) CMYK JPEGs: r = c * k / 255, rounded as MULDIV255. */
static void cmyk_to_rgb(uint8_t *rgb, const uint8_t *cmyk, size_t pixels) {
    for (size_t i = 0; i < pixels; i++) {
        unsigned k = cmyk[4 * i + 3];
        for (int c = 0; c < 3; c++) {
            unsigned t = cmyk[4 * i + c] * k + 128;
            rgb[3 * i + c] = (uint8_t)(((t >> 8) + t) >> 8);
        }
    }
}

int rt_jpeg_decode(rt_jpeg *j, const uint8_t *buf, size_t len, int num8, const uint8_t **rgb,
                   int *w, int *h, char *why, size_t why_cap) {
    int W, H, cs;
    if (read_header(j, buf, len, &W, &H, &cs, why, why_cap)) return -1;
    tjscalingfactor sf = { num8, 8 };
    int sw = TJSCALED(W, sf), sh = TJSCALED(H, sf);
    int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    size_t px = (size_t)sw * sh;
    uint8_t *out = jpeg_grow(&j->pix, &j->pix_cap, px * (cmyk ? 7 : 3));   /* CMYK + its RGB after it */
    uint8_t *dec = cmyk ? out + px * 3 : out;
    if (tjDecompress2(j->tj, buf, (unsigned long)len, dec, sw, 0, sh, cmyk ? TJPF_CMYK : TJPF_RGB, 0) != 0) {
        const char *msg = tjGetErrorStr2(j->tj);
        /* Warnings (extraneous bytes and the like) leave a complete image, as for Pillow; a
         * premature end leaves grey rows, so the file counts as truncated. */
        if (tjGetErrorCode(j->tj) != TJERR_WARNING || strstr(msg, "Premature end")) return fail(j, buf, len, "", why, why_cap);
    }
    if (cmyk) cmyk_to_rgb(out, dec, px);
    *rgb = out;
    *w = sw;
    *h = sh;
    return 0;
}

/* OpenCV's CMYK conversions (modules/imgcodecs/src/utils.cpp, icvCvt_CMYK2BGR_8u_C4C3R and
 * icvCvt_CMYK2Gray_8u_C4C1R): each ink becomes k - ((255 - ink) * k >> 8); gray is then
 * (0.299 R + 0.587 G + 0.114 B) in 14-bit fixed point, rounded. */
static void cmyk_to_opencv(uint8_t *out, const uint8_t *cmyk, size_t pixels, int gray) {
    for (size_t i = 0; i < pixels; i++) {
        int k = cmyk[4 * i + 3], v[3];
        for (int c = 0; c < 3; c++) v[c] = k - ((255 - cmyk[4 * i + c]) * k >> 8);
        if (gray) out[i] = (uint8_t)((v[2] * 1868 + v[1] * 9617 + v[0] * 4899 + (1 << 13)) >> 14);
        else out[3 * i] = (uint8_t)v[0], out[3 * i + 1] = (uint8_t)v[1], out[3 * i + 2] = (uint8_t)v[2];
    }
}

int rt_jpeg_decode_opencv(rt_jpeg *j, const uint8_t *buf, size_t len, int gray, const uint8_t **px, int *w,
                          int *h, char *why, size_t why_cap) {
    int W, H, cs;
    if (read_header(j, buf, len, &W, &H, &cs, why, why_cap)) return -1;
    const int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK, cn = gray ? 1 : 3;
    size_t n = (size_t)W * H;
    uint8_t *out = jpeg_grow(&j->pix, &j->pix_cap, n * (cmyk ? cn + 4 : cn));
    uint8_t *dec = cmyk ? out + n * cn : out;
    /* libjpeg's own grayscale output: a YCbCr image's Y plane, an RGB one's Y computed */
    int pf = cmyk ? TJPF_CMYK : gray ? TJPF_GRAY : TJPF_RGB;
    if (tjDecompress2(j->tj, buf, (unsigned long)len, dec, W, 0, H, pf, 0) != 0) {
        const char *msg = tjGetErrorStr2(j->tj);
        if (tjGetErrorCode(j->tj) != TJERR_WARNING || strstr(msg, "Premature end")) return fail(j, buf, len, "", why, why_cap);
    }
    if (cmyk) cmyk_to_opencv(out, dec, n, gray);
    *px = out, *w = W, *h = H;
    return 0;
}

/* The smallest k/8 (libjpeg-turbo scales by 1/8..8/8) at which the window still spans the
 * output: shrinking in the DCT costs almost nothing, the resampler then shrinks the rest. */
static int choose_scale(const rt_image_window *win, int out_w, int out_h) {
    double ww = win->x1 - win->x0, wh = win->y1 - win->y0;
    for (int k = 1; k < 8; k++)
        if (ww * k / 8 >= out_w && wh * k / 8 >= out_h) return k;
    return 8;
}

/* A JPEG ends with its end-of-image marker (some writers append a few bytes after it). The
 * sample path stops decoding after the window, so it looks for the marker first: a truncated
 * file then fails for every crop, as it does for a whole-image decoder. */
static int has_end_marker(const uint8_t *buf, size_t len) {
    size_t from = len > 4096 ? len - 4096 : 0;
    for (size_t i = len; i-- > from + 1;)
        if (buf[i - 1] == 0xff && buf[i] == 0xd9) return 1;
    return 0;
}

static int floor_at_least(double v, int lo) { int i = (int)floor(v); return i < lo ? lo : i; }
static int ceil_at_most(double v, int hi) { int i = (int)ceil(v); return i > hi ? hi : i; }

/* A PNG sample: the whole image decoded, then the same window and resampler as a JPEG's. */
static int png_sample(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                      uint64_t sample_seed, uint8_t *chw, rt_image_window *win, char *why, size_t why_cap) {
    int W, H;
    if (rt_png_decode(buf, len, &j->pix, &j->pix_cap, &W, &H, why, why_cap)) return -1;
    rt_image_plan(t, W, H, sample_seed, win);
    uint8_t *tmp = jpeg_grow(&j->tmp, &j->tmp_cap, rt_image_resample_tmp_bytes(H, t->out_w));
    rt_image_resample(chw, t->out_h, t->out_w, j->pix, W, H, win, tmp);
    return 0;
}

/* win receives the sample's window (in the decoder's coordinates: DCT-scaled, region-relative),
 * its flip and its place in the resized image. */
static int sample_rgb(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                   uint64_t sample_seed, uint8_t *chw, rt_image_window *winp, char *why, size_t why_cap) {
    const char *kind = rt_image_sniff(buf, len);
    if (kind && !strcmp(kind, "PNG")) return png_sample(j, buf, len, t, sample_seed, chw, winp, why, why_cap);
    int W, H;
    if (rt_jpeg_header(j, buf, len, &W, &H, NULL, why, why_cap)) return -1;
    if (!has_end_marker(buf, len)) {
        snprintf(why, why_cap, "truncated JPEG (no end-of-image marker)");
        return -1;
    }
    rt_image_window win;
    rt_image_plan(t, W, H, sample_seed, &win);
    int k = choose_scale(&win, t->out_w, t->out_h);
    tjscalingfactor sf = { k, 8 };
    int sw = TJSCALED(W, sf), sh = TJSCALED(H, sf);
    double fx = (double)sw / W, fy = (double)sh / H;
    win.x0 *= fx, win.x1 *= fx, win.y0 *= fy, win.y1 *= fy;
    /* The rows and columns the resampler reads: the window, plus the filter's reach where
     * it may read past the window (resize-then-crop modes). */
    double support = rt_image_filter_support(win.filter);
    double reach_x = win.clamp_to_window ? 0 : support * fmax(1.0, (win.x1 - win.x0) / t->out_w) + 2;
    double reach_y = win.clamp_to_window ? 0 : support * fmax(1.0, (win.y1 - win.y0) / t->out_h) + 2;
    int x0 = floor_at_least(win.x0 - reach_x, 0), x1 = ceil_at_most(win.x1 + reach_x, sw);
    int y0 = floor_at_least(win.y0 - reach_y, 0), y1 = ceil_at_most(win.y1 + reach_y, sh);
    if (x1 <= x0) x0 = 0, x1 = sw;
    if (y1 <= y0) y0 = 0, y1 = sh;
    const uint8_t *rgb;
    int rw, rh = y1 - y0;
    int rc = jpeg_region_decode(j->region, buf, len, k, &x0, x1, y0, y1, &rgb, &rw, why, why_cap);
    if (rc < 0) return -1;
    if (rc == 1) {   /* CMYK/YCCK: the whole image through TurboJPEG */
        if (rt_jpeg_decode(j, buf, len, k, &rgb, &sw, &sh, why, why_cap)) return -1;
        x0 = 0, y0 = 0, rw = sw, rh = sh;
    }
    win.x0 -= x0, win.x1 -= x0, win.y0 -= y0, win.y1 -= y0;
    uint8_t *tmp = jpeg_grow(&j->tmp, &j->tmp_cap, rt_image_resample_tmp_bytes(rh, t->out_w));
    rt_image_resample(chw, t->out_h, t->out_w, rgb, rw, rh, &win, tmp);
    *winp = win;
    return 0;
}

int rt_jpeg_sample(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                   uint64_t sample_seed, uint8_t *chw, char *why, size_t why_cap) {
    rt_image_window place;
    return rt_jpeg_sample_placed(j, buf, len, t, sample_seed, chw, &place, why, why_cap);
}

int rt_jpeg_sample_placed(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                          uint64_t sample_seed, uint8_t *chw, rt_image_window *place, char *why, size_t why_cap) {
    if (t->gray || t->filter == RT_IMG_CV_LINEAR) {
        if (jpeg_sample_opencv(j, buf, len, t, sample_seed, chw, place, why, why_cap)) return -1;
    } else if (sample_rgb(j, buf, len, t, sample_seed, chw, place, why, why_cap)) {
        return -1;
    }
    if (t->bgr && !t->gray) {   /* Caffe decodes with OpenCV: blue first */
        size_t plane = (size_t)t->out_h * t->out_w;
        for (size_t q = 0; q < plane; q++) {
            uint8_t r = chw[q];
            chw[q] = chw[2 * plane + q], chw[2 * plane + q] = r;
        }
    }
    return 0;
}
