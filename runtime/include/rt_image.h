/* Encoded images to training samples: JPEG decode (libjpeg-turbo, with its DCT-domain
 * scaling where the crop is much larger than the output), torchvision's random-resized crop,
 * resize-shorter-side + center crop (validation), Caffe's resize + random crop, horizontal
 * flip, and Pillow's antialiased bilinear or bicubic resampling (same fixed-point arithmetic,
 * so a sample matches Pillow + torchvision on the same decoded pixels).
 *
 *   rt_image_transform t = { .out_h = 224, .out_w = 224, .mode = RT_IMG_RRC,
 *                            .scale = {0.08f, 1}, .ratio = {3/4.f, 4/3.f}, .flip = 1 };
 *   rt_jpeg *j = rt_jpeg_new();                  // one per thread
 *   char why[256];
 *   if (rt_jpeg_sample(j, bytes, len, &t, sample_seed, chw, why, sizeof why)) // 3 x 224 x 224 bytes
 *       fprintf(stderr, "%s: %s\n", path, why);
 *   rt_jpeg_free(j);
 *
 * A sample's randomness comes only from sample_seed (the loader derives it from (seed, epoch,
 * position in the epoch)), so threads and ranks do not change it. */
#ifndef RT_IMAGE_H
#define RT_IMAGE_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    RT_IMG_RRC = 0,        /* random area/aspect crop, resized to out (Inception/torchvision) */
    RT_IMG_CENTER,         /* shorter side to `resize` (0: keep), then the center out_h x out_w */
    RT_IMG_RANDOM_CROP,    /* shorter side to `resize` (0: keep), then a random out_h x out_w (Caffe) */
} rt_image_mode;

/* The resampling filter: Pillow's two, or OpenCV's (the rest of a sample is the same). */
typedef enum {
    RT_IMG_BILINEAR = 0,   /* triangle, support 1 (torchvision's default) */
    RT_IMG_BICUBIC,        /* Keys cubic a = -0.5, support 2 (timm's ResNets) */
    RT_IMG_CV_LINEAR,      /* cv::resize INTER_LINEAR, bit-exact (Caffe's ImageData): the image decoded
                            * whole at full size as cv::imread does, resized to the mode's size,
                            * cropped at whole pixels; not for RT_IMG_RRC */
} rt_image_filter;

typedef struct {
    int out_h, out_w;
    rt_image_mode mode;
    rt_image_filter filter;
    float scale[2], ratio[2];   /* RRC: area share and aspect ranges */
    int resize;                 /* RT_IMG_CENTER / RT_IMG_RANDOM_CROP */
    int pad;                    /* RT_IMG_RANDOM_CROP: zero padding around the resized image */
    int flip;                   /* random horizontal flip, p = 0.5 */
    int resize_h, resize_w;     /* > 0: first resize to exactly this, the aspect not kept (Caffe's
                                 * ImageData new_height/new_width), instead of `resize` */
    int bgr;                    /* planes B, G, R (Caffe's OpenCV order) instead of R, G, B */
    int gray;                   /* one plane: the image decoded as cv::imread(IMREAD_GRAYSCALE) does
                                 * (Caffe's is_color: false), whole, at full size */
} rt_image_transform;

/* The source window (in source pixels; may be fractional after a resize) and the flip. */
typedef struct {
    double x0, y0, x1, y1;
    int flip;
    int clamp_to_window;   /* 1: the filter reads only inside the window (torchvision crops,
                              then resizes: RRC); 0: anywhere in the image (it resizes, then crops) */
    int zero_outside;      /* output pixels whose centre falls outside the image are 0 (padding) */
    rt_image_filter filter;   /* the transform's, for the resampler */
    /* Resize-then-crop modes: the crop's top-left corner in the resized rw x rh image (where
     * Caffe's mean_file is subtracted); RRC: 0 */
    long top, left, rw, rh;
} rt_image_window;

/* The window and flip of one sample of a src_w x src_h image, from sample_seed alone.
 * RRC follows torchvision.transforms.RandomResizedCrop.get_params (10 attempts, then the
 * center crop clamped to the ratio range); RT_IMG_CENTER follows Resize(resize) +
 * CenterCrop (torchvision's integer rounding). */
void rt_image_plan(const rt_image_transform *t, int src_w, int src_h, uint64_t sample_seed,
                   rt_image_window *win);

/* Resamples window win of an RGB image (HWC bytes, stride src_w*3) to out_h x out_w with
 * Pillow's bilinear or bicubic filter (win->filter; antialiased when shrinking; horizontal
 * pass, then vertical, each rounded and clipped to bytes), flips it if win->flip, and writes
 * planar CHW bytes. tmp holds at least rt_image_resample_tmp_bytes(...) bytes. */
size_t rt_image_resample_tmp_bytes(int src_h, int out_w);
/* How far the filter reaches, in source pixels at scale 1: 1 (bilinear) or 2 (bicubic). */
double rt_image_filter_support(rt_image_filter f);
void rt_image_resample(uint8_t *chw, int out_h, int out_w, const uint8_t *rgb, int src_w,
                       int src_h, const rt_image_window *win, uint8_t *tmp);

/* Per-thread JPEG decoder with its scratch buffers. */
typedef struct rt_jpeg rt_jpeg;
rt_jpeg *rt_jpeg_new(void);
void rt_jpeg_free(rt_jpeg *j);

/* What the bytes are, from their first bytes: "JPEG", "PNG", "GIF", ... or NULL (unknown). */
const char *rt_image_sniff(const uint8_t *buf, size_t len);

/* Decodes a JPEG (RGB, YCbCr, grayscale, CMYK or YCCK) to RGB bytes (HWC) at scale
 * num/8 (8: full size; 1..8 as libjpeg-turbo offers). *rgb stays owned by j and is valid
 * until the next call. Returns 0, or -1 with the reason in why. */
int rt_jpeg_decode(rt_jpeg *j, const uint8_t *buf, size_t len, int num8, const uint8_t **rgb,
                   int *w, int *h, char *why, size_t why_cap);
/* The JPEG's size and colour space name ("YCbCr", "gray", "CMYK", "YCCK", "RGB"); 0 or -1. */
int rt_jpeg_header(rt_jpeg *j, const uint8_t *buf, size_t len, int *w, int *h,
                   const char **colorspace, char *why, size_t why_cap);

/* Decodes PNG content to RGB bytes (HWC) into *rgb, grown (malloc'd, *cap bytes) as needed.
 * Returns 0, or -1 with the reason in why. */
int rt_png_decode(const uint8_t *buf, size_t len, uint8_t **rgb, size_t *cap, int *w, int *h,
                  char *why, size_t why_cap);

/* OpenCV's cv::resize(INTER_LINEAR) of an 8-bit image (src: src_h rows of src_w pixels of cn
 * bytes, cn 1 or 3) to win->rw x win->rh, bit-exact, of which the out_h x out_w crop at
 * (win->top, win->left) is written as cn planes (mirrored if win->flip; pixels outside the
 * resized image are 0). */
void rt_image_cv_linear(uint8_t *chw, int out_h, int out_w, const uint8_t *src, int cn, int src_w, int src_h,
                        const rt_image_window *win);

/* A JPEG decoded as OpenCV's cv::imread does: libjpeg's RGB output (gray: its grayscale output,
 * a YCbCr image's Y plane), CMYK/YCCK converted by OpenCV's formulas; full size, HWC, 3 or 1
 * bytes a pixel; *px owned by j. 0, or -1 with the reason in why. */
int rt_jpeg_decode_opencv(rt_jpeg *j, const uint8_t *buf, size_t len, int gray, const uint8_t **px, int *w,
                          int *h, char *why, size_t why_cap);
/* A PNG decoded as OpenCV's cv::imread does (alpha stripped, no gamma; gray through libpng's
 * rgb_to_gray with 0.299 / 0.587), RGB or gray, into *px (grown, *cap bytes); *orientation: its
 * eXIf chunk's orientation tag (1: none). 0 or -1. */
int rt_png_decode_opencv(const uint8_t *buf, size_t len, int gray, uint8_t **px, size_t *cap, int *w, int *h,
                         int *orientation, char *why, size_t why_cap);

/* EXIF orientation (image_exif.c), 1..8, 1 where there is none or it is unreadable: of a TIFF
 * block (an eXIf chunk), of a JPEG's APP1 Exif segment. */
int rt_exif_orientation_tiff(const uint8_t *tiff, size_t len);
int rt_jpeg_exif_orientation(const uint8_t *buf, size_t len);
/* src (h rows of w pixels of cn bytes) turned upright by orientation as cv::imread does, into
 * dst (w * h * cn bytes), *ow x *oh; returns 0 for orientation 1 (dst not written). */
int rt_image_orient(uint8_t *dst, const uint8_t *src, int w, int h, int cn, int orientation, int *ow, int *oh);

/* The whole sample: header, window, the smallest DCT scale that keeps the window at least
 * the output size, decode, resample, flip (and with t->bgr the planes in B, G, R order).
 * chw receives 3 (t->gray: 1) x out_h x out_w bytes; with t->gray or the filter RT_IMG_CV_LINEAR
 * the image is decoded whole as OpenCV does (jpeg_opencv.c). PNG
 * content (a PNG in an image folder, whatever its name) is decoded whole, then windowed
 * the same way, as trainc pack would convert it. Returns 0, or -1 with the reason in why
 * (not a JPEG or PNG, truncated, corrupt). */
int rt_jpeg_sample(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                   uint64_t sample_seed, uint8_t *chw, char *why, size_t why_cap);
/* The same sample, and where it lies (place: its top/left/rw/rh and flip; the window's source
 * coordinates are the decoder's own): Caffe's mean_file is subtracted at the resized image's
 * pixel (top + y, left + x) of the sample's (y, x) before the mirror. */
int rt_jpeg_sample_placed(rt_jpeg *j, const uint8_t *buf, size_t len, const rt_image_transform *t,
                          uint64_t sample_seed, uint8_t *chw, rt_image_window *place, char *why, size_t why_cap);

#endif
