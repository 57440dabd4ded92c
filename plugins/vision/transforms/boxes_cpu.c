/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_cpu.c - the cpu kernels of the bounding-box ops of the transforms
** module. Every formula is torchvision's (transforms/v2/functional/_meta.py,
** _geometry.py, _misc.py) evaluated in float32 in the same order, so the
** results are identical:
**   xywh -> xyxy: x2 = x + w; cxcywh -> xyxy: x1 = cx - w/2, x2 = x1 + w;
**   xyxy -> xywh: w = x2 - x1; xyxy -> cxcywh: w = x2 - x1, cx = (2 x1 + w)/2;
**   xywh <-> cxcywh directly: cx = x + w/2, x = cx - w/2;
**   clamp: to xyxy, x into [0, W] and y into [0, H], back;
**   flips: x1' = -(x2 - W) (xyxy), x' = -((x + w) - W) (xywh), cx' = -(cx - W);
**   crop: minus (left, top[, left, top]) then clamp to the crop; pad: plus;
**   center_crop: crop at int(round((H - h)/2)), even when the crop is larger
**   (torchvision's box kernel does not pad first, unlike its image kernel).
** Boxes are few: these loops run on the calling thread.
*/
#include <string.h>

#include "transforms.h"

typedef enum box_format { BOX_XYXY = 0, BOX_XYWH, BOX_CXCYWH } box_format;

static box_format format_of(const char *s)
{
    return strcmp(s, "xywh") == 0 ? BOX_XYWH : strcmp(s, "cxcywh") == 0 ? BOX_CXCYWH : BOX_XYXY;
}

static void to_xyxy(float *b, box_format f)
{
    if (f == BOX_XYWH) {
        b[2] += b[0];
        b[3] += b[1];
    } else if (f == BOX_CXCYWH) {
        b[0] -= b[2] / 2;
        b[1] -= b[3] / 2;
        b[2] += b[0];
        b[3] += b[1];
    }
}

static void from_xyxy(float *b, box_format f)
{
    if (f == BOX_XYXY)
        return;
    b[2] -= b[0];
    b[3] -= b[1];
    if (f == BOX_CXCYWH) {
        b[0] = (b[0] * 2 + b[2]) / 2;
        b[1] = (b[1] * 2 + b[3]) / 2;
    }
}

static void convert(float *b, box_format from, box_format to)
{
    if (from == to)
        return;
    if (from == BOX_XYWH && to == BOX_CXCYWH) {
        b[0] += b[2] / 2;
        b[1] += b[3] / 2;
        return;
    }
    if (from == BOX_CXCYWH && to == BOX_XYWH) {
        b[0] -= b[2] / 2;
        b[1] -= b[3] / 2;
        return;
    }
    to_xyxy(b, from);
    from_xyxy(b, to);
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static void clamp_box(float *b, box_format f, int64_t h, int64_t w)
{
    to_xyxy(b, f);
    b[0] = clampf(b[0], 0.0f, (float)w);
    b[2] = clampf(b[2], 0.0f, (float)w);
    b[1] = clampf(b[1], 0.0f, (float)h);
    b[3] = clampf(b[3], 0.0f, (float)h);
    from_xyxy(b, f);
}

int transforms_box_format(const char *name) { return (int)format_of(name); }
void transforms_box_convert(float *b, int from, int to) { convert(b, (box_format)from, (box_format)to); }
void transforms_box_clamp(float *b, int format, int64_t h, int64_t w) { clamp_box(b, (box_format)format, h, w); }

/* ------------------------------------------------------------- checks */

static loom_status check_boxes(const loom_tensor *bx)
{
    char b[160];
    if (bx->ndim < 1 || bx->shape[bx->ndim - 1] != 4)
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [..., 4]", vision_describe(bx, b, sizeof b));
    return LOOM_OK;
}

static loom_status canvas_of(const loom_attr_value *cs, int64_t *h, int64_t *w)
{
    if (cs->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'canvas_size' must be (H, W), not %lld values", (long long)cs->count);
    *h = cs->u.ints[0];
    *w = cs->u.ints[1];
    return LOOM_OK;
}

/* The output boxes: a copy of the input, to transform in place. */
static loom_status copy_out(loom_call *call, const loom_tensor *bx, float **out)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, bx->ndim, bx->shape, &o);
    if (st != LOOM_OK)
        return st;
    *out = loom_data(o);
    if (loom_numel(bx) > 0)
        memcpy(*out, loom_data(bx), (size_t)loom_numel(bx) * sizeof(float));
    return LOOM_OK;
}

static loom_status canvas_out(loom_call *call, int64_t h, int64_t w)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 }, &o);
    if (st != LOOM_OK)
        return st;
    int64_t *p = loom_data(o);
    p[0] = h;
    p[1] = w;
    return LOOM_OK;
}

static int clamps(const loom_call *call, int attr) { return strcmp(call->attrs[attr].u.s, "none") != 0; }

/* ---------------------------------------------------------------- ops */

loom_status vision_convert_bounding_box_format_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const box_format from = format_of(call->attrs[PK_ATTR(convert_boxes, old_format)].u.s);
    const box_format to = format_of(call->attrs[PK_ATTR(convert_boxes, new_format)].u.s);
    for (int64_t i = 0; i < loom_numel(bx) / 4; i++)
        convert(o + 4 * i, from, to);
    return LOOM_OK;
}

loom_status vision_clamp_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    int64_t h = 0, w = 0;
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = canvas_of(&call->attrs[PK_ATTR(clamp_boxes, canvas_size)], &h, &w)) != LOOM_OK ||
        (st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const box_format f = format_of(call->attrs[PK_ATTR(clamp_boxes, format)].u.s);
    if (clamps(call, PK_ATTR(clamp_boxes, clamping_mode)))
        for (int64_t i = 0; i < loom_numel(bx) / 4; i++)
            clamp_box(o + 4 * i, f, h, w);
    return LOOM_OK;
}

static loom_status flip_boxes(loom_call *call, int horizontal)
{
    const loom_tensor *bx = call->inputs[0];
    int64_t h = 0, w = 0;
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = canvas_of(&call->attrs[PK_ATTR(flip_boxes, canvas_size)], &h, &w)) != LOOM_OK ||
        (st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const box_format f = format_of(call->attrs[PK_ATTR(flip_boxes, format)].u.s);
    const int a = horizontal ? 0 : 1;   /* the coordinate that flips */
    const float side = (float)(horizontal ? w : h);
    for (int64_t i = 0; i < loom_numel(bx) / 4; i++) {
        float *b = o + 4 * i;
        if (f == BOX_XYXY) {
            const float lo = b[a], hi = b[a + 2];
            b[a] = -(hi - side);
            b[a + 2] = -(lo - side);
        } else if (f == BOX_XYWH) {
            b[a] = -((b[a] + b[a + 2]) - side);
        } else {
            b[a] = -(b[a] - side);
        }
    }
    return LOOM_OK;
}

loom_status vision_horizontal_flip_bounding_boxes_cpu(loom_call *call) { return flip_boxes(call, 1); }
loom_status vision_vertical_flip_bounding_boxes_cpu(loom_call *call) { return flip_boxes(call, 0); }

/* boxes + (dx, dy) (xyxy: on both corners), then clamp to h x w. */
static void shift_clamp(float *o, int64_t n, box_format f, float dx, float dy, int clamp, int64_t h, int64_t w)
{
    for (int64_t i = 0; i < n; i++) {
        float *b = o + 4 * i;
        b[0] += dx;
        b[1] += dy;
        if (f == BOX_XYXY) {
            b[2] += dx;
            b[3] += dy;
        }
        if (clamp)
            clamp_box(b, f, h, w);
    }
}

loom_status vision_crop_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const int64_t top = call->attrs[PK_ATTR(crop_boxes, top)].u.i, left = call->attrs[PK_ATTR(crop_boxes, left)].u.i;
    const int64_t h = call->attrs[PK_ATTR(crop_boxes, height)].u.i, w = call->attrs[PK_ATTR(crop_boxes, width)].u.i;
    /* torchvision subtracts a float32 tensor of (left, top, ...) */
    shift_clamp(o, loom_numel(bx) / 4, format_of(call->attrs[PK_ATTR(crop_boxes, format)].u.s), -(float)left,
                -(float)top, clamps(call, PK_ATTR(crop_boxes, clamping_mode)), h, w);
    return canvas_out(call, h, w);
}

loom_status vision_center_crop_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    const loom_attr_value *os = &call->attrs[PK_ATTR(center_crop_boxes, output_size)];
    int64_t h = 0, w = 0;
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = canvas_of(&call->attrs[PK_ATTR(center_crop_boxes, canvas_size)], &h, &w)) != LOOM_OK)
        return st;
    if (os->count != 1 && os->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'output_size' must be [s] or [h, w], not %lld values",
                             (long long)os->count);
    if ((st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const int64_t ch = os->u.ints[0], cw = os->u.ints[os->count - 1];
    const int64_t top = transforms_round_half(h - ch), left = transforms_round_half(w - cw);
    shift_clamp(o, loom_numel(bx) / 4, format_of(call->attrs[PK_ATTR(center_crop_boxes, format)].u.s), -(float)left,
                -(float)top, clamps(call, PK_ATTR(center_crop_boxes, clamping_mode)), ch, cw);
    return canvas_out(call, ch, cw);
}

loom_status vision_resized_crop_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK)
        return st;
    const int64_t top = call->attrs[PK_ATTR(resized_crop_boxes, top)].u.i;
    const int64_t left = call->attrs[PK_ATTR(resized_crop_boxes, left)].u.i;
    const int64_t h = call->attrs[PK_ATTR(resized_crop_boxes, height)].u.i;
    const int64_t w = call->attrs[PK_ATTR(resized_crop_boxes, width)].u.i;
    int64_t nh, nw;
    if (h == 0 || w == 0)
        return pk_host->fail(LOOM_EINVAL, "'height' and 'width' must be > 0 (a %lld x %lld crop cannot be resized)",
                             (long long)h, (long long)w);
    if ((st = resize_output_size_of(&call->attrs[PK_ATTR(resized_crop_boxes, size)], NULL, h, w, &nh, &nw)) != LOOM_OK ||
        (st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    const int64_t n = loom_numel(bx) / 4;
    shift_clamp(o, n, format_of(call->attrs[PK_ATTR(resized_crop_boxes, format)].u.s), -(float)left, -(float)top,
                clamps(call, PK_ATTR(resized_crop_boxes, clamping_mode)), h, w);
    if (nh != h || nw != w) {   /* resize_bounding_boxes: the float32 ratios, one product */
        const float ratio[2] = { (float)((double)nw / (double)w), (float)((double)nh / (double)h) };
        for (int64_t i = 0; i < 4 * n; i++)
            o[i] *= ratio[i & 1];
    }
    return canvas_out(call, nh, nw);
}

loom_status vision_pad_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    const loom_attr_value *pad = &call->attrs[PK_ATTR(pad_boxes, padding)];
    int64_t h = 0, w = 0, l, t, r, bt;
    float *o;
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = canvas_of(&call->attrs[PK_ATTR(pad_boxes, canvas_size)], &h, &w)) != LOOM_OK)
        return st;
    if (pad->count == 1) {
        l = t = r = bt = pad->u.ints[0];
    } else if (pad->count == 2) {
        l = r = pad->u.ints[0];
        t = bt = pad->u.ints[1];
    } else if (pad->count == 4) {
        l = pad->u.ints[0], t = pad->u.ints[1], r = pad->u.ints[2], bt = pad->u.ints[3];
    } else {
        return pk_host->fail(LOOM_EINVAL, "'padding' must have 1, 2 or 4 values, not %lld", (long long)pad->count);
    }
    if ((st = copy_out(call, bx, &o)) != LOOM_OK)
        return st;
    h += t + bt;
    w += l + r;
    shift_clamp(o, loom_numel(bx) / 4, format_of(call->attrs[PK_ATTR(pad_boxes, format)].u.s), (float)l, (float)t,
                clamps(call, PK_ATTR(pad_boxes, clamping_mode)), h, w);
    return canvas_out(call, h, w);
}

loom_status vision_sanitize_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0], *labels = call->inputs[1];
    int64_t h = 0, w = 0;
    char b1[160], b2[160];
    loom_status st = check_boxes(bx);
    if (st != LOOM_OK || (st = canvas_of(&call->attrs[PK_ATTR(sanitize_boxes, canvas_size)], &h, &w)) != LOOM_OK)
        return st;
    const int64_t n = bx->shape[0];
    if (labels && (labels->ndim < 1 || labels->shape[0] != n))
        return pk_host->fail(LOOM_EINVAL, "'labels' %s must have one row per box of 'boxes' %s",
                             vision_describe(labels, b1, sizeof b1), vision_describe(bx, b2, sizeof b2));
    const box_format f = format_of(call->attrs[PK_ATTR(sanitize_boxes, format)].u.s);
    /* torchvision compares float32 tensors with Python floats: in float32 */
    const float min_size = (float)call->attrs[PK_ATTR(sanitize_boxes, min_size)].u.f;
    const float min_area = (float)call->attrs[PK_ATTR(sanitize_boxes, min_area)].u.f;
    loom_tensor *valid_t;
    if ((st = pk_host->alloc_output(call, 2, LOOM_DTYPE_BOOL, 1, &n, &valid_t)) != LOOM_OK)
        return st;
    uint8_t *valid = loom_data(valid_t);
    const float *src = loom_data(bx);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        float q[4] = { src[4 * i], src[4 * i + 1], src[4 * i + 2], src[4 * i + 3] };
        convert(q, f, BOX_XYXY);
        const float ws = q[2] - q[0], hs = q[3] - q[1];
        int ok = ws >= min_size && hs >= min_size && q[0] >= 0 && q[1] >= 0 && q[2] >= 0 && q[3] >= 0 &&
                 ws * hs >= min_area;
        ok = ok && q[0] <= (float)w && q[2] <= (float)w && q[1] <= (float)h && q[3] <= (float)h;
        valid[i] = (uint8_t)ok;
        kept += ok;
    }
    loom_tensor *out, *lout;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, (const int64_t[]){ kept, 4 }, &out)) != LOOM_OK)
        return st;
    float *o = loom_data(out);
    for (int64_t i = 0, k = 0; i < n; i++)
        if (valid[i])
            memcpy(o + 4 * k++, src + 4 * i, 4 * sizeof(float));
    if (!labels)
        return pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, (const int64_t[]){ 0 }, &lout);
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, labels->shape, sizeof(int64_t) * (size_t)labels->ndim);
    shape[0] = kept;
    const loom_dtype ldt = loom_tensor_dtype_of(labels);
    if ((st = pk_host->alloc_output(call, 1, ldt, labels->ndim, shape, &lout)) != LOOM_OK)
        return st;
    const size_t row = n > 0 ? (size_t)(loom_numel(labels) / n) * pk_host->dtype_size(ldt) : 0;
    const uint8_t *ls = loom_data(labels);
    uint8_t *ld = loom_data(lout);
    if (row > 0)
        for (int64_t i = 0, k = 0; i < n; i++)
            if (valid[i])
                memcpy(ld + row * (size_t)k++, ls + row * (size_t)i, row);
    return LOOM_OK;
}
