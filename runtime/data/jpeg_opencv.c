/* A sample as Caffe makes it with OpenCV: the image decoded whole, at full size, as cv::imread
 * does (colour, or one gray channel: IMREAD_GRAYSCALE, Caffe's is_color: false; turned upright by
 * its EXIF orientation, as OpenCV 3.1 and later do), then resized
 * with cv::resize INTER_LINEAR (image_cv_resize.c) to the mode's size (resize_to: Caffe's
 * new_height x new_width) and cropped at whole pixels, and mirrored. A gray image under one of
 * Pillow's filters goes through the same resampler as colour ones, each plane alike. */
#include <string.h>
#include "jpeg_internal.h"
#include "rt_core.h"

int jpeg_sample_opencv(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                       uint64_t sample_seed, uint8_t *chw, rt_image_window *win, char *why, size_t why_cap) {
    const char *kind = rt_image_sniff(buf, len);
    const int cn = t->gray ? 1 : 3;
    const uint8_t *px;
    int W, H, orientation = 1;
    if (kind && !strcmp(kind, "PNG")) {
        if (rt_png_decode_opencv(buf, len, t->gray, &j->pix, &j->pix_cap, &W, &H, &orientation, why, why_cap)) return -1;
        px = j->pix;
    } else if (rt_jpeg_decode_opencv(j, buf, len, t->gray, &px, &W, &H, why, why_cap)) {
        return -1;
    } else {
        orientation = rt_jpeg_exif_orientation(buf, len);
    }
    if (orientation != 1) {   /* cv::imread turns the image upright by its EXIF tag */
        uint8_t *upright = jpeg_grow(&j->turn, &j->turn_cap, (size_t)W * H * cn);
        rt_image_orient(upright, px, W, H, cn, orientation, &W, &H);
        px = upright;
    }
    rt_image_plan(t, W, H, sample_seed, win);
    if (t->filter == RT_IMG_CV_LINEAR) {
        if (t->mode == RT_IMG_RRC) {   /* the spec check refuses it first */
            snprintf(why, why_cap, "OpenCV's linear resize is for whole images (resize_to), not a random-resized crop");
            return -1;
        }
        rt_image_cv_linear(chw, t->out_h, t->out_w, px, cn, W, H, win);
        return 0;
    }
    /* gray under Pillow's filter: three equal planes resampled, of which one is kept */
    const size_t n = (size_t)W * H, plane = (size_t)t->out_h * t->out_w;
    uint8_t *tmp = jpeg_grow(&j->tmp, &j->tmp_cap, rt_image_resample_tmp_bytes(H, t->out_w));
    uint8_t *rgb = jpeg_grow(&j->aux, &j->aux_cap, 3 * n + 3 * plane), *planes = rgb + 3 * n;
    for (size_t i = 0; i < n; i++) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = px[i];
    rt_image_resample(planes, t->out_h, t->out_w, rgb, W, H, win, tmp);
    memcpy(chw, planes, plane);
    return 0;
}
