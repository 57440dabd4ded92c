/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_forward.c - the methods of the RetinaNet classes (retinanet.h):
** torchvision's RetinaNet in eval as a sequence of dispatched ops
** (host->op_call), so LOOM_VERBOSE=2 names each step's backend:
**   vision.rcnn_transform         normalize, resize, batch (size_divisible 32)
**   the backbone                  rcnn_backbone.h's: the body, the FPN of the
**                                 returned layers, LastLevelP6P7
**   vision.retinanet_head         the classification head, then the
**                                 regression head, over every level
**   vision.anchor_generator       the anchor_sizes and aspect_ratios
**   vision.retinanet_postprocess  score_thresh, topk_candidates, nms_thresh,
**                                 detections_per_img
**   vision.rcnn_postprocess_boxes each image's boxes back to its size
**
** Input: images, either one f32 NCHW batch [B, 3, H, W] (images_offsets and
** original_sizes absent) or the jagged list vision.rcnn_transform takes
** (the [3, H, W] images flattened one after the other, images_offsets
** [B+1] element offsets, original_sizes [B, 2]). Output: the detections of
** every image, image after image: boxes [D, 4] xyxy on the original image,
** scores [D] (decreasing per image), labels [D] (0..classes-1, as
** torchvision's RetinaNet gives them) and offsets [B+1].
**
** The method vision.<class>_features runs the transform and the backbone
** and gives the five maps and image_sizes.
**
** Intermediate tensors are allocated by the ops and freed as soon as the
** next step has read them. One forward at a time per object (its lock).
*/
#include <stdlib.h>
#include <string.h>

#ifdef LOOM_VISION_HAVE_ONEDNN
#include "onednn_net.h"
#endif
#include "retinanet.h"

#define RETINA_LEVELS 5     /* the maps of 3 returned layers + p6, p7 (vision.retinanet_head takes 5) */

/* One head over the levels: *out [B, sum H W A, K]. */
static loom_status run_head(loom_call *call, const retinanet_model *m, const retinanet_head *h,
                            loom_tensor *const *x, int levels, loom_tensor **out)
{
    const int64_t C = m->backbone.fpn_channels;
    int64_t ws[5] = { RETINA_HEAD_CONVS, C, C, 3, 3 }, vs[2] = { RETINA_HEAD_CONVS, C };
    loom_tensor tw = model_view(h->conv_weight, 5, ws), tb, tgw, tgb;
    const loom_tensor *in[6 + RETINA_LEVELS] = { &tw, NULL, NULL, NULL, h->out_weight, h->out_bias };
    if (h->conv_bias != NULL) {
        tb = model_view(h->conv_bias, 2, vs);
        in[1] = &tb;
    }
    if (h->norm_weight != NULL) {
        tgw = model_view(h->norm_weight, 2, vs);
        tgb = model_view(h->norm_bias, 2, vs);
        in[2] = &tgw;
        in[3] = &tgb;
    }
    for (int l = 0; l < levels; l++)
        in[6 + l] = x[l];
    const loom_named_attr attrs[3] = { rcnn_int_attr("num_outputs", h->outputs), rcnn_int_attr("num_groups", 32),
                                       rcnn_float_attr("eps", 1e-5) };
    return rcnn_call_op(call, m->head_op, in, 6 + levels, out, 1, attrs, m->v2 ? 3 : 1);
}

/* The detections on the resized images: det[0..3] boxes, scores, labels, offsets. */
static loom_status detect(loom_call *call, const retinanet_model *m, loom_tensor *const *x, int levels,
                          const loom_tensor *batch, const loom_tensor *image_sizes, loom_tensor **det)
{
    loom_tensor *t[3] = { NULL, NULL, NULL };   /* cls_logits, bbox_regression, anchors */
    loom_status st = run_head(call, m, &m->head[0], x, levels, &t[0]);
    if (st == LOOM_OK)
        st = run_head(call, m, &m->head[1], x, levels, &t[1]);
    int64_t grid[2 * RETINA_LEVELS], per_level[RETINA_LEVELS];
    for (int l = 0; l < levels; l++) {
        grid[2 * l] = x[l]->shape[2];
        grid[2 * l + 1] = x[l]->shape[3];
        per_level[l] = grid[2 * l] * grid[2 * l + 1] * m->anchors_per_location;
    }
    if (st == LOOM_OK) {
        int64_t gs[2] = { levels, 2 };
        loom_tensor g = { .data = grid, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                          .dtype = { LOOM_DL_INT, 64, 1 }, .shape = gs };
        const int64_t image[2] = { batch->shape[2], batch->shape[3] };
        const loom_named_attr attrs[3] = { rcnn_ints_attr("sizes", m->p.anchor_sizes, m->p.n_sizes),
                                           rcnn_floats_attr("aspect_ratios", m->p.aspect_ratios, m->p.n_ratios),
                                           rcnn_ints_attr("image_size", image, 2) };
        const loom_tensor *in[1] = { &g };
        st = rcnn_call_op(call, m->anchors, in, 1, &t[2], 1, attrs, 3);
    }
    if (st == LOOM_OK) {
        const loom_tensor *in[4] = { t[0], t[1], t[2], image_sizes };
        const retinanet_params *p = &m->p;
        const loom_named_attr attrs[5] = {
            rcnn_ints_attr("num_anchors_per_level", per_level, levels),
            rcnn_float_attr("score_thresh", p->score_thresh), rcnn_float_attr("nms_thresh", p->nms_thresh),
            rcnn_int_attr("detections_per_img", p->detections_per_img),
            rcnn_int_attr("topk_candidates", p->topk_candidates),
        };
        st = rcnn_call_op(call, m->postprocess, in, 4, det, 4, attrs, 5);
    }
    rcnn_free_all(t, 3);
    return st;
}

/* The outputs: det's rows, each image's boxes back to its original size. */
static loom_status detections_out(loom_call *call, const retinanet_model *m, loom_tensor *const *det,
                                  const loom_tensor *resized_sizes, const loom_tensor *original_sizes, int64_t B)
{
    return rcnn_write_detections(call, m->postprocess_boxes, det, resized_sizes, original_sizes, B);
}

/* The detector on the call's images; features_only: the _features method. */
static loom_status forward(loom_call *call, const retinanet_model *m, int features_only)
{
    loom_tensor flat, offsets, sizes;
    int64_t flat_shape[1], off_shape[1], size_shape[2], *own = NULL;
    loom_status st = rcnn_input_list(m->cls, call, &flat, flat_shape, &offsets, off_shape, &sizes, size_shape, &own);
    if (st != LOOM_OK)
        return st;
    loom_tensor *tr[2] = { NULL, NULL };    /* the batch, image_sizes */
    {
        const loom_named_attr attrs[5] = { rcnn_int_attr("min_size", m->p.min_size),
                                           rcnn_int_attr("max_size", m->p.max_size),
                                           rcnn_floats_attr("image_mean", m->p.image_mean, 3),
                                           rcnn_floats_attr("image_std", m->p.image_std, 3),
                                           rcnn_int_attr("size_divisible", 32) };
        const loom_tensor *in[3] = { &flat, &offsets, &sizes };
        st = rcnn_call_op(call, m->transform, in, 3, tr, 2, attrs, 5);
    }
    const int levels = rcnn_backbone_levels(&m->backbone);     /* RETINA_LEVELS: layer2..4, p6, p7 */
    loom_tensor *x[RCNN_MAX_LEVELS] = { NULL }, *det[4] = { NULL };
    if (st == LOOM_OK)
        st = rcnn_backbone_forward(call, &m->backbone, tr[0], x);
    if (st == LOOM_OK && features_only) {
        for (int32_t l = 0; l < RETINA_LEVELS && st == LOOM_OK; l++)
            st = rcnn_copy_out(call, l, x[l]);
        if (st == LOOM_OK)
            st = rcnn_copy_out(call, RETINA_LEVELS, tr[1]);
    } else if (st == LOOM_OK) {
        st = detect(call, m, x, levels, tr[0], tr[1], det);
        rcnn_free_all(x, RCNN_MAX_LEVELS);
        if (st == LOOM_OK)
            st = detections_out(call, m, det, tr[1], &sizes, offsets.shape[0] - 1);
    }
    rcnn_free_all(x, RCNN_MAX_LEVELS);
    rcnn_free_all(det, 4);
    rcnn_free_all(tr, 2);
    free(own);
    return st;
}

static loom_status retinanet_run(loom_call *call)
{
    retinanet_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    loom_status st = forward(call, m, 0);
    pthread_mutex_unlock(&m->lock);
    return st;
}

static loom_status retinanet_features_run(loom_call *call)
{
    retinanet_model *m = call->object;
    pthread_mutex_lock(&m->lock);
    loom_status st = forward(call, m, 1);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ------------------------------------------------------------ schemas */

static const loom_arg_def retina_inputs[] = {
    { .name = "images", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "RGB in [0, 1]: one NCHW batch [B, 3, H, W], or the [3, H, W] images flattened one after the other "
             "(then images_offsets and original_sizes)" },
    { .name = "images_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[B+1] element offsets of each image in the flattened images" },
    { .name = "original_sizes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[B, 2] (H, W) of each flattened image" },
};
static const loom_arg_def retina_outputs[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[D, 4] xyxy detections on the original images, image after image" },
    { .name = "scores", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1, .doc = "[D] decreasing per image" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[D] classes 0..classes-1 (torchvision's RetinaNet labels)" },
    { .name = "offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[B+1] image b's detections are rows offsets[b]..offsets[b+1]" },
};

#define RETINA_MAP_(i, what) { .name = "features" #i, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4, \
                               .doc = "[B, C, H, W] the backbone's map " #i " of the batch (" what ")" }
static const loom_arg_def retina_features_outputs[] = {
    RETINA_MAP_(0, "FPN"), RETINA_MAP_(1, "FPN"), RETINA_MAP_(2, "FPN"), RETINA_MAP_(3, "LastLevelP6P7's p6"),
    RETINA_MAP_(4, "p7"),
    { .name = "image_sizes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 2,
      .doc = "[B, 2] (h, w) of each resized image in the batch" },
};
#undef RETINA_MAP_

#define RETINA_SCHEMA_(id)                                                                         \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1,                                              \
              "torchvision.models.detection " #id " forward (eval): detections of a list of images",  \
              PK_INPUTS(retina_inputs), PK_OUTPUTS(retina_outputs), .object_class = "vision." #id);
VISION_RETINANETS(RETINA_SCHEMA_)
#define RETINA_FEATURES_SCHEMA_(id)                                                                \
    PK_SCHEMA(vision_##id##_features_schema, "vision." #id "_features", 1,                         \
              "torchvision.models.detection " #id " up to its backbone (eval): the five maps the heads take", \
              PK_INPUTS(retina_inputs), PK_OUTPUTS(retina_features_outputs), .object_class = "vision." #id);
VISION_RETINANETS(RETINA_FEATURES_SCHEMA_)

/* the images are f32, their offsets and sizes i64 (the schema checks which is which) */
#define RETINA_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define RETINA_KERNEL_(id) PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", RETINA_DTYPES, retinanet_run),
#define RETINA_FEATURES_KERNEL_(id)                                                                \
    PK_KERNEL_CPU(vision_##id##_features_schema, "cpu:ops", RETINA_DTYPES, retinanet_features_run),
const loom_kernel_desc retinanet_kernels[6] = {
    VISION_RETINANETS(RETINA_KERNEL_) VISION_RETINANETS(RETINA_FEATURES_KERNEL_)
};
#ifdef LOOM_VISION_HAVE_ONEDNN
/* The same methods with the backbone as one oneDNN plan (rcnn_backbone.h):
** first where oneDNN is, as its backend comes before cpu. */
#define RETINA_ONEDNN_KERNEL_(id)                                                                  \
    PK_KERNEL(vision_##id##_schema, "onednn", LOOM_DEVICE_CPU, "onednn:backbone-plan", RETINA_DTYPES,  \
              retinanet_run, .supports = onednn_model_supports),
#define RETINA_FEATURES_ONEDNN_KERNEL_(id)                                                         \
    PK_KERNEL(vision_##id##_features_schema, "onednn", LOOM_DEVICE_CPU, "onednn:backbone-plan", RETINA_DTYPES, \
              retinanet_features_run, .supports = onednn_model_supports),
const loom_kernel_desc retinanet_onednn_kernels[6] = {
    VISION_RETINANETS(RETINA_ONEDNN_KERNEL_) VISION_RETINANETS(RETINA_FEATURES_ONEDNN_KERNEL_)
};
#endif
