/* libFuzzer harness over the image decoder as the loader calls it (rt_jpeg_sample: header,
 * crop window, DCT scale, partial decode, resample, flip) and as `trainc pack` calls it
 * (rt_jpeg_decode): damaged or hostile JPEG bytes must be refused with a reason or decoded
 * whole, never crash, leak or read out of bounds. The first 4 bytes pick the transform (mode,
 * flip, output size, resize/pad, crop seed, Caffe's OpenCV path: gray and/or OpenCV's resize to
 * resize_to) and the pack path's scale; the rest is the file. */
#include <stdint.h>
#include <stdlib.h>

#include "rt_image.h"

/* Images larger than this are left to the decoders' own limits: a 20-byte header may claim
 * 65535 x 65535 pixels, and decoding that (12 GB) is a memory test, not a correctness one;
 * an hour's run at 4096 x 4096 spent its time on such images (a 524 x 31242 CMYK one took
 * over 10 s under the sanitizers) at 144 inputs a second. */
#define MAX_FUZZ_PIXELS (2048L * 2048L)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    static rt_jpeg *j;
    if (!j) j = rt_jpeg_new();   /* one per thread in the loader: reused, as there */
    const uint8_t *buf = data + 4;
    size_t len = size - 4;
    char why[512];
    int w, h;
    if (rt_jpeg_header(j, buf, len, &w, &h, NULL, why, sizeof why) == 0 && (long)w * h > MAX_FUZZ_PIXELS)
        return 0;
    rt_image_transform t = {
        .mode = (rt_image_mode)(data[0] % 3),
        .flip = data[0] >> 2 & 1,
        .out_h = 1 + data[1] % 48,
        .out_w = 1 + (data[1] >> 3) % 48,
        .scale = { 0.08f, 1 },
        .ratio = { 3 / 4.f, 4 / 3.f },
        .resize = data[3] % 64,
        .pad = data[3] >> 6,
        .gray = data[0] >> 6 & 1,
        .filter = data[0] >> 7 ? RT_IMG_CV_LINEAR : RT_IMG_BILINEAR,
    };
    if (t.filter == RT_IMG_CV_LINEAR && t.resize) t.resize_h = t.resize, t.resize_w = 1 + data[1] % 64;
    uint8_t *chw = malloc((size_t)3 * t.out_h * t.out_w);
    rt_jpeg_sample(j, buf, len, &t, data[2], chw, why, sizeof why);
    free(chw);
    const uint8_t *rgb;
    rt_jpeg_decode(j, buf, len, 1 + (data[0] >> 3) % 8, &rgb, &w, &h, why, sizeof why);
    return 0;
}
