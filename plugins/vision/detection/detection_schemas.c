/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detection_schemas.c - the definitions of the detection module's ops:
** torchvision.models.detection's GeneralizedRCNNTransform, AnchorGenerator,
** BoxCoder and the RPN's proposal filter. Input, output and attribute names
** are torchvision's. vision.so only (the module is cpu only).
*/
#include "detection.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

PK_ATTR_TABLE(rcnn_size, RCNN_SIZE_ATTRS);
PK_ATTR_TABLE(rcnn_transform, RCNN_TRANSFORM_ATTRS);
PK_ATTR_TABLE(rcnn_postprocess, RCNN_POSTPROCESS_ATTRS);
PK_ATTR_TABLE(anchor, ANCHOR_ATTRS);
PK_ATTR_TABLE(box_decode, BOX_DECODE_ATTRS);
PK_ATTR_TABLE(rpn, RPN_ATTRS);
PK_ATTR_TABLE(multiscale, MULTISCALE_ATTRS);
PK_ATTR_TABLE(detections, DETECTIONS_ATTRS);

/* ------------------------------------------------------------- arguments */

static const loom_arg_def transform_in[] = {
    { .name = "images", .dtypes = F32, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the [C, H, W] images (C the count of image_mean) flattened, one after the other" },
    { .name = "images_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[B+1] element offsets of each image in images" },
    { .name = "original_sizes", .dtypes = I64, .ndim = 2, .doc = "[B, 2] (H, W) of each image" },
};
static const loom_arg_def transform_out[] = {
    { .name = "tensors", .dtypes = F32, .ndim = 4,
      .doc = "[B, C, H', W']: each image normalized, resized and zero-padded at the bottom and right" },
    { .name = "image_sizes", .dtypes = I64, .ndim = 2, .doc = "[B, 2] (h, w) of each resized image" },
};
static const loom_arg_def resize_in[] = {
    { .name = "image", .dtypes = F32, .ndim = 3, .doc = "[C, H, W] (normalized) image" },
};
static const loom_arg_def resize_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 3, .doc = "[C, h, w], bilinear without antialias" },
};
static const loom_arg_def boxes_in[] = {
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[N, 4] xyxy boxes on the resized image" },
};
static const loom_arg_def boxes_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 2, .doc = "[N, 4] the boxes on the original image" },
};
static const loom_arg_def anchors_in[] = {
    { .name = "grid_sizes", .dtypes = I64, .ndim = 2, .doc = "[L, 2] (h, w) of each level's feature map" },
};
static const loom_arg_def anchors_out[] = {
    { .name = "anchors", .dtypes = F32, .ndim = 2,
      .doc = "[sum of h * w * sizes * ratios, 4] xyxy: level by level, row-major locations, then "
             "ratio-major cell anchors" },
};
static const loom_arg_def decode_in[] = {
    { .name = "rel_codes", .dtypes = F32, .ndim = 2, .doc = "[N, 4 K] (dx, dy, dw, dh) per box and class" },
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[N, 4] xyxy reference boxes (anchors, proposals)" },
};
static const loom_arg_def decode_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 3, .doc = "[N, K, 4] decoded xyxy boxes" },
};
static const loom_arg_def rpn_in[] = {
    { .name = "objectness", .dtypes = F32, .ndim = 2,
      .doc = "[B, A] logits, levels concatenated as concat_box_prediction_layers orders them" },
    { .name = "pred_bbox_deltas", .dtypes = F32, .ndim = 3, .doc = "[B, A, 4] box codes, in the same order" },
    { .name = "anchors", .dtypes = F32, .ndim = 2, .doc = "[A, 4] the anchors (vision.anchor_generator)" },
    { .name = "image_sizes", .dtypes = I64, .ndim = 2, .doc = "[B, 2] (h, w) each image's proposals are clipped to" },
};
static const loom_arg_def rpn_out[] = {
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[K, 4] the proposals of every image, image after image" },
    { .name = "scores", .dtypes = F32, .ndim = 1, .doc = "[K] their sigmoid(objectness), decreasing per image" },
    { .name = "offsets", .dtypes = I64, .ndim = 1, .doc = "[B+1] image b's rows are offsets[b]..offsets[b+1]" },
};

#define FEATURE_MAP(i, FLAGS)                                                                      \
    { .name = "x" #i, .dtypes = F32, .flags = (FLAGS), .ndim = 4,                                  \
      .doc = "[B, C, H, W] feature map " #i " (x0 the finest; absent: fewer levels)" }
static const loom_arg_def multiscale_in[] = {
    { .name = "boxes", .dtypes = F32, .flags = LOOM_ARG_JAGGED, .ndim = 2,
      .doc = "[K, 4] xyxy boxes of every image, image after image" },
    { .name = "boxes_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[B+1] image b's boxes are rows offsets[b]..offsets[b+1]" },
    { .name = "image_sizes", .dtypes = I64, .ndim = 2, .doc = "[B, 2] (h, w) of each image (the maps' scales)" },
    FEATURE_MAP(0, 0), FEATURE_MAP(1, LOOM_ARG_OPTIONAL), FEATURE_MAP(2, LOOM_ARG_OPTIONAL),
    FEATURE_MAP(3, LOOM_ARG_OPTIONAL),
};
static const loom_arg_def multiscale_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 4, .doc = "[K, C, PH, PW] each box pooled from its level" },
};
static const loom_arg_def detections_in[] = {
    { .name = "class_logits", .dtypes = F32, .ndim = 2, .doc = "[K, C] the box predictor's class logits" },
    { .name = "box_regression", .dtypes = F32, .ndim = 2, .doc = "[K, 4 C] its box codes per class" },
    { .name = "proposals", .dtypes = F32, .flags = LOOM_ARG_JAGGED, .ndim = 2,
      .doc = "[K, 4] the proposals the rows belong to, image after image" },
    { .name = "proposals_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[B+1] image b's proposals are rows offsets[b]..offsets[b+1]" },
    { .name = "image_sizes", .dtypes = I64, .ndim = 2, .doc = "[B, 2] (h, w) the boxes are clipped to" },
};
static const loom_arg_def detections_out[] = {
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[D, 4] detections of every image, image after image" },
    { .name = "scores", .dtypes = F32, .ndim = 1, .doc = "[D] their class scores, decreasing per image" },
    { .name = "labels", .dtypes = I64, .ndim = 1, .doc = "[D] their classes (1..C-1)" },
    { .name = "offsets", .dtypes = I64, .ndim = 1, .doc = "[B+1] image b's rows are offsets[b]..offsets[b+1]" },
};

/* ---------------------------------------------------------------- schemas */

PK_SCHEMA(vision_rcnn_transform_schema, "vision.rcnn_transform", 1,
          "torchvision GeneralizedRCNNTransform (eval): normalize, resize each image, batch padded to "
          "size_divisible",
          PK_INPUTS(transform_in), PK_OUTPUTS(transform_out), PK_ATTRS(rcnn_transform_attrs));
PK_SCHEMA(vision_rcnn_resize_schema, "vision.rcnn_resize", 1,
          "the resize of GeneralizedRCNNTransform: short edge to min_size, long edge at most max_size, bilinear",
          PK_INPUTS(resize_in), PK_OUTPUTS(resize_out), PK_ATTRS(rcnn_size_attrs));
PK_SCHEMA(vision_rcnn_postprocess_boxes_schema, "vision.rcnn_postprocess_boxes", 1,
          "GeneralizedRCNNTransform.postprocess: boxes scaled back from image_size to original_size",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(rcnn_postprocess_attrs));
PK_SCHEMA(vision_anchor_generator_schema, "vision.anchor_generator", 1,
          "torchvision AnchorGenerator: the anchors of every level of one batch's feature maps",
          PK_INPUTS(anchors_in), PK_OUTPUTS(anchors_out), PK_ATTRS(anchor_attrs));
PK_SCHEMA(vision_box_coder_decode_schema, "vision.box_coder_decode", 1,
          "torchvision BoxCoder.decode: box codes relative to reference boxes, to xyxy boxes",
          PK_INPUTS(decode_in), PK_OUTPUTS(decode_out), PK_ATTRS(box_decode_attrs));
PK_SCHEMA(vision_rpn_proposals_schema, "vision.rpn_proposals", 1,
          "torchvision RegionProposalNetwork after its head: decode, top-n per level, clip, remove small, "
          "score threshold, nms per level, post-nms top-n",
          PK_INPUTS(rpn_in), PK_OUTPUTS(rpn_out), PK_ATTRS(rpn_attrs));

PK_SCHEMA(vision_multiscale_roi_align_schema, "vision.multiscale_roi_align", 1,
          "torchvision MultiScaleRoIAlign: each box pooled by roi_align from the FPN level its size maps to",
          PK_INPUTS(multiscale_in), PK_OUTPUTS(multiscale_out), PK_ATTRS(multiscale_attrs));
PK_SCHEMA(vision_rcnn_postprocess_detections_schema, "vision.rcnn_postprocess_detections", 1,
          "torchvision RoIHeads.postprocess_detections: softmax, decode, clip, score threshold, nms per class, "
          "detections_per_img",
          PK_INPUTS(detections_in), PK_OUTPUTS(detections_out), PK_ATTRS(detections_attrs));

PK_OPS_DEFINE(vision_detection_ops, VISION_DETECTION_OPS);
