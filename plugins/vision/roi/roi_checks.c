/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_checks.c - argument checks of the RoI ops, shared by every backend.
**
** torchvision checks little (rois.size(1) == 5, equal dtypes) and reads
** out of bounds for a bad batch index or argmax entry; here every shape,
** dtype, layout and attribute is checked before a kernel runs, and the
** value checks refuse what torchvision would turn into garbage or a crash.
** Sizes are bounded so that every index fits an int64 and every per-roi
** sampling grid an int32, as torchvision's int arithmetic assumes.
*/
#include <math.h>

#include "roi.h"

#define MAX_BINS 65536          /* PH and PW each; 7 or 14 in practice */

static loom_status check_contiguous(const loom_tensor *t, const char *name)
{
    char b[160];
    if (loom_numel(t) > 0 && !loom_is_contiguous(t))     /* an empty tensor has no layout */
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major); "
                             "got strides that are not", name, vision_describe(t, b, sizeof b));
    return LOOM_OK;
}

static loom_status check_rois(const loom_tensor *rois, const char *name, const loom_tensor *ref,
                              const char *ref_name)
{
    char b[160], c[160];
    if (rois->shape[1] != 5)
        return pk_host->fail(LOOM_EINVAL, "'%s' must be [K, 5] rows (batch_index, x1, y1, x2, y2); got %s",
                             name, vision_describe(rois, b, sizeof b));
    if (loom_tensor_dtype_of(rois) != loom_tensor_dtype_of(ref))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the dtype of '%s' %s", name,
                             vision_describe(rois, b, sizeof b), ref_name, vision_describe(ref, c, sizeof c));
    return check_contiguous(rois, name);
}

static loom_status check_bins(const roi_geom *g, const char *what)
{
    if (g->ph <= 0 || g->pw <= 0 || g->ph > MAX_BINS || g->pw > MAX_BINS)
        return pk_host->fail(LOOM_EINVAL, "%s must be in [1, %d]; got %lld x %lld", what, MAX_BINS,
                             (long long)g->ph, (long long)g->pw);
    if ((g->kind == PS_ROI_ALIGN || g->kind == PS_ROI_POOL) && g->c % (g->ph * g->pw) != 0)
        return pk_host->fail(LOOM_EINVAL,
                             "position-sensitive pooling needs a channel count divisible by "
                             "%s product %lld x %lld = %lld; got %lld channels",
                             what, (long long)g->ph, (long long)g->pw, (long long)(g->ph * g->pw),
                             (long long)g->c);
    return LOOM_OK;
}

static loom_status check_sampling(const roi_geom *g)
{
    if (g->sampling_ratio > ROI_MAX_GRID)
        return pk_host->fail(LOOM_EINVAL, "'sampling_ratio' must be <= %d; got %lld", ROI_MAX_GRID,
                             (long long)g->sampling_ratio);
    return LOOM_OK;
}

/* output_size and spatial_scale lead every forward list; spatial_scale,
** pooled_height and pooled_width every backward list (roi.h). */
#define SAME_AT(op1, op2, name) ((int)PK_ATTR(op1, name) == (int)PK_ATTR(op2, name))
_Static_assert(SAME_AT(roi_pool, roi_align, output_size) && SAME_AT(ps_roi_align, roi_align, output_size)
               && SAME_AT(roi_pool, roi_align, spatial_scale) && SAME_AT(ps_roi_align, roi_align, spatial_scale),
               "the forward RoI attribute lists start alike");
_Static_assert(SAME_AT(roi_align_backward, roi_pool_backward, spatial_scale)
               && SAME_AT(ps_roi_align_backward, roi_pool_backward, spatial_scale)
               && SAME_AT(roi_align_backward, roi_pool_backward, pooled_height)
               && SAME_AT(ps_roi_align_backward, roi_pool_backward, pooled_height)
               && SAME_AT(roi_align_backward, roi_pool_backward, pooled_width)
               && SAME_AT(ps_roi_align_backward, roi_pool_backward, pooled_width),
               "the backward RoI attribute lists start alike");

/* Where the rest of a backward op's attributes sit in its list (-1: the op
** has no such attribute); ps_roi_pool_backward shares roi_pool_backward's. */
typedef struct roi_bwd_at { int batch_size, channels, height, width, sampling_ratio, aligned; } roi_bwd_at;
#define BWD_AT(op, sampling, aligned_)                                                             \
    { PK_ATTR(op, batch_size), PK_ATTR(op, channels), PK_ATTR(op, height), PK_ATTR(op, width),     \
      sampling, aligned_ }
static const roi_bwd_at bwd_at[4] = {
    [ROI_ALIGN] = BWD_AT(roi_align_backward, PK_ATTR(roi_align_backward, sampling_ratio),
                         PK_ATTR(roi_align_backward, aligned)),
    [ROI_POOL] = BWD_AT(roi_pool_backward, -1, -1),
    [PS_ROI_ALIGN] = BWD_AT(ps_roi_align_backward, PK_ATTR(ps_roi_align_backward, sampling_ratio), -1),
    [PS_ROI_POOL] = BWD_AT(roi_pool_backward, -1, -1),
};

static loom_status check_forward(const loom_call *call, roi_geom *g)
{
    const loom_tensor *in = call->inputs[0], *rois = call->inputs[1];
    const loom_attr_value *os = &call->attrs[PK_ATTR(roi_align, output_size)];
    char b[160];
    loom_status st = check_contiguous(in, "input");
    if (st == LOOM_OK)
        st = check_rois(rois, "boxes", in, "input");
    if (st != LOOM_OK)
        return st;
    if (os->count != 1 && os->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'output_size' must have 1 or 2 values ([S] or [PH, PW]); got %lld",
                             (long long)os->count);
    g->n = in->shape[0];
    g->c = in->shape[1];
    g->h = in->shape[2];
    g->w = in->shape[3];
    g->k = rois->shape[0];
    g->ph = os->u.ints[0];
    g->pw = os->u.ints[os->count - 1];
    g->spatial_scale = call->attrs[PK_ATTR(roi_align, spatial_scale)].u.f;
    if (g->kind == ROI_ALIGN) {
        g->sampling_ratio = call->attrs[PK_ATTR(roi_align, sampling_ratio)].u.i;
        g->aligned = call->attrs[PK_ATTR(roi_align, aligned)].u.b != 0;
    } else if (g->kind == PS_ROI_ALIGN) {
        g->sampling_ratio = call->attrs[PK_ATTR(ps_roi_align, sampling_ratio)].u.i;
    }
    st = check_bins(g, "'output_size'");
    if (st == LOOM_OK)
        st = check_sampling(g);
    if (st == LOOM_OK && (g->h > INT32_MAX || g->w > INT32_MAX || g->h * g->w > INT32_MAX))
        st = pk_host->fail(LOOM_EINVAL, "'input' %s: H * W must fit an int32 (argmax and pixel indices)",
                           vision_describe(in, b, sizeof b));
    if (st == LOOM_OK)
        g->c_out = g->kind == PS_ROI_ALIGN || g->kind == PS_ROI_POOL ? g->c / (g->ph * g->pw) : g->c;
    return st;
}

static loom_status check_backward(const loom_call *call, roi_geom *g)
{
    const loom_tensor *grad = call->inputs[0], *rois = call->inputs[1];
    const loom_tensor *map = g->kind == ROI_ALIGN ? NULL : call->inputs[2];
    const loom_attr_value *a = call->attrs;
    const roi_bwd_at *at = &bwd_at[g->kind];
    char b[160], c[160];
    loom_status st = check_contiguous(grad, "grad");
    if (st == LOOM_OK)
        st = check_rois(rois, "rois", grad, "grad");
    if (st == LOOM_OK && map != NULL)
        st = check_contiguous(map, g->kind == ROI_POOL ? "argmax" : "channel_mapping");
    if (st != LOOM_OK)
        return st;
    g->spatial_scale = a[PK_ATTR(roi_pool_backward, spatial_scale)].u.f;
    g->ph = a[PK_ATTR(roi_pool_backward, pooled_height)].u.i;
    g->pw = a[PK_ATTR(roi_pool_backward, pooled_width)].u.i;
    g->n = a[at->batch_size].u.i;
    g->c = a[at->channels].u.i;
    g->h = a[at->height].u.i;
    g->w = a[at->width].u.i;
    g->k = rois->shape[0];
    if (at->sampling_ratio >= 0)
        g->sampling_ratio = a[at->sampling_ratio].u.i;
    if (at->aligned >= 0)
        g->aligned = a[at->aligned].u.b != 0;
    if (g->n < 0 || g->c < 0 || g->h < 0 || g->w < 0)
        return pk_host->fail(LOOM_EINVAL, "'batch_size', 'channels', 'height' and 'width' must be >= 0; "
                             "got %lld, %lld, %lld, %lld", (long long)g->n, (long long)g->c,
                             (long long)g->h, (long long)g->w);
    if (g->h > INT32_MAX || g->w > INT32_MAX || g->h * g->w > INT32_MAX || g->c > INT32_MAX
        || g->n > INT32_MAX || (g->h * g->w > 0 && g->n * g->c > INT64_MAX / 8 / (g->h * g->w)))
        return pk_host->fail(LOOM_EINVAL, "gradient of input ['batch_size', 'channels', 'height', 'width'] = "
                             "[%lld, %lld, %lld, %lld] is too large", (long long)g->n, (long long)g->c,
                             (long long)g->h, (long long)g->w);
    st = check_bins(g, "'pooled_height' x 'pooled_width'");
    if (st == LOOM_OK)
        st = check_sampling(g);
    if (st != LOOM_OK)
        return st;
    g->c_out = g->kind == PS_ROI_ALIGN || g->kind == PS_ROI_POOL ? g->c / (g->ph * g->pw) : g->c;
    const int64_t want[4] = { g->k, g->c_out, g->ph, g->pw };
    for (int d = 0; d < 4; d++)
        if (grad->shape[d] != want[d])
            return pk_host->fail(LOOM_EINVAL,
                                 "'grad' %s must be [K, %s, PH, PW] = [%lld, %lld, %lld, %lld] for %lld rois, "
                                 "%lld channels and %lld x %lld bins",
                                 vision_describe(grad, b, sizeof b),
                                 g->c_out == g->c ? "channels" : "channels / (PH * PW)",
                                 (long long)want[0], (long long)want[1], (long long)want[2],
                                 (long long)want[3], (long long)g->k, (long long)g->c, (long long)g->ph,
                                 (long long)g->pw);
    if (map != NULL)
        for (int d = 0; d < 4; d++)
            if (map->shape[d] != want[d])
                return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the shape of 'grad' %s",
                                     g->kind == ROI_POOL ? "argmax" : "channel_mapping",
                                     vision_describe(map, b, sizeof b), vision_describe(grad, c, sizeof c));
    return LOOM_OK;
}

loom_status roi_check(const loom_call *call, roi_geom *g)
{
    roi_kind kind;
    int backward;
    roi_kind_of(call, &kind, &backward);
    *g = (roi_geom){ .kind = kind, .backward = backward, .dtype = loom_tensor_dtype_of(call->inputs[0]),
                     .sampling_ratio = -1 };
    g->has_index_map = kind != ROI_ALIGN;
    return backward ? check_backward(call, g) : check_forward(call, g);
}

loom_status roi_alloc_outputs(loom_call *call, const roi_geom *g, loom_tensor **out, loom_tensor **map)
{
    *map = NULL;
    if (g->backward) {
        const int64_t shape[4] = { g->n, g->c, g->h, g->w };
        return pk_host->alloc_output(call, 0, g->dtype, 4, shape, out);
    }
    const int64_t shape[4] = { g->k, g->c_out, g->ph, g->pw };
    loom_status st = pk_host->alloc_output(call, 0, g->dtype, 4, shape, out);
    if (st == LOOM_OK && g->has_index_map)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I32, 4, shape, map);
    return st;
}

loom_status roi_check_batch_indices(const roi_geom *g, const void *rois)
{
    for (int64_t r = 0; r < g->k; r++) {
        double b = pk_ld_any(g->dtype, rois, r * 5);
        /* torchvision converts with (int), i.e. truncates toward zero */
        if (!(b > -1.0 && b < (double)g->n))
            return pk_host->fail(LOOM_EINVAL,
                                 "roi %lld of '%s' has batch index %g; expected an index in [0, %lld) "
                                 "(the input has %lld images)",
                                 (long long)r, g->backward ? "rois" : "boxes", b, (long long)g->n,
                                 (long long)g->n);
    }
    return LOOM_OK;
}

/* v * spatial_scale as the kernels of dtype dt compute it: in double for
** f64, else in float, rounded to the dtype. */
static double scaled(loom_dtype dt, double v, double ss)
{
    return dt == LOOM_DTYPE_F64 ? v * ss : pk_rnd_any(dt, (double)((float)v * (float)ss));
}

loom_status roi_check_scaled(const roi_geom *g, const void *rois)
{
    for (int64_t r = 0; r < g->k; r++) {
        double v[4], s[4];
        int bad = 0;
        for (int i = 0; i < 4; i++) {
            v[i] = pk_ld_any(g->dtype, rois, r * 5 + 1 + i);
            s[i] = scaled(g->dtype, v[i], g->spatial_scale);
            bad |= isfinite(v[i]) && !isfinite(s[i]);
        }
        /* the roi's width and height from finite scaled corners */
        for (int i = 0; i < 2 && !bad; i++)
            bad = isfinite(s[i]) && isfinite(s[i + 2]) && !isfinite(pk_rnd_any(g->dtype, s[i + 2] - s[i]));
        if (bad)
            return pk_host->fail(LOOM_EINVAL,
                                 "rois scaled by spatial_scale %g are not finite in %s (roi %lld of '%s': "
                                 "%g, %g, %g, %g): the scaled coordinates or the roi size overflow",
                                 g->spatial_scale, pk_host->dtype_name(g->dtype), (long long)r,
                                 g->backward ? "rois" : "boxes", v[0], v[1], v[2], v[3]);
    }
    return LOOM_OK;
}

loom_status roi_check_index_map(const roi_geom *g, const int32_t *map)
{
    const int64_t n = g->k * g->c_out * g->ph * g->pw;
    const int64_t hi = g->kind == ROI_POOL ? g->h * g->w : g->c;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = map[i];
        if (g->kind == ROI_POOL ? (v < -1 || v >= hi) : (v < 0 || v >= hi))
            return pk_host->fail(LOOM_EINVAL, "'%s' element %lld is %lld; expected %s",
                                 g->kind == ROI_POOL ? "argmax" : "channel_mapping", (long long)i,
                                 (long long)v,
                                 g->kind == ROI_POOL ? "-1 or a pixel index in [0, height * width)"
                                                         : "a channel in [0, channels)");
    }
    return LOOM_OK;
}

loom_status roi_grid(double q, int64_t sampling_ratio, int64_t index, int64_t *grid)
{
    if (sampling_ratio > 0) {
        *grid = sampling_ratio;
        return LOOM_OK;
    }
    double c = ceil(q);
    if (c != c) {
        *grid = 0;
        return LOOM_OK;
    }
    if (c > ROI_MAX_GRID)
        return pk_host->fail(LOOM_EINVAL,
                             "roi %lld needs an adaptive sampling grid of %g per bin side (roi size / bins); "
                             "at most %d is supported: pass a sampling_ratio", (long long)index, c,
                             ROI_MAX_GRID);
    *grid = c < -ROI_MAX_GRID ? -ROI_MAX_GRID : (int64_t)c;
    return LOOM_OK;
}
