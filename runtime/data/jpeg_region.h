/* Private to runtime/data/jpeg_*.c: decoding only the part of a JPEG a sample needs, with
 * libjpeg's row skipping and column cropping. */
#ifndef JPEG_REGION_H
#define JPEG_REGION_H
#include <stddef.h>
#include <stdint.h>

typedef struct jpeg_region jpeg_region;
jpeg_region *jpeg_region_new(void);
void jpeg_region_free(jpeg_region *r);

/* Decodes rows [*y0, y1) and at least columns [*x0, x1) of the JPEG scaled by num8/8 to RGB;
 * *x0 moves left to an iMCU boundary (libjpeg's crop), *w is the decoded width. *rgb is valid
 * until the next call. Returns 0; 1 when the image needs the whole-image path (CMYK/YCCK);
 * -1 with the reason in why. */
int jpeg_region_decode(jpeg_region *r, const uint8_t *buf, size_t len, int num8, int *x0, int x1,
                       int y0, int y1, const uint8_t **rgb, int *w, char *why, size_t why_cap);

#endif
