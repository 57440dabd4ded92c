/* SPDX-License-Identifier: BSD-3-Clause */
/*
** affine_boxes_cpu.c - vision.affine_bounding_boxes and
** vision.rotate_bounding_boxes, as torchvision's
** _affine_bounding_boxes_with_expand: the boxes to xyxy, their four
** corners through the forward affine matrix (about the canvas centre unless
** a center is given) in float32, the min and max of the corners, with
** expand the shift by the transformed canvas' top-left and the new canvas
** size of vision.rotate, then clamp and back to the format.
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

static loom_status transform_boxes(loom_call *call, int fmt, int64_t h, int64_t w, const double m[6], int expand,
                                   int clamp, const double center[2], double angle)
{
    const loom_tensor *bx = call->inputs[0];
    char b[160];
    if (bx->ndim < 1 || bx->shape[bx->ndim - 1] != 4)
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [..., 4]", vision_describe(bx, b, sizeof b));
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, bx->ndim, bx->shape, &out);
    if (st != LOOM_OK)
        return st;
    const int64_t n = loom_numel(bx) / 4;
    const float t[6] = { (float)m[0], (float)m[1], (float)m[2], (float)m[3], (float)m[4], (float)m[5] };
    float trx = 0.0f, try_ = 0.0f;
    int64_t nh = h, nw = w;
    if (expand && n > 0) {
        const float pts[4][2] = { { 0.0f, 0.0f }, { 0.0f, (float)h }, { (float)w, (float)h }, { (float)w, 0.0f } };
        trx = try_ = INFINITY;
        for (int p = 0; p < 4; p++) {
            const float X = pts[p][0] * t[0] + pts[p][1] * t[1] + t[2];
            const float Y = pts[p][0] * t[3] + pts[p][1] * t[4] + t[5];
            trx = X < trx ? X : trx;
            try_ = Y < try_ ? Y : try_;
        }
        double inv[6];
        const double zero[2] = { 0.0, 0.0 };
        transforms_affine_matrix(center, angle, zero, 1.0, zero, 1, inv);
        transforms_affine_output_size(inv, w, h, &nw, &nh);
    }
    const float *src = loom_data(bx);
    float *dst = loom_data(out);
    for (int64_t i = 0; i < n; i++) {
        float q[4] = { src[4 * i], src[4 * i + 1], src[4 * i + 2], src[4 * i + 3] };
        transforms_box_convert(q, fmt, 0);
        const float cx[4] = { q[0], q[2], q[2], q[0] }, cy[4] = { q[1], q[1], q[3], q[3] };
        float mn[2] = { INFINITY, INFINITY }, mx[2] = { -INFINITY, -INFINITY };
        for (int k = 0; k < 4; k++) {
            const float X = cx[k] * t[0] + cy[k] * t[1] + t[2];
            const float Y = cx[k] * t[3] + cy[k] * t[4] + t[5];
            mn[0] = X < mn[0] ? X : mn[0];
            mx[0] = X > mx[0] ? X : mx[0];
            mn[1] = Y < mn[1] ? Y : mn[1];
            mx[1] = Y > mx[1] ? Y : mx[1];
        }
        float o[4] = { mn[0], mn[1], mx[0], mx[1] };
        if (expand) {
            o[0] -= trx;
            o[2] -= trx;
            o[1] -= try_;
            o[3] -= try_;
        }
        if (clamp)
            transforms_box_clamp(o, 0, nh, nw);
        transforms_box_convert(o, 0, fmt);
        memcpy(dst + 4 * i, o, sizeof o);
    }
    if (call->n_outputs > 1) {
        loom_tensor *cs;
        if ((st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 }, &cs)) != LOOM_OK)
            return st;
        ((int64_t *)loom_data(cs))[0] = nh;
        ((int64_t *)loom_data(cs))[1] = nw;
    }
    return LOOM_OK;
}

static loom_status canvas_and_center(const loom_call *call, int canvas_attr, int center_attr, int64_t *h,
                                     int64_t *w, double center[2])
{
    const loom_attr_value *cs = &call->attrs[canvas_attr], *c = &call->attrs[center_attr];
    if (cs->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'canvas_size' must be (H, W), not %lld values", (long long)cs->count);
    *h = cs->u.ints[0];
    *w = cs->u.ints[1];
    if (c->is_set && c->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'center' must be (x, y), not %lld values", (long long)c->count);
    center[0] = c->is_set ? c->u.floats[0] : (double)*w * 0.5;
    center[1] = c->is_set ? c->u.floats[1] : (double)*h * 0.5;
    return LOOM_OK;
}

loom_status vision_affine_bounding_boxes_cpu(loom_call *call)
{
    const loom_attr_value *tr = &call->attrs[PK_ATTR(affine_boxes, translate)];
    const loom_attr_value *sh = &call->attrs[PK_ATTR(affine_boxes, shear)];
    int64_t h = 0, w = 0;
    double center[2], m[6];
    loom_status st = canvas_and_center(call, PK_ATTR(affine_boxes, canvas_size), PK_ATTR(affine_boxes, center), &h,
                                       &w, center);
    if (st != LOOM_OK)
        return st;
    if (tr->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'translate' must be (tx, ty), not %lld values", (long long)tr->count);
    if (sh->count != 1 && sh->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'shear' must be [s] or [sx, sy], not %lld values", (long long)sh->count);
    const double shear[2] = { sh->u.floats[0], sh->u.floats[sh->count - 1] };
    const double translate[2] = { tr->u.floats[0], tr->u.floats[1] };
    const double angle = call->attrs[PK_ATTR(affine_boxes, angle)].u.f;
    transforms_affine_matrix(center, angle, translate, call->attrs[PK_ATTR(affine_boxes, scale)].u.f, shear, 0, m);
    return transform_boxes(call, transforms_box_format(call->attrs[PK_ATTR(affine_boxes, format)].u.s), h, w, m, 0,
                           strcmp(call->attrs[PK_ATTR(affine_boxes, clamping_mode)].u.s, "none") != 0, center, angle);
}

loom_status vision_rotate_bounding_boxes_cpu(loom_call *call)
{
    int64_t h = 0, w = 0;
    double center[2], m[6];
    loom_status st = canvas_and_center(call, PK_ATTR(rotate_boxes, canvas_size), PK_ATTR(rotate_boxes, center), &h,
                                       &w, center);
    if (st != LOOM_OK)
        return st;
    const double zero[2] = { 0.0, 0.0 };
    const double angle = -call->attrs[PK_ATTR(rotate_boxes, angle)].u.f;   /* rotate_bounding_boxes: -angle */
    transforms_affine_matrix(center, angle, zero, 1.0, zero, 0, m);
    return transform_boxes(call, transforms_box_format(call->attrs[PK_ATTR(rotate_boxes, format)].u.s), h, w, m,
                           call->attrs[PK_ATTR(rotate_boxes, expand)].u.b,
                           strcmp(call->attrs[PK_ATTR(rotate_boxes, clamping_mode)].u.s, "none") != 0, center, angle);
}

/* ----------------------------------------------- perspective, elastic */

/* The box enclosing four moved corners, clamped to h x w unless clamp is
** 0, in format fmt (torchvision: aminmax, clamp_bounding_boxes, convert). */
static void enclose_corners(const float X[4], const float Y[4], int clamp, int64_t h, int64_t w, int fmt, float o[4])
{
    o[0] = o[2] = X[0];
    o[1] = o[3] = Y[0];
    for (int k = 1; k < 4; k++) {
        o[0] = X[k] < o[0] ? X[k] : o[0];
        o[2] = X[k] > o[2] ? X[k] : o[2];
        o[1] = Y[k] < o[1] ? Y[k] : o[1];
        o[3] = Y[k] > o[3] ? Y[k] : o[3];
    }
    if (clamp)
        transforms_box_clamp(o, 0, h, w);
    transforms_box_convert(o, 0, fmt);
}

static loom_status boxes_and_canvas(loom_call *call, int canvas_attr, int64_t *h, int64_t *w, loom_tensor **out)
{
    const loom_tensor *bx = call->inputs[0];
    const loom_attr_value *cs = &call->attrs[canvas_attr];
    char b[160];
    if (bx->ndim < 1 || bx->shape[bx->ndim - 1] != 4)
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [..., 4]", vision_describe(bx, b, sizeof b));
    if (cs->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'canvas_size' must be (H, W), not %lld values", (long long)cs->count);
    *h = cs->u.ints[0];
    *w = cs->u.ints[1];
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, bx->ndim, bx->shape, out);
}

loom_status vision_perspective_bounding_boxes_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(perspective_boxes, n)])
    int64_t h = 0, w = 0;
    loom_tensor *out;
    loom_status st = boxes_and_canvas(call, PK_ATTR(perspective_boxes, canvas_size), &h, &w, &out);
    double c[8];
    if (st != LOOM_OK || (st = transforms_perspective_coefficients(A(startpoints), A(endpoints), A(coefficients), c)) !=
                             LOOM_OK)
        return st;
    const int fmt = transforms_box_format(A(format)->u.s), clamp = strcmp(A(clamping_mode)->u.s, "none") != 0;
#undef A
    const int64_t n = loom_numel(call->inputs[0]) / 4;
    if (n == 0)
        return LOOM_OK;
    /* the inverse coefficients in double, then float32 (_compute_perspective_thetas) */
    const double den = c[0] * c[4] - c[1] * c[3];
    if (den == 0)
        return pk_host->fail(LOOM_EINVAL, "'coefficients' (or the points): c0 * c4 - c1 * c3 is 0, so the "
                                          "perspective cannot be inverted for boxes");
    const float t[8] = {
        (float)((c[4] - c[5] * c[7]) / den),          (float)((-c[1] + c[2] * c[7]) / den),
        (float)((c[1] * c[5] - c[2] * c[4]) / den),   (float)((-c[3] + c[5] * c[6]) / den),
        (float)((c[0] - c[2] * c[6]) / den),          (float)((-c[0] * c[5] + c[2] * c[3]) / den),
        (float)((-c[4] * c[6] + c[3] * c[7]) / den),  (float)((-c[0] * c[7] + c[1] * c[6]) / den),
    };
    const float *src = loom_data(call->inputs[0]);
    float *dst = loom_data(out);
    for (int64_t i = 0; i < n; i++) {
        float q[4] = { src[4 * i], src[4 * i + 1], src[4 * i + 2], src[4 * i + 3] };
        transforms_box_convert(q, fmt, 0);
        const float cx[4] = { q[0], q[2], q[2], q[0] }, cy[4] = { q[1], q[1], q[3], q[3] };
        float X[4], Y[4];
        for (int k = 0; k < 4; k++) {
            const float d = cx[k] * t[6] + cy[k] * t[7] + 1.0f;
            X[k] = (cx[k] * t[0] + cy[k] * t[1] + t[2]) / d;
            Y[k] = (cx[k] * t[3] + cy[k] * t[4] + t[5]) / d;
        }
        enclose_corners(X, Y, clamp, h, w, fmt, dst + 4 * i);
    }
    return LOOM_OK;
}

/* torchvision's approximate inverse of the elastic grid: each corner,
** rounded up to a pixel (clamped to the canvas), moves to the identity grid
** minus the displacement there, in pixels. */
loom_status vision_elastic_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *d = call->inputs[1];
    int64_t h = 0, w = 0;
    loom_tensor *out;
    char b[160];
    loom_status st = boxes_and_canvas(call, PK_ATTR(elastic_boxes, canvas_size), &h, &w, &out);
    if (st != LOOM_OK)
        return st;
    if (d->shape[0] != 1 || d->shape[1] != h || d->shape[2] != w || d->shape[3] != 2)
        return pk_host->fail(LOOM_EINVAL, "'displacement' %s should be [1, %lld, %lld, 2] for 'canvas_size' (%lld, %lld)",
                             vision_describe(d, b, sizeof b), (long long)h, (long long)w, (long long)h, (long long)w);
    const int64_t n = loom_numel(call->inputs[0]) / 4;
    if (n == 0)
        return LOOM_OK;
    if (h == 0 || w == 0)
        return pk_host->fail(LOOM_EINVAL, "'canvas_size' (%lld, %lld) has no pixels for %lld boxes", (long long)h,
                             (long long)w, (long long)n);
    const int fmt = transforms_box_format(call->attrs[PK_ATTR(elastic_boxes, format)].u.s);
    const int clamp = strcmp(call->attrs[PK_ATTR(elastic_boxes, clamping_mode)].u.s, "none") != 0;
    float *xs = pk_host->scratch(call->ctx, (size_t)(w + h) * sizeof(float));
    if (!xs)
        return LOOM_ENOMEM;
    float *ys = xs + w;
    transforms_linspace((float)((double)(-w + 1) / (double)w), (float)((double)(w - 1) / (double)w), w, xs);
    transforms_linspace((float)((double)(-h + 1) / (double)h), (float)((double)(h - 1) / (double)h), h, ys);
    const float half_w = 0.5f * (float)w, half_h = 0.5f * (float)h;
    const float *disp = loom_data(d), *src = loom_data(call->inputs[0]);
    float *dst = loom_data(out);
    for (int64_t i = 0; i < n; i++) {
        float q[4] = { src[4 * i], src[4 * i + 1], src[4 * i + 2], src[4 * i + 3] };
        transforms_box_convert(q, fmt, 0);
        const float cx[4] = { q[0], q[2], q[2], q[0] }, cy[4] = { q[1], q[1], q[3], q[3] };
        float X[4], Y[4];
        for (int k = 0; k < 4; k++) {
            /* ceil, then the index clamped (compared as floats: no overflow, NaN to 0) */
            const float fx = ceilf(cx[k]), fy = ceilf(cy[k]);
            const int64_t ix = fx >= (float)(w - 1) ? w - 1 : fx > 0 ? (int64_t)fx : 0;
            const int64_t iy = fy >= (float)(h - 1) ? h - 1 : fy > 0 ? (int64_t)fy : 0;
            const float gx = xs[ix] - disp[2 * (iy * w + ix)], gy = ys[iy] - disp[2 * (iy * w + ix) + 1];
            X[k] = (gx + 1.0f) * half_w - 0.5f;
            Y[k] = (gy + 1.0f) * half_h - 0.5f;
        }
        enclose_corners(X, Y, clamp, h, w, fmt, dst + 4 * i);
    }
    return LOOM_OK;
}
