/* SPDX-License-Identifier: BSD-3-Clause */
/*
** box_decode.c - torchvision's BoxCoder.decode_single for one box, shared by
** vision.box_coder_decode, vision.rpn_proposals and
** vision.rcnn_postprocess_detections, and clip_boxes_to_image of one box.
**
** The float32 operations are torchvision's, in its order, one rounding
** each: width = x2 - x1, ctr = x1 + 0.5 width, dx = code / wx, dw clamped
** above at clip (NaN stays NaN, as torch.clamp), ctr' = dx width + ctr,
** w' = exp(dw) width, then ctr' -/+ 0.5 w'. exp is libm's expf (correctly
** rounded in glibc) where PyTorch uses Sleef's vectorised expf (within 1
** ulp): a decoded side may differ by one float32 ulp of exp(dw) x width.
*/
#include <math.h>

#include "detection.h"

const float det_rpn_weights[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
const float det_roi_weights[4] = { 10.0f, 10.0f, 5.0f, 5.0f };

loom_status det_box_coder_from_attrs(const char *op, const loom_attr_value *attrs, int first, const float dflt[4],
                                     det_box_coder *out)
{
    const loom_attr_value *w = &attrs[first], *clip = &attrs[first + 1];
    if (w->is_set && w->count != 4)
        return pk_host->fail(LOOM_EINVAL, "%s: weights has %lld values; expected (wx, wy, ww, wh)", op,
                             (long long)w->count);
    float v[4];
    for (int k = 0; k < 4; k++)
        v[k] = w->is_set ? (float)w->u.floats[k] : dflt[k];
    *out = (det_box_coder){ .wx = v[0], .wy = v[1], .ww = v[2], .wh = v[3], .clip = (float)clip->u.f };
    return LOOM_OK;
}

static float clamp_side(float v, float hi)
{
    return isnan(v) ? v : v < 0.0f ? 0.0f : v > hi ? hi : v;
}

void det_clip_box(float *box, float h, float w)
{
    box[0] = clamp_side(box[0], w);
    box[1] = clamp_side(box[1], h);
    box[2] = clamp_side(box[2], w);
    box[3] = clamp_side(box[3], h);
}

void det_box_decode(const det_box_coder *c, const float *code, const float *ref, float *out)
{
    const float width = ref[2] - ref[0], height = ref[3] - ref[1];
    const float ctr_x = ref[0] + 0.5f * width, ctr_y = ref[1] + 0.5f * height;
    const float dx = code[0] / c->wx, dy = code[1] / c->wy;
    float dw = code[2] / c->ww, dh = code[3] / c->wh;
    dw = dw > c->clip ? c->clip : dw;
    dh = dh > c->clip ? c->clip : dh;
    const float pcx = dx * width + ctr_x, pcy = dy * height + ctr_y;
    const float pw = expf(dw) * width, ph = expf(dh) * height;
    const float hw = 0.5f * pw, hh = 0.5f * ph;
    out[0] = pcx - hw;
    out[1] = pcy - hh;
    out[2] = pcx + hw;
    out[3] = pcy + hh;
}
