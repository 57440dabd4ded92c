/* SPDX-License-Identifier: BSD-3-Clause */
/*
** multiscale_cpu.c - vision.multiscale_roi_align: torchvision's
** MultiScaleRoIAlign on 1 to 4 feature maps (x0..x3, finest first; the
** featmap_names a detector pools), each box pooled by vision.roi_align
** (dispatched, aligned=False) from the level LevelMapper gives it:
**   - each map's scale: 2^round(log2(map height / largest image height)),
**     in float32 as _infer_scale has it (the height alone, as torchvision);
**   - k_min = int(-log2 scale of x0), k_max = that of the last map;
**   - a box's level: floor(canonical_level + log2(sqrt(area) /
**     canonical_scale) + 1e-6) in float32, clamped to [k_min, k_max]; a box
**     of NaN area (x2 < x1 or y2 < y1) is in no level and pools zeros, as
**     torchvision's rows of such boxes stay zero;
**   - with one map every box is pooled from it.
** Rows come out in the order of the boxes; a box's batch index is its
** image in boxes_offsets.
*/
#include <math.h>
#include <string.h>

#include "detection.h"

#define MAX_LEVELS 4

/* What one call works with. */
typedef struct ms_run {
    const loom_tensor *maps[MAX_LEVELS];
    int n_levels;
    double scale[MAX_LEVELS];
    int64_t n_images, channels, ph, pw;
} ms_run;

static loom_status check_maps(const loom_call *call, ms_run *r)
{
    r->n_levels = 0;
    for (int l = 0; l < MAX_LEVELS; l++) {
        const loom_tensor *x = call->inputs[3 + l];
        if (x == NULL)
            continue;
        if (l != r->n_levels)
            return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: x%d is given but x%d is not; give the "
                                 "maps finest first without gaps", l, r->n_levels);
        if (x->shape[0] != r->n_images || x->shape[1] != call->inputs[3]->shape[1] || x->shape[2] < 1 || x->shape[3] < 1)
            return pk_host->fail(LOOM_EINVAL,
                                 "vision.multiscale_roi_align: x%d is [%lld, %lld, %lld, %lld]; expected [%lld, %lld, "
                                 "H, W] with H, W >= 1 (one map per image, the channels of x0)",
                                 l, (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[2],
                                 (long long)x->shape[3], (long long)r->n_images, (long long)call->inputs[3]->shape[1]);
        r->maps[r->n_levels++] = x;
    }
    r->channels = call->inputs[3]->shape[1];
    return LOOM_OK;
}

static loom_status check_boxes(const loom_call *call, const ms_run *r)
{
    const loom_tensor *boxes = call->inputs[0], *sizes = call->inputs[2];
    const int64_t *off = loom_data(call->inputs[1]);
    if (boxes->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: boxes is [%lld, %lld]; expected [K, 4]",
                             (long long)boxes->shape[0], (long long)boxes->shape[1]);
    if (sizes->shape[0] != r->n_images || sizes->shape[1] != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: image_sizes is [%lld, %lld]; expected [%lld, 2]",
                             (long long)sizes->shape[0], (long long)sizes->shape[1], (long long)r->n_images);
    if (off[0] != 0 || off[r->n_images] != boxes->shape[0])
        return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: boxes_offsets run from %lld to %lld; they "
                             "must run from 0 to the %lld boxes", (long long)off[0], (long long)off[r->n_images],
                             (long long)boxes->shape[0]);
    for (int64_t b = 0; b < r->n_images; b++)
        if (off[b + 1] < off[b])
            return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: boxes_offsets decrease at image %lld",
                                 (long long)b);
    const int64_t *s = loom_data(sizes);
    for (int64_t b = 0; b < r->n_images; b++)
        if (s[2 * b] < 1 || s[2 * b + 1] < 1)
            return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: image %lld's size is %lld x %lld",
                                 (long long)b, (long long)s[2 * b], (long long)s[2 * b + 1]);
    return LOOM_OK;
}

/* _infer_scale of each map against the largest image height. */
static void infer_scales(const loom_call *call, ms_run *r)
{
    const int64_t *s = loom_data(call->inputs[2]);
    int64_t max_h = 0;
    for (int64_t b = 0; b < r->n_images; b++)
        max_h = s[2 * b] > max_h ? s[2 * b] : max_h;
    for (int l = 0; l < r->n_levels; l++) {
        const float approx = (float)((double)r->maps[l]->shape[2] / (double)max_h);
        r->scale[l] = exp2((double)nearbyintf(log2f(approx)));
    }
}

/* vision.roi_align of n rois [n, 5] on map l into out [n, C, ph, pw]. */
static loom_status align_level(loom_call *call, const ms_run *r, int l, const float *rois, int64_t n, float *out,
                               int64_t sampling_ratio)
{
    const loom_op *op = pk_host->op_find("vision.roi_align");
    if (op == NULL)
        return pk_host->fail(LOOM_ENOTSUP, "vision.roi_align is not registered; vision.multiscale_roi_align needs it");
    int64_t roi_shape[2] = { n, 5 }, out_shape[4] = { n, r->channels, r->ph, r->pw };
    const int64_t size[2] = { r->ph, r->pw };
    loom_tensor in_rois = { .data = (void *)rois, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                            .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = roi_shape };
    loom_tensor res = { .data = out, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 4, .dtype = { LOOM_DL_FLOAT, 32, 1 },
                        .shape = out_shape };
    const loom_tensor *ins[2] = { r->maps[l], &in_rois };
    loom_tensor *outs[1] = { &res };
    const loom_named_attr attrs[4] = {
        { "output_size", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = size } } },
        { "spatial_scale", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = r->scale[l] } } },
        { "sampling_ratio", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = sampling_ratio } } },
        { "aligned", { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = 0 } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = 2, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 4, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status vision_multiscale_roi_align_cpu(loom_call *call)
{
    ms_run r = { .n_images = call->inputs[1]->shape[0] - 1 };
    if (r.n_images < 1)
        return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: no images (boxes_offsets has %lld entries); "
                             "torchvision refuses an empty image list too", (long long)call->inputs[1]->shape[0]);
    const loom_attr_value *os = &call->attrs[PK_ATTR(multiscale, output_size)];
    if (os->count != 1 && os->count != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.multiscale_roi_align: output_size has %lld values; give [S] or "
                             "[PH, PW]", (long long)os->count);
    r.ph = os->u.ints[0];
    r.pw = os->u.ints[os->count - 1];
    loom_status st = check_maps(call, &r);
    if (st != LOOM_OK || (st = check_boxes(call, &r)) != LOOM_OK)
        return st;
    infer_scales(call, &r);
    const loom_tensor *boxes_t = call->inputs[0];
    const int64_t k = boxes_t->shape[0], row = r.channels * r.ph * r.pw;
    loom_tensor *out;
    const int64_t shape[4] = { k, r.channels, r.ph, r.pw };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, &out)) != LOOM_OK)
        return st;
    if (k == 0 || row == 0)
        return LOOM_OK;
    float *rois = pk_host->scratch(call->ctx, (size_t)k * 5 * sizeof(float));
    float *pooled = pk_host->scratch(call->ctx, (size_t)(k * row) * sizeof(float));
    int64_t *level = pk_host->scratch(call->ctx, (size_t)k * sizeof(int64_t));
    int64_t *which = pk_host->scratch(call->ctx, (size_t)k * sizeof(int64_t));
    if (rois == NULL || pooled == NULL || level == NULL || which == NULL)
        return LOOM_ENOMEM;
    const float *boxes = loom_data(boxes_t);
    const int64_t *off = loom_data(call->inputs[1]);
    const int k_min = (int)(-log2f((float)r.scale[0])), k_max = (int)(-log2f((float)r.scale[r.n_levels - 1]));
    const float lvl0 = (float)call->attrs[PK_ATTR(multiscale, canonical_level)].u.i;
    const float s0 = (float)call->attrs[PK_ATTR(multiscale, canonical_scale)].u.i;
    for (int64_t i = 0; i < k; i++) {
        const float *b = boxes + 4 * i;
        if (r.n_levels == 1) {
            level[i] = 0;
            continue;
        }
        const float s = sqrtf((b[2] - b[0]) * (b[3] - b[1]));
        float t = floorf(lvl0 + log2f(s / s0) + 1e-6f);
        if (isnan(t)) {
            level[i] = -1;
            continue;
        }
        t = t < (float)k_min ? (float)k_min : t > (float)k_max ? (float)k_max : t;
        level[i] = (int64_t)t - k_min;
    }
    float *dst = loom_data(out);
    memset(dst, 0, (size_t)(k * row) * sizeof(float));
    const int64_t sampling = call->attrs[PK_ATTR(multiscale, sampling_ratio)].u.i;
    for (int l = 0; l < r.n_levels; l++) {
        int64_t n = 0;
        for (int64_t img = 0; img < r.n_images; img++)
            for (int64_t i = off[img]; i < off[img + 1]; i++) {
                if (level[i] != l)
                    continue;
                rois[5 * n] = (float)img;
                memcpy(rois + 5 * n + 1, boxes + 4 * i, 4 * sizeof(float));
                which[n++] = i;
            }
        if (n == 0)
            continue;
        if ((st = align_level(call, &r, l, rois, n, pooled, sampling)) != LOOM_OK)
            return st;
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + which[j] * row, pooled + j * row, (size_t)row * sizeof(float));
    }
    return LOOM_OK;
}
