/* Region decoding with libjpeg(-turbo)'s own API: jpeg_skip_scanlines skips the rows above
 * the window without the inverse DCT and colour conversion, jpeg_crop_scanline decodes only
 * the window's columns (from an iMCU boundary), and decoding stops after the window's last
 * row. A random-resized crop covers about half of an image on average, so this roughly
 * halves the work after entropy decoding. */
#include <jerror.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "jpeg_region.h"
#include "rt_core.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf on_error;
    int truncated;
} region_errors;

struct jpeg_region {
    struct jpeg_decompress_struct ci;
    region_errors err;
    uint8_t *pix;
    size_t cap;
};

static void fatal(j_common_ptr c) { longjmp(((region_errors *)c->err)->on_error, 1); }

/* Warnings: a premature end leaves grey rows, so it fails the sample as it does for the
 * whole-image path; other warnings (extraneous bytes) leave a complete image. */
static void warn(j_common_ptr c, int level) {
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) ((region_errors *)c->err)->truncated = 1;
}

jpeg_region *jpeg_region_new(void) {
    jpeg_region *r = rt_xcalloc(1, sizeof *r);
    r->ci.err = jpeg_std_error(&r->err.pub);
    r->err.pub.error_exit = fatal;
    r->err.pub.emit_message = warn;
    jpeg_create_decompress(&r->ci);
    return r;
}

void jpeg_region_free(jpeg_region *r) {
    if (!r) return;
    jpeg_destroy_decompress(&r->ci);
    free(r->pix);
    free(r);
}

int jpeg_region_decode(jpeg_region *r, const uint8_t *buf, size_t len, int num8, int *x0, int x1,
                       int y0, int y1, const uint8_t **rgb, int *w, char *why, size_t why_cap) {
    struct jpeg_decompress_struct *ci = &r->ci;
    r->err.truncated = 0;
    if (setjmp(r->err.on_error)) {
        char msg[JMSG_LENGTH_MAX];
        r->err.pub.format_message((j_common_ptr)ci, msg);
        int truncated = len < 2 || buf[len - 2] != 0xff || buf[len - 1] != 0xd9;
        snprintf(why, why_cap, "%s JPEG: %s", truncated ? "truncated" : "corrupt", msg);
        jpeg_abort_decompress(ci);
        return -1;
    }
    jpeg_mem_src(ci, buf, (unsigned long)len);
    jpeg_read_header(ci, TRUE);
    if (ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK) {
        jpeg_abort_decompress(ci);
        return 1;
    }
    ci->out_color_space = JCS_RGB;
    ci->scale_num = (unsigned)num8;
    ci->scale_denom = 8;
    jpeg_start_decompress(ci);
    JDIMENSION xoff = (JDIMENSION)*x0, cw = (JDIMENSION)(x1 - *x0);
    if (cw < ci->output_width) jpeg_crop_scanline(ci, &xoff, &cw);
    else xoff = 0, cw = ci->output_width;
    if (y0 > 0) jpeg_skip_scanlines(ci, (JDIMENSION)y0);
    size_t stride = (size_t)cw * 3, need = stride * (size_t)(y1 - y0);
    if (need > r->cap) {
        free(r->pix);
        r->pix = rt_xmalloc(need);
        r->cap = need;
    }
    while ((int)ci->output_scanline < y1) {
        JSAMPROW row = r->pix + (size_t)((int)ci->output_scanline - y0) * stride;
        jpeg_read_scanlines(ci, &row, 1);
    }
    jpeg_abort_decompress(ci);   /* the rows below the window are not needed */
    if (r->err.truncated) {
        snprintf(why, why_cap, "truncated JPEG: Premature end of JPEG file");
        return -1;
    }
    *x0 = (int)xoff;
    *w = (int)cw;
    *rgb = r->pix;
    return 0;
}
