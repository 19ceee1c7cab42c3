/* PNG content to RGB bytes (libpng's simplified API; alpha is composited on black): the
 * loader decodes a PNG in an image folder with it, and trainc pack re-encodes one as JPEG. */
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
