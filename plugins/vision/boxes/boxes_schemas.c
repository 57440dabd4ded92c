/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_schemas.c - the definitions of the box ops of the vision pack:
** nms, batched_nms, the pairwise IoU family, the IoU losses and the box
** utilities of torchvision.ops. Compiled into vision.so and vision-cuda.so
** alike so both packs define identical schemas. Input, output and
** attribute names are torchvision's argument names.
**
** dtypes follow torchvision's CPU support: nms and batched_nms run on
** f32/f64 only (torchvision's nms kernel refuses half); the pure-torch ops
** also take f16. The IoU family, the losses and box_area return f32 for
** f16 boxes (torchvision's _upcast / _upcast_non_float); box_convert and
** clip_boxes_to_image keep the input dtype.
*/
#include "boxes.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

/* ------------------------------------------------------------- arguments */

static const loom_arg_def nms_in[] = {
    { .name = "boxes", .dtypes = PK_F32_F64, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
    { .name = "scores", .dtypes = PK_F32_F64, .ndim = 1, .doc = "[N], same dtype as boxes" },
};
static const loom_arg_def batched_nms_in[] = {
    { .name = "boxes", .dtypes = PK_F32_F64, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
    { .name = "scores", .dtypes = PK_F32_F64, .ndim = 1, .doc = "[N], same dtype as boxes" },
    { .name = "idxs", .dtypes = I64, .ndim = 1, .doc = "[N] category of each box" },
};
static const loom_arg_def pair_in[] = {
    { .name = "boxes1", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[N, 4]" },
    { .name = "boxes2", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[M, 4], same dtype as boxes1" },
};
static const loom_arg_def loss_in[] = {
    { .name = "boxes1", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[.., 4] (x1, y1, x2, y2)" },
    { .name = "boxes2", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "same shape and dtype as boxes1" },
};
static const loom_arg_def boxes_in[] = {
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[.., 4]" },
};
static const loom_arg_def small_in[] = {
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
};

static const loom_arg_def index_out[] = {
    { .name = "output", .dtypes = I64, .ndim = 1, .doc = "[K] indices of the kept boxes" },
};
static const loom_arg_def matrix_out[] = {
    { .name = "output", .dtypes = PK_F32_F64, .ndim = 2, .doc = "[N, M] (f32 for f16 boxes)" },
};
static const loom_arg_def loss_out[] = {
    { .name = "output", .dtypes = PK_F32_F64, .ndim = -1,
      .doc = "[..] for 'none', else a scalar (f32 for f16 boxes)" },
};
static const loom_arg_def boxes_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "same shape and dtype as boxes" },
};
static const loom_arg_def area_out[] = {
    { .name = "output", .dtypes = PK_F32_F64, .ndim = -1, .doc = "[..] (f32 for f16 boxes)" },
};

/* ------------------------------------------------------------ attributes */

PK_ATTR_TABLE(bx_nms, BX_NMS_ATTRS);
PK_ATTR_TABLE(bx_fmt, BX_FMT_ATTRS);
PK_ATTR_TABLE(bx_eps, BX_EPS_ATTRS);
PK_ATTR_TABLE(bx_loss, BX_LOSS_ATTRS);
PK_ATTR_TABLE(bx_convert, BX_CONVERT_ATTRS);
PK_ATTR_TABLE(bx_clip, BX_CLIP_ATTRS);
PK_ATTR_TABLE(bx_small, BX_SMALL_ATTRS);

/* ------------------------------------------------------------------ cost */

/* bytes of boxes and scores read; the IoU tests depend on the scene, so
** no flop count is declared */
static void nms_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *b = call->inputs[0];
    (void)flops;
    if (b == NULL || b->ndim < 1)
        return;
    double n = (double)b->shape[0], es = (double)pk_host->dtype_size(loom_tensor_dtype_of(b));
    *bytes = 5.0 * n * es;
}

static void pair_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (a == NULL || b == NULL || a->ndim < 1 || b->ndim < 1)
        return;
    double n = (double)a->shape[0], m = (double)b->shape[0];
    double es = (double)pk_host->dtype_size(loom_tensor_dtype_of(a));
    *flops = 16.0 * n * m;
    *bytes = 4.0 * (n + m) * es + n * m * (es < 4.0 ? 4.0 : es);
}

/* ---------------------------------------------------------------- schemas */

PK_SCHEMA(vision_nms_schema, "vision.nms", 1,
          "torchvision.ops.nms: indices of the boxes kept by greedy IoU suppression, by decreasing score",
          PK_INPUTS(nms_in), PK_OUTPUTS(index_out), PK_ATTRS(bx_nms_attrs), .cost = nms_cost);
PK_SCHEMA(vision_batched_nms_schema, "vision.batched_nms", 1,
          "torchvision.ops.batched_nms: nms within each category of idxs, indices by decreasing score",
          PK_INPUTS(batched_nms_in), PK_OUTPUTS(index_out), PK_ATTRS(bx_nms_attrs), .cost = nms_cost);
PK_SCHEMA(vision_box_iou_schema, "vision.box_iou", 1, "torchvision.ops.box_iou: pairwise IoU [N, M]",
          PK_INPUTS(pair_in), PK_OUTPUTS(matrix_out), PK_ATTRS(bx_fmt_attrs), .cost = pair_cost);
PK_SCHEMA(vision_generalized_box_iou_schema, "vision.generalized_box_iou", 1,
          "torchvision.ops.generalized_box_iou: pairwise GIoU [N, M] of xyxy boxes",
          PK_INPUTS(pair_in), PK_OUTPUTS(matrix_out), .cost = pair_cost);
PK_SCHEMA(vision_distance_box_iou_schema, "vision.distance_box_iou", 1,
          "torchvision.ops.distance_box_iou: pairwise DIoU [N, M] of xyxy boxes",
          PK_INPUTS(pair_in), PK_OUTPUTS(matrix_out), PK_ATTRS(bx_eps_attrs), .cost = pair_cost);
PK_SCHEMA(vision_complete_box_iou_schema, "vision.complete_box_iou", 1,
          "torchvision.ops.complete_box_iou: pairwise CIoU [N, M] of xyxy boxes",
          PK_INPUTS(pair_in), PK_OUTPUTS(matrix_out), PK_ATTRS(bx_eps_attrs), .cost = pair_cost);
PK_SCHEMA(vision_generalized_box_iou_loss_schema, "vision.generalized_box_iou_loss", 1,
          "torchvision.ops.generalized_box_iou_loss: 1 - GIoU of paired boxes, reduced",
          PK_INPUTS(loss_in), PK_OUTPUTS(loss_out), PK_ATTRS(bx_loss_attrs));
PK_SCHEMA(vision_distance_box_iou_loss_schema, "vision.distance_box_iou_loss", 1,
          "torchvision.ops.distance_box_iou_loss: 1 - DIoU of paired boxes, reduced",
          PK_INPUTS(loss_in), PK_OUTPUTS(loss_out), PK_ATTRS(bx_loss_attrs));
PK_SCHEMA(vision_complete_box_iou_loss_schema, "vision.complete_box_iou_loss", 1,
          "torchvision.ops.complete_box_iou_loss: 1 - CIoU of paired boxes, reduced",
          PK_INPUTS(loss_in), PK_OUTPUTS(loss_out), PK_ATTRS(bx_loss_attrs));
PK_SCHEMA(vision_box_convert_schema, "vision.box_convert", 1,
          "torchvision.ops.box_convert between xyxy, xywh and cxcywh",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(bx_convert_attrs));
PK_SCHEMA(vision_box_area_schema, "vision.box_area", 1, "torchvision.ops.box_area of [.., 4] boxes",
          PK_INPUTS(boxes_in), PK_OUTPUTS(area_out), PK_ATTRS(bx_fmt_attrs));
PK_SCHEMA(vision_clip_boxes_to_image_schema, "vision.clip_boxes_to_image", 1,
          "torchvision.ops.clip_boxes_to_image: clamp x to [0, width] and y to [0, height]",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(bx_clip_attrs));
PK_SCHEMA(vision_remove_small_boxes_schema, "vision.remove_small_boxes", 1,
          "torchvision.ops.remove_small_boxes: indices of boxes with both sides >= min_size",
          PK_INPUTS(small_in), PK_OUTPUTS(index_out), PK_ATTRS(bx_small_attrs));

PK_OPS_DEFINE(vision_boxes_ops, VISION_BOXES_OPS);
