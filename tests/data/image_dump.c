/* Test driver of the JPEG sample path: decodes FILE into one sample (or the whole image at
 * scale K/8) and writes its bytes to OUT; prints the window it used, so that
 * tests/data/reference_test.py can redo the sample with Pillow / djpeg.
 *   image_dump decode K FILE OUT                       -> "W H" (RGB HWC bytes)
 *   image_dump sample rrc|center|crop OH OW RESIZE FLIP SEED FILE OUT [bicubic]   (FILE: JPEG or PNG)
 *                                                      -> "x0 y0 x1 y1 flip clamp k" (CHW bytes)
 *   image_dump cvresize W H CN RW RH IN OUT            OpenCV's linear resize of IN (H x W x CN
 *                                                      bytes) to RH x RW, written as CN planes
 *   image_dump cvdecode GRAY FILE OUT                  -> "W H" (HWC bytes, as cv::imread, EXIF
 *                                                      orientation applied)
 *   image_dump caffe crop|center OH OW RH RW GRAY FLIP SEED FILE OUT [pillow]
 *                                                      Caffe's ImageData sample (resize to RH x RW
 *                                                      with OpenCV's filter, or Pillow's)
 *                                                      -> "top left flip" (CHW bytes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_image.h"

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) rt_die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = rt_xmalloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) rt_die("cannot read %s", path);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void spill(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) rt_die("cannot write %s", path);
}

int main(int argc, char **argv) {
    char why[256];
    rt_jpeg *j = rt_jpeg_new();
    size_t len;
    if (argc == 5 && !strcmp(argv[1], "decode")) {
        uint8_t *buf = slurp(argv[3], &len);
        const uint8_t *rgb;
        int w, h;
        if (rt_jpeg_decode(j, buf, len, atoi(argv[2]), &rgb, &w, &h, why, sizeof why)) {
            printf("error %s\n", why);
            return 2;
        }
        spill(argv[4], rgb, (size_t)w * h * 3);
        printf("%d %d\n", w, h);
        free(buf);
    } else if ((argc == 10 || (argc == 11 && !strcmp(argv[10], "bicubic"))) && !strcmp(argv[1], "sample")) {
        rt_image_transform t = { .out_h = atoi(argv[3]), .out_w = atoi(argv[4]), .resize = atoi(argv[5]),
                                 .flip = atoi(argv[6]), .scale = { 0.08f, 1.0f }, .ratio = { 0.75f, 4.0f / 3.0f },
                                 .filter = argc == 11 ? RT_IMG_BICUBIC : RT_IMG_BILINEAR };
        t.mode = !strcmp(argv[2], "rrc") ? RT_IMG_RRC : !strcmp(argv[2], "center") ? RT_IMG_CENTER : RT_IMG_RANDOM_CROP;
        uint64_t seed = strtoull(argv[7], NULL, 10);
        uint8_t *buf = slurp(argv[8], &len);
        int W, H;
        const char *kind = rt_image_sniff(buf, len);
        int png = kind && !strcmp(kind, "PNG");   /* decoded whole: no DCT scale */
        uint8_t *png_rgb = NULL;
        size_t png_cap = 0;
        if (png ? rt_png_decode(buf, len, &png_rgb, &png_cap, &W, &H, why, sizeof why)
                : rt_jpeg_header(j, buf, len, &W, &H, NULL, why, sizeof why)) {
            printf("error %s\n", why);
            return 2;
        }
        free(png_rgb);
        rt_image_window win;
        rt_image_plan(&t, W, H, seed, &win);
        uint8_t *chw = rt_xmalloc((size_t)3 * t.out_h * t.out_w);
        if (rt_jpeg_sample(j, buf, len, &t, seed, chw, why, sizeof why)) {
            printf("error %s\n", why);
            return 2;
        }
        /* the scale rt_jpeg_sample picks, for the reference */
        int k = 8;
        for (int s = 1; s < 8 && !png; s++)
            if ((win.x1 - win.x0) * s / 8 >= t.out_w && (win.y1 - win.y0) * s / 8 >= t.out_h) { k = s; break; }
        spill(argv[9], chw, (size_t)3 * t.out_h * t.out_w);
        printf("%.17g %.17g %.17g %.17g %d %d %d\n", win.x0, win.y0, win.x1, win.y1, win.flip,
               win.clamp_to_window, k);
        free(chw);
        free(buf);
    } else if (argc == 9 && !strcmp(argv[1], "cvresize")) {
        int w = atoi(argv[2]), h = atoi(argv[3]), cn = atoi(argv[4]), rw = atoi(argv[5]), rh = atoi(argv[6]);
        uint8_t *src = slurp(argv[7], &len);
        if (len != (size_t)w * h * cn) rt_die("%s: %zu bytes, not %d x %d x %d", argv[7], len, h, w, cn);
        rt_image_window win = { .rw = rw, .rh = rh };
        uint8_t *out = rt_xmalloc((size_t)cn * rw * rh);
        rt_image_cv_linear(out, rh, rw, src, cn, w, h, &win);
        spill(argv[8], out, (size_t)cn * rw * rh);
        free(out);
        free(src);
    } else if (argc == 5 && !strcmp(argv[1], "cvdecode")) {
        int gray = atoi(argv[2]), w, h;
        uint8_t *buf = slurp(argv[3], &len), *png_px = NULL;
        size_t png_cap = 0;
        const uint8_t *px;
        const char *kind = rt_image_sniff(buf, len);
        int orientation = 1;
        int rc = kind && !strcmp(kind, "PNG")
                     ? rt_png_decode_opencv(buf, len, gray, &png_px, &png_cap, &w, &h, &orientation, why, sizeof why)
                     : rt_jpeg_decode_opencv(j, buf, len, gray, &px, &w, &h, why, sizeof why);
        if (rc) {
            printf("error %s\n", why);
            return 2;
        }
        if (!png_px) orientation = rt_jpeg_exif_orientation(buf, len);
        const int cn = gray ? 1 : 3;
        uint8_t *upright = rt_xmalloc((size_t)w * h * cn);
        if (rt_image_orient(upright, png_px ? png_px : px, w, h, cn, orientation, &w, &h)) px = upright;
        else px = png_px ? png_px : px;
        spill(argv[4], px, (size_t)w * h * cn);
        printf("%d %d\n", w, h);
        free(upright);
        free(png_px);
        free(buf);
    } else if ((argc == 12 || (argc == 13 && !strcmp(argv[12], "pillow"))) && !strcmp(argv[1], "caffe")) {
        rt_image_transform t = { .mode = !strcmp(argv[2], "center") ? RT_IMG_CENTER : RT_IMG_RANDOM_CROP,
                                 .out_h = atoi(argv[3]), .out_w = atoi(argv[4]), .resize_h = atoi(argv[5]),
                                 .resize_w = atoi(argv[6]), .gray = atoi(argv[7]), .flip = atoi(argv[8]),
                                 .filter = argc == 13 ? RT_IMG_BILINEAR : RT_IMG_CV_LINEAR };
        uint64_t seed = strtoull(argv[9], NULL, 10);
        uint8_t *buf = slurp(argv[10], &len);
        size_t bytes = (size_t)(t.gray ? 1 : 3) * t.out_h * t.out_w;
        uint8_t *chw = rt_xmalloc(bytes);
        rt_image_window place;
        if (rt_jpeg_sample_placed(j, buf, len, &t, seed, chw, &place, why, sizeof why)) {
            printf("error %s\n", why);
            return 2;
        }
        spill(argv[11], chw, bytes);
        printf("%ld %ld %d\n", place.top, place.left, place.flip);
        free(chw);
        free(buf);
    } else {
        rt_jpeg_free(j);
        fprintf(stderr, "usage: see the comment at the top of tests/data/image_dump.c\n");
        return 1;
    }
    rt_jpeg_free(j);
    return 0;
}
