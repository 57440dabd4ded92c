/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fasterrcnn_forward.c - the method of the Faster R-CNN classes
** (fasterrcnn.h): torchvision's FasterRCNN in eval as a sequence of
** dispatched ops (host->op_call), so LOOM_VERBOSE=2 names each step's
** backend:
**   vision.rcnn_transform        normalize, resize, batch (size_divisible 32)
**   the backbone                 rcnn_backbone.h's: the body, FPN +
**                                LastLevelMaxPool
**   RPNHead                      3x3 conv(s) + relu, 1x1 cls_logits and
**                                bbox_pred, reordered as
**                                concat_box_prediction_layers
**   vision.anchor_generator      ratios 0.5, 1, 2; sizes 32..512 one per
**                                level (ResNet), or all five on each
**                                (MobileNetV3: its maps share stride 32)
**   vision.rpn_proposals         the rpn_* attributes
**   vision.multiscale_roi_align  the FPN's maps ('0'..'3', not 'pool'),
**                                7 x 7, sampling_ratio 2
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

#ifdef LOOM_VISION_HAVE_ONEDNN
#include "onednn_net.h"
#endif
#include "fasterrcnn.h"

/* ----------------------------------------------------------------- RPN */

/* RPNHead on every level, reordered as concat_box_prediction_layers:
** objectness [B, sum H W A] (location-major, anchor minor), deltas
** [B, sum H W A, 4]; per_level[l] = H W A, grid[l] = (H, W). */
static loom_status rpn_head(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x, float **objectness,
                            float **deltas, int64_t *per_level, int64_t *grid, int64_t *total_out)
{
    const int64_t n = x[0]->shape[0], A = m->n_anchors;
    const int levels = rcnn_backbone_levels(&m->backbone);
    int64_t total = 0;
    for (int l = 0; l < levels; l++) {
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
    for (int l = 0; l < levels && st == LOOM_OK; l++) {
        loom_tensor *t = NULL, *lg = NULL, *bx = NULL;
        for (int d = 0; d < m->n_rpn_convs && st == LOOM_OK; d++) {
            loom_tensor *y = NULL;
            st = rcnn_conv(call, &m->backbone, &m->rpn_conv[d], t != NULL ? t : x[l], NULL, "relu", &y);
            rcnn_free_all(&t, 1);
            t = y;
        }
        if (st == LOOM_OK)
            st = rcnn_conv(call, &m->backbone, &m->rpn_cls, t, NULL, "none", &lg);
        if (st == LOOM_OK)
            st = rcnn_conv(call, &m->backbone, &m->rpn_bbox, t, NULL, "none", &bx);
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
        rcnn_free_all(f, 3);
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
    const int levels = rcnn_backbone_levels(&m->backbone);
    loom_status st = rpn_head(call, m, x, &objectness, &deltas, per_level, grid, &total);
    if (st == LOOM_OK) {
        int64_t gs[2] = { levels, 2 };
        loom_tensor g = { .data = grid, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                          .dtype = { LOOM_DL_INT, 64, 1 }, .shape = gs };
        static const double ratios[FRCNN_RATIOS] = { 0.5, 1.0, 2.0 };
        const int64_t image[2] = { batch->shape[2], batch->shape[3] };
        const loom_named_attr attrs[3] = { rcnn_ints_attr("sizes", m->anchor_sizes, m->n_anchor_sizes),
                                           rcnn_floats_attr("aspect_ratios", ratios, FRCNN_RATIOS),
                                           rcnn_ints_attr("image_size", image, 2) };
        const loom_tensor *in[1] = { &g };
        st = rcnn_call_op(call, m->anchors, in, 1, &anchors, 1, attrs, 3);
    }
    if (st == LOOM_OK) {
        int64_t os[2] = { batch->shape[0], total }, ds[3] = { batch->shape[0], total, 4 };
        loom_tensor to = model_view(objectness, 2, os), td = model_view(deltas, 3, ds);
        const loom_tensor *in[4] = { &to, &td, anchors, image_sizes };
        const fasterrcnn_params *p = &m->p;
        const loom_named_attr attrs[5] = {
            rcnn_ints_attr("num_anchors_per_level", per_level, levels),
            rcnn_int_attr("pre_nms_top_n", p->rpn_pre_nms_top_n),
            rcnn_int_attr("post_nms_top_n", p->rpn_post_nms_top_n),
            rcnn_float_attr("nms_thresh", p->rpn_nms_thresh), rcnn_float_attr("score_thresh", p->rpn_score_thresh),
        };
        st = rcnn_call_op(call, m->rpn, in, 4, prop, 3, attrs, 5);
    }
    free(objectness);
    free(deltas);
    rcnn_free_all(&anchors, 1);
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
        st = rcnn_conv(call, &m->backbone, &m->head_conv[i], maps != NULL ? maps : pooled, NULL, "relu", &y);
        rcnn_free_all(&maps, 1);
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
        st = rcnn_call_op(call, m->linear, ins, 3, &y, 1, NULL, 0);
        if (st == LOOM_OK)
            st = rcnn_call_op(call, m->relu, (const loom_tensor *const *)&y, 1, &r, 1, NULL, 0);
        rcnn_free_all(&y, 1);
        rcnn_free_all(&h, 1);
        h = r;
        in = h;
    }
    rcnn_free_all(&maps, 1);
    if (st != LOOM_OK)
        rcnn_free_all(&h, 1);
    *rep = h;
    return st;
}

/* The RoI heads: det[0..3] = boxes, scores, labels, offsets on the resized images. */
static loom_status roi_heads(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x,
                             loom_tensor *const *prop,
                             const loom_tensor *image_sizes, loom_tensor **det)
{
    loom_tensor *t[4] = { NULL, NULL, NULL, NULL };     /* pooled, representation, class_logits, box_regression */
    /* featmap_names '0'..'3': the FPN's own maps (the extra block's are not pooled) */
    const int maps = rcnn_backbone_fpn_inputs(&m->backbone);
    const loom_tensor *ms_in[7] = { prop[0], prop[2], image_sizes, x[0], maps > 1 ? x[1] : NULL,
                                    maps > 2 ? x[2] : NULL, maps > 3 ? x[3] : NULL };
    const int64_t seven = 7;
    const loom_named_attr ms_attrs[2] = { rcnn_ints_attr("output_size", &seven, 1),
                                           rcnn_int_attr("sampling_ratio", 2) };
    loom_status st = rcnn_call_op(call, m->multiscale, ms_in, 7, &t[0], 1, ms_attrs, 2);
    if (st == LOOM_OK)
        st = box_head(call, m, t[0], &t[1]);
    if (st == LOOM_OK) {
        const loom_tensor *ins[3] = { t[1], m->cls_w, m->cls_b };
        st = rcnn_call_op(call, m->linear, ins, 3, &t[2], 1, NULL, 0);
    }
    if (st == LOOM_OK) {
        const loom_tensor *ins[3] = { t[1], m->bbox_w, m->bbox_b };
        st = rcnn_call_op(call, m->linear, ins, 3, &t[3], 1, NULL, 0);
    }
    if (st == LOOM_OK) {
        const loom_tensor *ins[5] = { t[2], t[3], prop[0], prop[2], image_sizes };
        const loom_named_attr attrs[3] = { rcnn_float_attr("score_thresh", m->p.box_score_thresh),
                                           rcnn_float_attr("nms_thresh", m->p.box_nms_thresh),
                                           rcnn_int_attr("detections_per_img", m->p.box_detections_per_img) };
        st = rcnn_call_op(call, m->detections, ins, 5, det, 4, attrs, 3);
    }
    rcnn_free_all(t, 4);
    return st;
}

/* ---------------------------------------------------------------- run */

/* The RPN stage's method: the FPN maps, image_sizes, the proposals and their offsets. */
static loom_status rpn_outputs(loom_call *call, const fasterrcnn_model *m, loom_tensor *const *x,
                               const loom_tensor *image_sizes, loom_tensor *const *prop)
{
    const int32_t levels = rcnn_backbone_levels(&m->backbone);
    loom_status st = LOOM_OK;
    for (int32_t l = 0; l < levels && st == LOOM_OK; l++)
        st = rcnn_copy_out(call, l, x[l]);
    if (st == LOOM_OK)
        st = rcnn_copy_out(call, levels, image_sizes);
    if (st == LOOM_OK)
        st = rcnn_copy_out(call, levels + 1, prop[0]);
    return st != LOOM_OK ? st : rcnn_copy_out(call, levels + 2, prop[2]);
}

/* The transform, the backbone and the RPN of the call's images: p's input,
** batch and maps, and the proposals prop[0..3) (boxes, scores, offsets). */
static loom_status front(loom_call *call, const fasterrcnn_model *m, fasterrcnn_pass *p, loom_tensor **prop)
{
    memset(p, 0, sizeof *p);
    loom_status st = rcnn_input_list(m->cls, call, &p->flat, p->flat_shape, &p->offsets, p->off_shape, &p->sizes,
                                     p->size_shape, &p->own);
    if (st != LOOM_OK)
        return st;
    {
        const int64_t min_size = m->p.min_size, max_size = m->p.max_size;
        const loom_named_attr attrs[5] = { rcnn_int_attr("min_size", min_size), rcnn_int_attr("max_size", max_size),
                                           rcnn_floats_attr("image_mean", m->p.image_mean, 3),
                                           rcnn_floats_attr("image_std", m->p.image_std, 3),
                                           rcnn_int_attr("size_divisible", 32) };
        const loom_tensor *in[3] = { &p->flat, &p->offsets, &p->sizes };
        st = rcnn_call_op(call, m->transform, in, 3, p->tr, 2, attrs, 5);
    }
    if (st == LOOM_OK)
        st = rcnn_backbone_forward(call, &m->backbone, p->tr[0], p->x);
    return st != LOOM_OK ? st : proposals(call, m, p->x, p->tr[0], p->tr[1], prop);
}

loom_status fasterrcnn_detect(loom_call *call, const fasterrcnn_model *m, fasterrcnn_pass *p)
{
    loom_tensor *prop[3] = { NULL };
    loom_status st = front(call, m, p, prop);
    if (st == LOOM_OK)
        st = roi_heads(call, m, p->x, prop, p->tr[1], p->det);
    rcnn_free_all(prop, 3);
    return st;
}

/* The outputs: each image's boxes back to its original size. */
loom_status fasterrcnn_write_detections(loom_call *call, const fasterrcnn_model *m, const fasterrcnn_pass *p)
{
    return rcnn_write_detections(call, m->postprocess_boxes, p->det, p->tr[1], &p->sizes, p->offsets.shape[0] - 1);
}

void fasterrcnn_pass_free(fasterrcnn_pass *p)
{
    rcnn_free_all(p->x, FRCNN_LEVELS);
    rcnn_free_all(p->det, 4);
    rcnn_free_all(p->tr, 2);
    free(p->own);
    p->own = NULL;
}

static loom_status fasterrcnn_run(loom_call *call)
{
    fasterrcnn_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    fasterrcnn_pass p;
    loom_status st = fasterrcnn_detect(call, m, &p);
    if (st == LOOM_OK)
        st = fasterrcnn_write_detections(call, m, &p);
    fasterrcnn_pass_free(&p);
    pthread_mutex_unlock(&m->lock);
    return st;
}

static loom_status fasterrcnn_rpn_run(loom_call *call)
{
    fasterrcnn_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    fasterrcnn_pass p;
    loom_tensor *prop[3] = { NULL };
    loom_status st = front(call, m, &p, prop);
    if (st == LOOM_OK)
        st = rpn_outputs(call, m, p.x, p.tr[1], prop);
    rcnn_free_all(prop, 3);
    fasterrcnn_pass_free(&p);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ------------------------------------------------------------ schemas */

const loom_arg_def fasterrcnn_inputs[3] = {
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
/* the MobileNetV3 classes' _rpn method: the FPN's '0', '1' and 'pool' */
static const loom_arg_def frcnn_mnv3_rpn_outputs[] = {
    FRCNN_MAP_(0), FRCNN_MAP_(1),
    { .name = "features2", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[B, C, H, W] LastLevelMaxPool's 'pool' of the batch" },
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
              PK_INPUTS(fasterrcnn_inputs), PK_OUTPUTS(frcnn_outputs), .object_class = "vision." #id);
VISION_FASTERRCNNS(FRCNN_SCHEMA_)
VISION_FASTERRCNN_MOBILENETS(FRCNN_SCHEMA_)
#define FRCNN_RPN_SCHEMA_(id)                                                                      \
    PK_SCHEMA(vision_##id##_rpn_schema, "vision." #id "_rpn", 1,                                   \
              "torchvision.models.detection " #id " up to its RPN (eval): the FPN maps and the proposals",  \
              PK_INPUTS(fasterrcnn_inputs), PK_OUTPUTS(frcnn_rpn_outputs), .object_class = "vision." #id);
VISION_FASTERRCNNS(FRCNN_RPN_SCHEMA_)
#define FRCNN_MNV3_RPN_SCHEMA_(id)                                                                 \
    PK_SCHEMA(vision_##id##_rpn_schema, "vision." #id "_rpn", 1,                                   \
              "torchvision.models.detection " #id " up to its RPN (eval): the FPN maps and the proposals",  \
              PK_INPUTS(fasterrcnn_inputs), PK_OUTPUTS(frcnn_mnv3_rpn_outputs), .object_class = "vision." #id);
VISION_FASTERRCNN_MOBILENETS(FRCNN_MNV3_RPN_SCHEMA_)

/* the images are f32, their offsets and sizes i64 (the schema checks which is which) */
#define FRCNN_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define FRCNN_KERNEL_(id)                                                                          \
    PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", FRCNN_DTYPES, fasterrcnn_run),
#define FRCNN_RPN_KERNEL_(id)                                                                      \
    PK_KERNEL_CPU(vision_##id##_rpn_schema, "cpu:ops", FRCNN_DTYPES, fasterrcnn_rpn_run),
const loom_kernel_desc fasterrcnn_kernels[12] = {
    VISION_FASTERRCNNS(FRCNN_KERNEL_) VISION_FASTERRCNNS(FRCNN_RPN_KERNEL_)
    VISION_FASTERRCNN_MOBILENETS(FRCNN_KERNEL_) VISION_FASTERRCNN_MOBILENETS(FRCNN_RPN_KERNEL_)
};
#ifdef LOOM_VISION_HAVE_ONEDNN
/* The ResNet classes' methods with the backbone as one oneDNN plan
** (rcnn_backbone.h); the MobileNetV3 body has no plan. */
#define FRCNN_ONEDNN_KERNEL_(id)                                                                   \
    PK_KERNEL(vision_##id##_schema, "onednn", LOOM_DEVICE_CPU, "onednn:backbone-plan", FRCNN_DTYPES, \
              fasterrcnn_run, .supports = onednn_model_supports),
#define FRCNN_RPN_ONEDNN_KERNEL_(id)                                                               \
    PK_KERNEL(vision_##id##_rpn_schema, "onednn", LOOM_DEVICE_CPU, "onednn:backbone-plan", FRCNN_DTYPES, \
              fasterrcnn_rpn_run, .supports = onednn_model_supports),
const loom_kernel_desc fasterrcnn_onednn_kernels[6] = {
    VISION_FASTERRCNNS(FRCNN_ONEDNN_KERNEL_) VISION_FASTERRCNNS(FRCNN_RPN_ONEDNN_KERNEL_)
};
#endif
