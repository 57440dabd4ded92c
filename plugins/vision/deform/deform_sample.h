/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_sample.h - torchvision's zero-padded bilinear sampling rules for
** deform_conv2d, as one templated definition per element type T, shared by
** the cpu forward (im2col) and backward (col2im, coordinate gradients).
**
** Rules (deform_conv2d_kernel.cpp):
**  - a sample at (y, x) is 0 when y <= -1 || H <= y || x <= -1 || W <= x
**    (NaN coordinates also give 0 here);
**  - else the corners floor(y), floor(y)+1 (and x) each count only when
**    inside the image; weights hh*hw, hh*lw, lh*hw, lh*lw with lh = y - floor(y).
** deform_corners computes, for one sample, the four element offsets and
** weights (an invalid corner has weight 0 and the offset of a valid corner
** of the sample, or 0 when it has none) so that callers can
** reuse them across all channels of an offset group. valid = 0 means the
** whole sample is 0; a sample with no corner inside the image (possible
** only when H or W is 0) is never valid, so nothing of an empty image is
** read. The coordinate gradient (get_coordinate_weight) has no early-out:
** deform_corners_raw gives its corners without that rule.
*/
#ifndef LOOM_VISION_DEFORM_SAMPLE_H
#define LOOM_VISION_DEFORM_SAMPLE_H

#include <math.h>
#include <stdint.h>

typedef struct deform_corners_t {
    int64_t idx[4];       /* (yl,xl) (yl,xh) (yh,xl) (yh,xh), offsets into one H*W plane */
    int ok[4];            /* corner inside the image */
    double ly, lx;        /* fractional parts y - floor(y), x - floor(x) */
    int valid;            /* the bilinear sample is not forced to 0 */
} deform_corners_t;

/* The corners of (y, x) with per-corner validity and no early-out. Coordinates
** too large for an int (or NaN) leave every corner invalid. */
static inline void deform_corners_raw(double y, double x, int64_t h, int64_t w, deform_corners_t *c)
{
    c->valid = !(y <= -1 || (double)h <= y || x <= -1 || (double)w <= x);
    if (!(fabs(y) < 1e9 && fabs(x) < 1e9)) {
        for (int k = 0; k < 4; k++) {
            c->idx[k] = 0;
            c->ok[k] = 0;
        }
        c->ly = c->lx = 0;
        c->valid = 0;
        return;
    }
    int64_t yl = (int64_t)floor(y), xl = (int64_t)floor(x), yh = yl + 1, xh = xl + 1;
    int vyl = yl >= 0 && yl < h, vyh = yh >= 0 && yh < h, vxl = xl >= 0 && xl < w, vxh = xh >= 0 && xh < w;
    c->ok[0] = vyl && vxl;
    c->ok[1] = vyl && vxh;
    c->ok[2] = vyh && vxl;
    c->ok[3] = vyh && vxh;
    c->idx[0] = c->ok[0] ? yl * w + xl : -1;
    c->idx[1] = c->ok[1] ? yl * w + xh : -1;
    c->idx[2] = c->ok[2] ? yh * w + xl : -1;
    c->idx[3] = c->ok[3] ? yh * w + xh : -1;
    /* an invalid corner reads a valid corner of the same sample (with weight
    ** 0): a non-finite pixel there already makes torchvision's sample
    ** non-finite, so no pixel outside the sample's own corners can leak in */
    int64_t any = 0;
    for (int k = 3; k >= 0; k--)
        any = c->ok[k] ? c->idx[k] : any;
    /* no corner inside (only for an empty image, H or W = 0): the sample
    ** is 0 and must read nothing */
    if (!(c->ok[0] || c->ok[1] || c->ok[2] || c->ok[3]))
        c->valid = 0;
    for (int k = 0; k < 4; k++)
        c->idx[k] = c->ok[k] ? c->idx[k] : any;
    c->ly = y - (double)yl;
    c->lx = x - (double)xl;
}

#endif /* LOOM_VISION_DEFORM_SAMPLE_H */
