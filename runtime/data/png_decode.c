/* PNG content to RGB bytes (libpng's simplified API; alpha is composited on black): the
 * loader decodes a PNG in an image folder with it, and trainc pack re-encodes one as JPEG.
 * And PNG content as OpenCV's imread reads it (Caffe's images, colour or gray). */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_image.h"

int rt_png_decode(const uint8_t *buf, size_t len, uint8_t **rgb, size_t *cap, int *w, int *h,
                  char *why, size_t why_cap) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, buf, len)) {
        snprintf(why, why_cap, "a PNG that does not decode: %s", img.message);
        return -1;
    }
    img.format = PNG_FORMAT_RGB;
    size_t need = PNG_IMAGE_SIZE(img);
    if (need > *cap) {
        free(*rgb);
        *rgb = rt_xmalloc(need);
        *cap = need;
    }
    if (!png_image_finish_read(&img, NULL, *rgb, 0, NULL)) {   /* frees img on success too */
        snprintf(why, why_cap, "a PNG that does not decode: %s", img.message);
        png_image_free(&img);
        return -1;
    }
    *w = (int)img.width, *h = (int)img.height;
    return 0;
}

/* libpng's low-level reader over a buffer; errors jump back with their message. */
typedef struct {
    const uint8_t *p;
    size_t left;
    char msg[200];
} png_src;

static void png_read_mem(png_structp png, png_bytep out, png_size_t n) {
    png_src *s = png_get_io_ptr(png);
    if (n > s->left) png_error(png, "truncated PNG (the data ends early)");
    memcpy(out, s->p, n);
    s->p += n, s->left -= n;
}

static void png_on_error(png_structp png, png_const_charp msg) {
    png_src *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* OpenCV's PngDecoder::readData (modules/imgcodecs/src/grfmt_png.cpp) for an 8-bit image of 1
 * or 3 channels, the same libpng transforms asked for: 16 bits stripped to 8, alpha stripped
 * (not composited), a palette expanded, low-bit gray expanded, gray to RGB or RGB to gray with
 * png_set_rgb_to_gray(1, 0.299, 0.587), interlacing handled; no gamma correction. RGB order
 * (OpenCV asks for BGR; the caller swaps). The eXIf chunk's orientation is the caller's to apply. */
int rt_png_decode_opencv(const uint8_t *buf, size_t len, int gray, uint8_t **px, size_t *cap, int *w, int *h,
                         int *orientation, char *why, size_t why_cap) {
    png_src src = { buf, len, "" };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        snprintf(why, why_cap, "libpng: out of memory");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(why, why_cap, "a PNG that does not decode: %s", src.msg);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_read_fn(png, &src, png_read_mem);
    png_read_info(png, info);
    png_uint_32 width = 0, height = 0;
    int depth = 0, type = 0;
    png_get_IHDR(png, info, &width, &height, &depth, &type, NULL, NULL, NULL);
    if (depth == 16) png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if ((type & PNG_COLOR_MASK_COLOR) == 0 && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (!(type & PNG_COLOR_MASK_COLOR) && !gray) png_set_gray_to_rgb(png);
    else if ((type & PNG_COLOR_MASK_COLOR) && gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const size_t stride = (size_t)width * (gray ? 1 : 3);
    if (png_get_rowbytes(png, info) != stride) png_error(png, "an unexpected row layout after the transforms");
    if (stride * height > *cap) {
        free(*px);
        *px = rt_xmalloc(stride * height);
        *cap = stride * height;
    }
    rows = rt_xmalloc((size_t)height * sizeof *rows);
    for (png_uint_32 y = 0; y < height; y++) rows[y] = *px + y * stride;
    png_read_image(png, rows);
    png_read_end(png, info);   /* an eXIf chunk may come after the pixels */
    free(rows);
    png_uint_32 exif_len = 0;
    png_bytep exif = NULL;
    *orientation = png_get_eXIf_1(png, info, &exif_len, &exif) ? rt_exif_orientation_tiff(exif, exif_len) : 1;
    png_destroy_read_struct(&png, &info, NULL);
    *w = (int)width, *h = (int)height;
    return 0;
}
