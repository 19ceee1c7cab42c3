/* Private to runtime/data/jpeg_*.c: the per-thread decoder's state and scratch buffers. */
#ifndef JPEG_INTERNAL_H
#define JPEG_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include <turbojpeg.h>
#include "jpeg_region.h"
#include "rt_image.h"

struct rt_jpeg {
    tjhandle tj;
    jpeg_region *region;   /* the sample path's partial decoder */
    uint8_t *pix;   /* decoded pixels (RGB, or CMYK before conversion) */
    size_t pix_cap;
    uint8_t *tmp;   /* the resampler's intermediate rows */
    size_t tmp_cap;
    uint8_t *aux;   /* jpeg_opencv.c: a gray image as RGB, and its three resampled planes */
    size_t aux_cap;
    uint8_t *turn;   /* jpeg_opencv.c: the image turned by its EXIF orientation */
    size_t turn_cap;
};

/* *buf, grown to at least need bytes (its contents not kept). */
void *jpeg_grow(uint8_t **buf, size_t *cap, size_t need);

/* The sample as Caffe's OpenCV makes it (t->gray or t->filter RT_IMG_CV_LINEAR): jpeg_opencv.c. */
int jpeg_sample_opencv(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                       uint64_t sample_seed, uint8_t *chw, rt_image_window *win, char *why, size_t why_cap);

#endif
