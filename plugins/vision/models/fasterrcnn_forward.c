/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fasterrcnn_forward.c - the method of the Faster R-CNN classes
** (fasterrcnn.h): torchvision's FasterRCNN in eval as a sequence of
** dispatched ops (host->op_call), so LOOM_VERBOSE=2 names each step's
** backend:
**   vision.rcnn_transform        normalize, resize, batch (size_divisible 32)
**   the body                     vision.conv2d (folded batchnorms, residual
**                                and relu fused), vision.max_pool2d;
**                                layer1..layer4's outputs kept
**   FPN + LastLevelMaxPool       1x1 inner convs whose residual is the
**                                coarser level's vision.resize nearest
**                                upsampling, 3x3 layer convs, max_pool2d 1/2
**   RPNHead                      3x3 conv(s) + relu, 1x1 cls_logits and
**                                bbox_pred, reordered as
**                                concat_box_prediction_layers
**   vision.anchor_generator      sizes 32..512 per level, ratios 0.5, 1, 2
**   vision.rpn_proposals         the rpn_* attributes
**   vision.multiscale_roi_align  maps 0..3, 7 x 7, sampling_ratio 2
**   box head + predictor         (v2: conv + relu) flatten, vision.linear +
**                                vision.relu, cls_score, bbox_pred
**   vision.rcnn_postprocess_detections, vision.rcnn_postprocess_boxes
**
** Input: images, either one f32 NCHW batch [B, 3, H, W] (images_offsets and
** original_sizes absent) or the jagged list vision.rcnn_transform takes
** (the [3, H, W] images flattened one after the other, images_offsets
** [B+1] element offsets, original_sizes [B, 2]). Output: the detections of
** every image, image after image: boxes [D, 4] xyxy on the original image,
** scores [D] (decreasing per image), labels [D] (1..classes-1) and offsets
** [B+1] (image b's rows are offsets[b]..offsets[b+1]).
**
** The method vision.<class>_rpn runs the same steps up to the proposals
** and gives the FPN maps, image_sizes and the proposals (with offsets):
** the intermediate results, to be checked or used on their own.
**
** Intermediate tensors are allocated by the ops (op_call with NULL outputs)
** and freed as soon as the next step has read them. One forward at a time
** per object (its lock).
*/
#include <stdlib.h>
#include <string.h>

#include "fasterrcnn.h"

/* ---------------------------------------------------------------- calls */

static loom_named_attr int_attr(const char *name, int64_t v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = v } } };
    return a;
}

static loom_named_attr ints_attr(const char *name, const int64_t *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = n, .u = { .ints = v } } };
    return a;
}

static loom_named_attr floats_attr(const char *name, const double *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOATS, .is_set = 1, .count = n, .u = { .floats = v } } };
    return a;
}

static loom_named_attr float_attr(const char *name, double v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = v } } };
    return a;
}

static loom_named_attr string_attr(const char *name, const char *s)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(s),
                                  .u = { .s = s } } };
    return a;
}

/* op(ins) into n_outs new tensors outs (freed by the caller, tensor_free). */
static loom_status call_op(loom_call *call, const loom_op *op, const loom_tensor *const *ins, int32_t n_ins,
                           loom_tensor **outs, int32_t n_outs, const loom_named_attr *attrs, int32_t n_attrs)
{
    for (int32_t i = 0; i < n_outs; i++)
        outs[i] = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = n_ins, .inputs = ins, .n_outputs = n_outs,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

static void free_all(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i] != NULL)
            pk_host->tensor_free(t[i]);
        t[i] = NULL;
    }
}

/* *out = act(conv c of x (+ residual)) */
static loom_status conv(loom_call *call, const fasterrcnn_model *m, const model_conv *c, const loom_tensor *x,
                        const loom_tensor *residual, const char *act, loom_tensor **out)
{
    int64_t ws[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bs[1] = { c->cout };
    loom_tensor tw = model_view(c->weight, 4, ws), tb = model_view(c->bias, 1, bs);
    const loom_tensor *ins[4] = { x, &tw, &tb, residual };
    const int64_t stride = c->stride, pad = c->pad;
    const loom_named_attr attrs[4] = { ints_attr("stride", &stride, 1), ints_attr("padding", &pad, 1),
                                       int_attr("groups", c->groups), string_attr("activation", act) };
    return call_op(call, m->conv2d, ins, 4, out, 1, attrs, 4);
}

static loom_status max_pool(loom_call *call, const fasterrcnn_model *m, const loom_tensor *x, int64_t k,
                            int64_t stride, int64_t pad, loom_tensor **out)
{
    const loom_named_attr attrs[3] = { ints_attr("kernel_size", &k, 1), ints_attr("stride", &stride, 1),
                                       ints_attr("padding", &pad, 1) };
    return call_op(call, m->max_pool, &x, 1, out, 1, attrs, 3);
}

/* ----------------------------------------------------------- backbone */

/* The ResNet body on the batch: c[s] = layer<s+1>'s output. */
static loom_status body(loom_call *call, const fasterrcnn_model *m, const loom_tensor *x, loom_tensor **c)
{
    const resnet_model *r = m->body;
    loom_tensor *stem = NULL, *a = NULL;
    loom_status st = conv(call, m, &r->stem, x, NULL, "relu", &stem);
    if (st == LOOM_OK)
        st = max_pool(call, m, stem, 3, 2, 1, &a);
    free_all(&stem, 1);
    int b = 0;
    for (int s = 0; s < 4 && st == LOOM_OK; s++) {
        for (int j = 0; j < m->arch.layers[s] && st == LOOM_OK; j++, b++) {
            const resnet_block *blk = &r->blocks[b];
            loom_tensor *t[3] = { NULL, NULL, NULL }, *out = NULL;   /* conv1, conv2 (bottleneck), downsample */
            st = conv(call, m, &blk->conv[0], a, NULL, "relu", &t[0]);
            if (st == LOOM_OK && blk->has_down)
                st = conv(call, m, &blk->down, a, NULL, "none", &t[2]);
            const loom_tensor *res = blk->has_down ? t[2] : a;
            if (st == LOOM_OK && blk->n_convs == 3) {
                st = conv(call, m, &blk->conv[1], t[0], NULL, "relu", &t[1]);
                if (st == LOOM_OK)
                    st = conv(call, m, &blk->conv[2], t[1], res, "relu", &out);
            } else if (st == LOOM_OK) {
                st = conv(call, m, &blk->conv[1], t[0], res, "relu", &out);
            }
            free_all(t, 3);
            if (s == 0 || j > 0 || a != c[s - 1])
                free_all(&a, 1);    /* the previous stage's output stays: it is c[s - 1] */
            a = out;
        }
        c[s] = a;
    }
    if (st != LOOM_OK) {
        int kept = 0;
        for (int s = 0; s < 4; s++)
            kept |= c[s] == a;
        if (!kept)
            free_all(&a, 1);
    }
    return st;
}

/* FeaturePyramidNetwork with LastLevelMaxPool: x[0..3] from c[0..3], x[4] pooled. */
static loom_status fpn(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *c, loom_tensor **x)
{
    loom_tensor *last = NULL;
    loom_status st = LOOM_OK;
    for (int i = 3; i >= 0 && st == LOOM_OK; i--) {
        loom_tensor *up = NULL, *inner = NULL;
        if (last != NULL) {
            /* inner_lateral + F.interpolate(last_inner, size=feature's, mode="nearest") */
            const int64_t size[2] = { c[i]->shape[2], c[i]->shape[3] };
            const loom_named_attr attrs[2] = { ints_attr("size", size, 2), string_attr("interpolation", "nearest") };
            st = call_op(call, m->resize, (const loom_tensor *const *)&last, 1, &up, 1, attrs, 2);
        }
        if (st == LOOM_OK)
            st = conv(call, m, &m->inner[i], c[i], up, "none", &inner);
        if (st == LOOM_OK)
            st = conv(call, m, &m->layer[i], inner, NULL, "none", &x[i]);
        free_all(&up, 1);
        free_all(&last, 1);
        last = inner;
    }
    free_all(&last, 1);
    return st != LOOM_OK ? st : max_pool(call, m, x[3], 1, 2, 0, &x[4]);
}

/* ----------------------------------------------------------------- RPN */

/* RPNHead on every level, reordered as concat_box_prediction_layers:
** objectness [B, sum H W A] (location-major, anchor minor), deltas
** [B, sum H W A, 4]; per_level[l] = H W A, grid[l] = (H, W). */
static loom_status rpn_head(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x, float **objectness,
                            float **deltas, int64_t *per_level, int64_t *grid, int64_t *total_out)
{
    const int64_t n = x[0]->shape[0], A = FRCNN_ANCHORS;
    int64_t total = 0;
    for (int l = 0; l < FRCNN_LEVELS; l++) {
        grid[2 * l] = x[l]->shape[2];
        grid[2 * l + 1] = x[l]->shape[3];
        per_level[l] = grid[2 * l] * grid[2 * l + 1] * A;
        total += per_level[l];
    }
    *total_out = total;
    *objectness = malloc((size_t)(n * total) * sizeof(float));
    *deltas = malloc((size_t)(n * total * 4) * sizeof(float));
    if (*objectness == NULL || *deltas == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the RPN's %lld anchors", m->cls, (long long)total);
    float *po = *objectness, *pd = *deltas;
    int64_t start = 0;
    loom_status st = LOOM_OK;
    for (int l = 0; l < FRCNN_LEVELS && st == LOOM_OK; l++) {
        loom_tensor *t = NULL, *lg = NULL, *bx = NULL;
        for (int d = 0; d < m->n_rpn_convs && st == LOOM_OK; d++) {
            loom_tensor *y = NULL;
            st = conv(call, m, &m->rpn_conv[d], t != NULL ? t : x[l], NULL, "relu", &y);
            free_all(&t, 1);
            t = y;
        }
        if (st == LOOM_OK)
            st = conv(call, m, &m->rpn_cls, t, NULL, "none", &lg);
        if (st == LOOM_OK)
            st = conv(call, m, &m->rpn_bbox, t, NULL, "none", &bx);
        if (st == LOOM_OK) {
            const int64_t hw = grid[2 * l] * grid[2 * l + 1];
            const float *g = loom_data(lg), *dd = loom_data(bx);
            for (int64_t i = 0; i < n; i++)
                for (int64_t p = 0; p < hw; p++)
                    for (int64_t a = 0; a < A; a++) {
                        const int64_t row = i * total + start + p * A + a;
                        po[row] = g[(i * A + a) * hw + p];
                        for (int k = 0; k < 4; k++)
                            pd[row * 4 + k] = dd[((i * A + a) * 4 + k) * hw + p];
                    }
        }
        start += per_level[l];
        loom_tensor *f[3] = { t, lg, bx };
        free_all(f, 3);
    }
    return st;
}

/* The anchors and the proposals: prop[0] boxes, prop[1] scores, prop[2] offsets. */
static loom_status proposals(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x,
                             const loom_tensor *batch, const loom_tensor *image_sizes, loom_tensor **prop)
{
    float *objectness = NULL, *deltas = NULL;
    int64_t per_level[FRCNN_LEVELS], grid[2 * FRCNN_LEVELS], total = 0;
    loom_tensor *anchors = NULL;
    loom_status st = rpn_head(call, m, x, &objectness, &deltas, per_level, grid, &total);
    if (st == LOOM_OK) {
        int64_t gs[2] = { FRCNN_LEVELS, 2 };
        loom_tensor g = { .data = grid, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                          .dtype = { LOOM_DL_INT, 64, 1 }, .shape = gs };
        static const int64_t sizes[FRCNN_LEVELS] = { 32, 64, 128, 256, 512 };
        static const double ratios[FRCNN_ANCHORS] = { 0.5, 1.0, 2.0 };
        const int64_t image[2] = { batch->shape[2], batch->shape[3] };
        const loom_named_attr attrs[3] = { ints_attr("sizes", sizes, FRCNN_LEVELS),
                                           floats_attr("aspect_ratios", ratios, FRCNN_ANCHORS),
                                           ints_attr("image_size", image, 2) };
        const loom_tensor *in[1] = { &g };
        st = call_op(call, m->anchors, in, 1, &anchors, 1, attrs, 3);
    }
    if (st == LOOM_OK) {
        int64_t os[2] = { batch->shape[0], total }, ds[3] = { batch->shape[0], total, 4 };
        loom_tensor to = model_view(objectness, 2, os), td = model_view(deltas, 3, ds);
        const loom_tensor *in[4] = { &to, &td, anchors, image_sizes };
        const fasterrcnn_params *p = &m->p;
        const loom_named_attr attrs[5] = {
            ints_attr("num_anchors_per_level", per_level, FRCNN_LEVELS),
            int_attr("pre_nms_top_n", p->rpn_pre_nms_top_n), int_attr("post_nms_top_n", p->rpn_post_nms_top_n),
            float_attr("nms_thresh", p->rpn_nms_thresh), float_attr("score_thresh", p->rpn_score_thresh),
        };
        st = call_op(call, m->rpn, in, 4, prop, 3, attrs, 5);
    }
    free(objectness);
    free(deltas);
    free_all(&anchors, 1);
    return st;
}

/* ---------------------------------------------------------- RoI heads */

/* The box head on pooled [K, C, 7, 7] into *rep [K, representation]. */
static loom_status box_head(loom_call *call, const fasterrcnn_model *m, const loom_tensor *pooled, loom_tensor **rep)
{
    loom_tensor *maps = NULL;
    loom_status st = LOOM_OK;
    for (int i = 0; i < m->n_head_convs && st == LOOM_OK; i++) {
        loom_tensor *y = NULL;
        st = conv(call, m, &m->head_conv[i], maps != NULL ? maps : pooled, NULL, "relu", &y);
        free_all(&maps, 1);
        maps = y;
    }
    const loom_tensor *src = maps != NULL ? maps : pooled;
    int64_t flat[2] = { src->shape[0], src->shape[1] * src->shape[2] * src->shape[3] };
    loom_tensor view = model_view(loom_data(src), 2, flat);
    const loom_tensor *in = &view;
    loom_tensor *h = NULL;
    for (int i = 0; i < m->n_fc && st == LOOM_OK; i++) {
        loom_tensor *y = NULL, *r = NULL;
        const loom_tensor *ins[3] = { in, m->fc_w[i], m->fc_b[i] };
        st = call_op(call, m->linear, ins, 3, &y, 1, NULL, 0);
        if (st == LOOM_OK)
            st = call_op(call, m->relu, (const loom_tensor *const *)&y, 1, &r, 1, NULL, 0);
        free_all(&y, 1);
        free_all(&h, 1);
        h = r;
        in = h;
    }
    free_all(&maps, 1);
    if (st != LOOM_OK)
        free_all(&h, 1);
    *rep = h;
    return st;
}

/* The RoI heads: det[0..3] = boxes, scores, labels, offsets on the resized images. */
static loom_status roi_heads(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x,
                             loom_tensor *const *prop,
                             const loom_tensor *image_sizes, loom_tensor **det)
{
    loom_tensor *t[4] = { NULL, NULL, NULL, NULL };     /* pooled, representation, class_logits, box_regression */
    const loom_tensor *ms_in[7] = { prop[0], prop[2], image_sizes, x[0], x[1], x[2], x[3] };
    const int64_t seven = 7;
    const loom_named_attr ms_attrs[2] = { ints_attr("output_size", &seven, 1), int_attr("sampling_ratio", 2) };
    loom_status st = call_op(call, m->multiscale, ms_in, 7, &t[0], 1, ms_attrs, 2);
    if (st == LOOM_OK)
        st = box_head(call, m, t[0], &t[1]);
    if (st == LOOM_OK) {
        const loom_tensor *ins[3] = { t[1], m->cls_w, m->cls_b };
        st = call_op(call, m->linear, ins, 3, &t[2], 1, NULL, 0);
    }
    if (st == LOOM_OK) {
        const loom_tensor *ins[3] = { t[1], m->bbox_w, m->bbox_b };
        st = call_op(call, m->linear, ins, 3, &t[3], 1, NULL, 0);
    }
    if (st == LOOM_OK) {
        const loom_tensor *ins[5] = { t[2], t[3], prop[0], prop[2], image_sizes };
        const loom_named_attr attrs[3] = { float_attr("score_thresh", m->p.box_score_thresh),
                                           float_attr("nms_thresh", m->p.box_nms_thresh),
                                           int_attr("detections_per_img", m->p.box_detections_per_img) };
        st = call_op(call, m->detections, ins, 5, det, 4, attrs, 3);
    }
    free_all(t, 4);
    return st;
}

/* --------------------------------------------------------------- input */

/* The input as vision.rcnn_transform takes it: *flat the images one after
** the other, offsets [B+1], sizes [B, 2] (views over own or caller memory:
** own_offsets / own_sizes are freed by the caller). */
static loom_status input_list(const fasterrcnn_model *m, const loom_call *call, loom_tensor *flat, int64_t *flat_shape,
                              loom_tensor *offsets, int64_t *off_shape, loom_tensor *sizes, int64_t *size_shape,
                              int64_t **own)
{
    const loom_tensor *images = call->inputs[0], *off = call->inputs[1], *orig = call->inputs[2];
    char b1[160];
    *own = NULL;
    if (images->ndim == 4) {
        if (off != NULL || orig != NULL)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' is an NCHW batch %s: give neither 'images_offsets' nor "
                                 "'original_sizes' (they are the jagged list's)", m->cls,
                                 vision_describe(images, b1, sizeof b1));
        const int64_t n = images->shape[0], c = images->shape[1], h = images->shape[2], w = images->shape[3];
        if (n < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s is an empty batch: give at least one image", m->cls,
                                 vision_describe(images, b1, sizeof b1));
        if (c != 3 || h < 1 || w < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s must be [B, 3, H, W] (RGB), H, W >= 1", m->cls,
                                 vision_describe(images, b1, sizeof b1));
        if ((*own = malloc((size_t)(3 * n + 1) * sizeof(int64_t))) == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", m->cls);
        int64_t *o = *own, *sz = *own + n + 1;
        for (int64_t i = 0; i <= n; i++)
            o[i] = i * c * h * w;
        for (int64_t i = 0; i < n; i++) {
            sz[2 * i] = h;
            sz[2 * i + 1] = w;
        }
        flat_shape[0] = n * c * h * w;
        off_shape[0] = n + 1;
        size_shape[0] = n;
        size_shape[1] = 2;
        *flat = model_view(loom_data(images), 1, flat_shape);
        *offsets = (loom_tensor){ .data = o, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                                  .dtype = { LOOM_DL_INT, 64, 1 }, .shape = off_shape };
        *sizes = (loom_tensor){ .data = sz, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                                .dtype = { LOOM_DL_INT, 64, 1 }, .shape = size_shape };
        return LOOM_OK;
    }
    if (images->ndim != 1 || off == NULL || orig == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s must be an NCHW batch [B, 3, H, W], or the flattened "
                             "[3, H, W] images with 'images_offsets' [B+1] and 'original_sizes' [B, 2]", m->cls,
                             vision_describe(images, b1, sizeof b1));
    if (off->ndim != 1 || off->shape[0] < 2)
        return pk_host->fail(LOOM_EINVAL, "%s: 'images_offsets' %s lists no image: give at least one", m->cls,
                             vision_describe(off, b1, sizeof b1));
    *flat = *images;
    *offsets = *off;
    *sizes = *orig;
    return LOOM_OK;
}

/* ---------------------------------------------------------------- run */

/* Output i of the call: a copy of t. */
static loom_status copy_out(loom_call *call, int32_t i, const loom_tensor *t)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, i, loom_tensor_dtype_of(t), t->ndim, t->shape, &o);
    if (st == LOOM_OK && loom_numel(t) > 0)
        memcpy(loom_data(o), loom_data(t), (size_t)loom_numel(t) * (size_t)(t->dtype.bits / 8));
    return st;
}

/* The RPN stage's method: the FPN maps, image_sizes, the proposals and their offsets. */
static loom_status rpn_outputs(loom_call *call, loom_tensor *const *x, const loom_tensor *image_sizes,
                               loom_tensor *const *prop)
{
    loom_status st = LOOM_OK;
    for (int32_t l = 0; l < FRCNN_LEVELS && st == LOOM_OK; l++)
        st = copy_out(call, l, x[l]);
    if (st == LOOM_OK)
        st = copy_out(call, FRCNN_LEVELS, image_sizes);
    if (st == LOOM_OK)
        st = copy_out(call, FRCNN_LEVELS + 1, prop[0]);
    return st != LOOM_OK ? st : copy_out(call, FRCNN_LEVELS + 2, prop[2]);
}

/* The detector on the call's images; rpn_only: up to the proposals (the _rpn method). */
static loom_status forward(loom_call *call, const fasterrcnn_model *m, int rpn_only)
{
    loom_tensor flat, offsets, sizes;
    int64_t flat_shape[1], off_shape[1], size_shape[2], *own = NULL;
    loom_status st = input_list(m, call, &flat, flat_shape, &offsets, off_shape, &sizes, size_shape, &own);
    if (st != LOOM_OK)
        return st;
    loom_tensor *tr[2] = { NULL, NULL };    /* the batch, image_sizes */
    {
        const int64_t min_size = m->p.min_size, max_size = m->p.max_size;
        const loom_named_attr attrs[5] = { int_attr("min_size", min_size), int_attr("max_size", max_size),
                                           floats_attr("image_mean", m->p.image_mean, 3),
                                           floats_attr("image_std", m->p.image_std, 3),
                                           int_attr("size_divisible", 32) };
        const loom_tensor *in[3] = { &flat, &offsets, &sizes };
        st = call_op(call, m->transform, in, 3, tr, 2, attrs, 5);
    }
    loom_tensor *c[4] = { NULL }, *x[FRCNN_LEVELS] = { NULL }, *prop[3] = { NULL }, *det[4] = { NULL };
    if (st == LOOM_OK)
        st = body(call, m, tr[0], c);
    if (st == LOOM_OK)
        st = fpn(call, m, c, x);
    free_all(c, 4);
    if (st == LOOM_OK)
        st = proposals(call, m, x, tr[0], tr[1], prop);
    if (st == LOOM_OK && rpn_only) {
        st = rpn_outputs(call, x, tr[1], prop);
        free_all(x, FRCNN_LEVELS);
        free_all(prop, 3);
        free_all(tr, 2);
        free(own);
        return st;
    }
    if (st == LOOM_OK)
        st = roi_heads(call, m, x, prop, tr[1], det);
    free_all(x, FRCNN_LEVELS);
    free_all(prop, 3);
    /* the outputs: each image's boxes back to its original size */
    const int64_t B = offsets.shape[0] - 1;
    loom_tensor *out[4] = { NULL };
    if (st == LOOM_OK) {
        const int64_t d = det[0]->shape[0], bs[2] = { d, 4 }, vs[1] = { d }, os[1] = { B + 1 };
        if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, bs, &out[0])) == LOOM_OK
            && (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 1, vs, &out[1])) == LOOM_OK
            && (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, vs, &out[2])) == LOOM_OK)
            st = pk_host->alloc_output(call, 3, LOOM_DTYPE_I64, 1, os, &out[3]);
    }
    if (st == LOOM_OK) {
        const int64_t d = det[0]->shape[0];
        memcpy(loom_data(out[1]), loom_data(det[1]), (size_t)d * sizeof(float));
        memcpy(loom_data(out[2]), loom_data(det[2]), (size_t)d * sizeof(int64_t));
        memcpy(loom_data(out[3]), loom_data(det[3]), (size_t)(B + 1) * sizeof(int64_t));
        const int64_t *off = loom_data(det[3]), *resized = loom_data(tr[1]), *orig = loom_data(&sizes);
        const float *boxes = loom_data(det[0]);
        float *dst = loom_data(out[0]);
        for (int64_t b = 0; b < B && st == LOOM_OK; b++) {
            int64_t shape[2] = { off[b + 1] - off[b], 4 };
            if (shape[0] == 0)
                continue;
            loom_tensor view = model_view(boxes + off[b] * 4, 2, shape), *back = NULL;
            const loom_named_attr attrs[2] = { ints_attr("image_size", resized + 2 * b, 2),
                                               ints_attr("original_size", orig + 2 * b, 2) };
            const loom_tensor *in[1] = { &view };
            st = call_op(call, m->postprocess_boxes, in, 1, &back, 1, attrs, 2);
            if (st == LOOM_OK)
                memcpy(dst + off[b] * 4, loom_data(back), (size_t)shape[0] * 4 * sizeof(float));
            free_all(&back, 1);
        }
    }
    free_all(det, 4);
    free_all(tr, 2);
    free(own);
    return st;
}

static loom_status fasterrcnn_run(loom_call *call)
{
    fasterrcnn_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    loom_status st = forward(call, m, 0);
    pthread_mutex_unlock(&m->lock);
    return st;
}

static loom_status fasterrcnn_rpn_run(loom_call *call)
{
    fasterrcnn_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    loom_status st = forward(call, m, 1);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ------------------------------------------------------------ schemas */

static const loom_arg_def frcnn_inputs[] = {
    { .name = "images", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "RGB in [0, 1]: one NCHW batch [B, 3, H, W], or the [3, H, W] images flattened one after the other "
             "(then images_offsets and original_sizes)" },
    { .name = "images_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[B+1] element offsets of each image in the flattened images" },
    { .name = "original_sizes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[B, 2] (H, W) of each flattened image" },
};
static const loom_arg_def frcnn_outputs[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[D, 4] xyxy detections on the original images, image after image" },
    { .name = "scores", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1, .doc = "[D] decreasing per image" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[D] classes 1..classes-1" },
    { .name = "offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[B+1] image b's detections are rows offsets[b]..offsets[b+1]" },
};

#define FRCNN_MAP_(i) { .name = "features" #i, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4, \
                        .doc = "[B, C, H, W] FPN map " #i " of the batch (4: LastLevelMaxPool's 'pool')" }
static const loom_arg_def frcnn_rpn_outputs[] = {
    FRCNN_MAP_(0), FRCNN_MAP_(1), FRCNN_MAP_(2), FRCNN_MAP_(3), FRCNN_MAP_(4),
    { .name = "image_sizes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 2,
      .doc = "[B, 2] (h, w) of each resized image in the batch" },
    { .name = "proposals", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[K, 4] the RPN's proposals on the resized images, image after image" },
    { .name = "proposals_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[B+1] image b's proposals are rows offsets[b]..offsets[b+1]" },
};
#undef FRCNN_MAP_

#define FRCNN_SCHEMA_(id)                                                                          \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1,                                              \
              "torchvision.models.detection " #id " forward (eval): detections of a list of images",  \
              PK_INPUTS(frcnn_inputs), PK_OUTPUTS(frcnn_outputs), .object_class = "vision." #id);
VISION_FASTERRCNNS(FRCNN_SCHEMA_)
#define FRCNN_RPN_SCHEMA_(id)                                                                      \
    PK_SCHEMA(vision_##id##_rpn_schema, "vision." #id "_rpn", 1,                                   \
              "torchvision.models.detection " #id " up to its RPN (eval): the FPN maps and the proposals",  \
              PK_INPUTS(frcnn_inputs), PK_OUTPUTS(frcnn_rpn_outputs), .object_class = "vision." #id);
VISION_FASTERRCNNS(FRCNN_RPN_SCHEMA_)

/* the images are f32, their offsets and sizes i64 (the schema checks which is which) */
#define FRCNN_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define FRCNN_KERNEL_(id)                                                                          \
    PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", FRCNN_DTYPES, fasterrcnn_run),
#define FRCNN_RPN_KERNEL_(id)                                                                      \
    PK_KERNEL_CPU(vision_##id##_rpn_schema, "cpu:ops", FRCNN_DTYPES, fasterrcnn_rpn_run),
const loom_kernel_desc fasterrcnn_kernels[6] = {
    VISION_FASTERRCNNS(FRCNN_KERNEL_) VISION_FASTERRCNNS(FRCNN_RPN_KERNEL_)
};
