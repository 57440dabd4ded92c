/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks.h - vision.paste_masks, torchvision's
** roi_heads.paste_masks_in_image(masks, boxes, img_shape, padding):
**   expand_masks   each [M', M] mask zero-padded by `padding` on every side,
**                  scale = (M + 2 padding) / M (M: the last dim, as torchvision)
**   expand_boxes   each box about its centre by scale, in f32, then truncated
**                  to int64 (toward zero, as Tensor.to(int64))
**   paste          the padded mask resized bilinearly (F.interpolate,
**                  align_corners=False) to the integer box's h = max(y1 - y0 + 1, 1)
**                  by w = max(x1 - x0 + 1, 1) pixels, and those inside the
**                  image [0, H) x [0, W) written at (y0, x0); the rest 0
** Output [K, 1, H, W] f32 (no threshold). The per-pixel arithmetic is here,
** inline, so the cpu and cuda kernels compute the same f32 operations in the
** same order (PM_MUL / PM_ADD round each step alone on the device: nvcc would
** otherwise contract them into fmas). The checks (paste_masks_schema.c) are
** shared by both kernels.
*/
#ifndef LOOM_VISION_PASTE_MASKS_H
#define LOOM_VISION_PASTE_MASKS_H

#include <stdint.h>

#ifdef __CUDACC__
#define PM_FN static __device__ inline
#define PM_MUL(a, b) __fmul_rn((a), (b))
#define PM_ADD(a, b) __fadd_rn((a), (b))
#define PM_SUB(a, b) __fsub_rn((a), (b))
#else
#define PM_FN static inline
#define PM_MUL(a, b) ((a) * (b))
#define PM_ADD(a, b) ((a) + (b))
#define PM_SUB(a, b) ((a) - (b))
#endif

/* One mask's placement: the integer box, the resized size and the
** interpolation scales (input / output, as ATen's area_pixel_compute_scale). */
typedef struct paste_box {
    int64_t x0, y0, w, h;
    float scale_y, scale_x;
} paste_box;

/* expand_boxes(box, scale).to(int64) and the resize of the padded mask (ph x pw). */
PM_FN paste_box paste_box_of(const float *box, float scale, int64_t ph, int64_t pw)
{
    const float w_half = PM_MUL(PM_MUL(PM_SUB(box[2], box[0]), 0.5f), scale);
    const float h_half = PM_MUL(PM_MUL(PM_SUB(box[3], box[1]), 0.5f), scale);
    const float x_c = PM_MUL(PM_ADD(box[2], box[0]), 0.5f), y_c = PM_MUL(PM_ADD(box[3], box[1]), 0.5f);
    paste_box p;
    p.x0 = (int64_t)PM_SUB(x_c, w_half);
    p.y0 = (int64_t)PM_SUB(y_c, h_half);
    const int64_t x1 = (int64_t)PM_ADD(x_c, w_half), y1 = (int64_t)PM_ADD(y_c, h_half);
    p.w = x1 - p.x0 + 1 > 1 ? x1 - p.x0 + 1 : 1;
    p.h = y1 - p.y0 + 1 > 1 ? y1 - p.y0 + 1 : 1;
    p.scale_y = (float)ph / (float)p.h;
    p.scale_x = (float)pw / (float)p.w;
    return p;
}

/* ATen's linear source index and weight of output index i on an input of n. */
PM_FN void paste_source(float scale, int64_t i, int64_t n, int64_t *i0, int64_t *step, float *lambda)
{
    float src = PM_SUB(PM_MUL(scale, PM_ADD((float)i, 0.5f)), 0.5f);
    src = src < 0.0f ? 0.0f : src;
    int64_t at = (int64_t)src;          /* src >= 0: the floor */
    at = at < n - 1 ? at : n - 1;
    float l = PM_SUB(src, (float)at);
    l = l < 0.0f ? 0.0f : l > 1.0f ? 1.0f : l;
    *i0 = at;
    *step = at < n - 1 ? 1 : 0;
    *lambda = l;
}

/* The padded mask's value at (r, c): the mask's (r - pad, c - pad) or 0. */
PM_FN float paste_padded(const float *mask, int64_t mh, int64_t mw, int64_t pad, int64_t r, int64_t c)
{
    r -= pad;
    c -= pad;
    return r >= 0 && r < mh && c >= 0 && c < mw ? mask[r * mw + c] : 0.0f;
}

/* The pasted value at image pixel (y, x) of one mask (mh x mw, unpadded). */
PM_FN float paste_pixel(const float *mask, int64_t mh, int64_t mw, int64_t pad, const paste_box *p, int64_t y,
                        int64_t x)
{
    const int64_t ry = y - p->y0, rx = x - p->x0;
    if (ry < 0 || ry >= p->h || rx < 0 || rx >= p->w)
        return 0.0f;
    const int64_t ph = mh + 2 * pad, pw = mw + 2 * pad;
    int64_t y0, dy, x0, dx;
    float ly, lx;
    paste_source(p->scale_y, ry, ph, &y0, &dy, &ly);
    paste_source(p->scale_x, rx, pw, &x0, &dx, &lx);
    const float hy = PM_SUB(1.0f, ly), hx = PM_SUB(1.0f, lx);
    const float top = PM_ADD(PM_MUL(paste_padded(mask, mh, mw, pad, y0, x0), hx),
                             PM_MUL(paste_padded(mask, mh, mw, pad, y0, x0 + dx), lx));
    const float bottom = PM_ADD(PM_MUL(paste_padded(mask, mh, mw, pad, y0 + dy, x0), hx),
                                PM_MUL(paste_padded(mask, mh, mw, pad, y0 + dy, x0 + dx), lx));
    return PM_ADD(PM_MUL(top, hy), PM_MUL(bottom, ly));
}

#ifndef __CUDACC__
#include "vision_pack.h"

#define PASTE_MASKS_ATTRS(A, op)                                                                   \
    A(op, image_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,            \
      "(H, W) of the image the masks are pasted into (torchvision's img_shape)", )                 \
    A(op, padding, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_NONNEG,                                     \
      "expand_masks' zero border; the boxes grow by (M + 2 padding) / M", )
PK_ATTR_ENUM(paste_masks, PASTE_MASKS_ATTRS);

#define VISION_PASTE_MASKS_OPS(X) X(vision_paste_masks_schema)
PK_OPS_DECLARE(vision_paste_masks_ops, VISION_PASTE_MASKS_OPS);

typedef struct paste_masks_geom {
    int64_t k, mh, mw, pad, h, w;
    float scale;                    /* (float)((M + 2 pad) / M), as the f32 tensor product rounds it */
    const float *masks, *boxes;
    float *out;
} paste_masks_geom;

/* Checks the call (masks [K, 1, M', M] and boxes [K, 4] f32 contiguous,
** image_size two values) and allocates the output [K, 1, H, W]. */
loom_status paste_masks_check(loom_call *call, paste_masks_geom *g, loom_tensor **out);

extern const pk_module vision_paste_masks_cpu, vision_paste_masks_cuda;
#endif

#endif /* LOOM_VISION_PASTE_MASKS_H */
