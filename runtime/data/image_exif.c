/* The EXIF orientation tag as cv::imread applies it (OpenCV 3.1 and later; Caffe's ImageData
 * reads its images with it): a JPEG's APP1 "Exif" segment or a PNG's eXIf chunk holds a TIFF
 * header whose first IFD may have tag 0x0112, orientation 1..8; imgcodecs' ExifTransform then
 * flips and transposes the decoded image (2: mirror, 3: rotate 180, 4: flip upside down, 5:
 * transpose, 6: transpose + mirror (90 degrees clockwise), 7: transpose + rotate 180, 8:
 * transpose + flip upside down). Anything unreadable counts as no tag, as it does for OpenCV. */
#include <string.h>
#include "rt_image.h"

static unsigned get16(const uint8_t *p, int big) { return big ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0]; }
static uint32_t get32(const uint8_t *p, int big) {
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

int rt_exif_orientation_tiff(const uint8_t *t, size_t len) {
    if (len < 8) return 1;
    int big = t[0] == 'M' && t[1] == 'M';
    if (!big && !(t[0] == 'I' && t[1] == 'I')) return 1;
    if (get16(t + 2, big) != 42) return 1;
    uint32_t ifd = get32(t + 4, big);
    if (ifd > len - 2) return 1;
    unsigned n = get16(t + ifd, big);
    for (unsigned i = 0; i < n; i++) {
        size_t at = (size_t)ifd + 2 + (size_t)i * 12;
        if (at + 12 > len) return 1;
        if (get16(t + at, big) == 0x0112) {
            unsigned v = get16(t + at + 8, big);
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
    }
    return 1;
}

int rt_jpeg_exif_orientation(const uint8_t *b, size_t len) {
    if (len < 4 || b[0] != 0xff || b[1] != 0xd8) return 1;
    size_t at = 2;
    while (at + 4 <= len && b[at] == 0xff) {
        unsigned marker = b[at + 1];
        if (marker == 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) {   /* no length */
            at += 2;
            continue;
        }
        if (marker == 0xda || marker == 0xd9) break;   /* the scan: no more headers */
        size_t seg = (size_t)b[at + 2] << 8 | b[at + 3];
        if (seg < 2 || at + 2 + seg > len) break;
        if (marker == 0xe1 && seg >= 8 && !memcmp(b + at + 4, "Exif\0\0", 6))
            return rt_exif_orientation_tiff(b + at + 10, seg - 8);
        at += 2 + seg;
    }
    return 1;
}

int rt_image_orient(uint8_t *dst, const uint8_t *src, int w, int h, int cn, int orientation, int *ow, int *oh) {
    if (orientation < 2 || orientation > 8) return 0;
    const int transpose = orientation >= 5;
    /* after the transpose (if any): mirror columns and/or rows, per OpenCV's flip codes */
    static const int mirror[9] = { 0, 0, 1, 1, 0, 0, 1, 1, 0 }, upside[9] = { 0, 0, 0, 1, 1, 0, 0, 1, 1 };
    const int W = transpose ? h : w, H = transpose ? w : h;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int ty = upside[orientation] ? H - 1 - y : y, tx = mirror[orientation] ? W - 1 - x : x;
            int sy = transpose ? tx : ty, sx = transpose ? ty : tx;   /* the transposed image's (ty, tx) */
            memcpy(dst + ((size_t)y * W + x) * cn, src + ((size_t)sy * w + sx) * cn, (size_t)cn);
        }
    *ow = W, *oh = H;
    return orientation != 1;
}
