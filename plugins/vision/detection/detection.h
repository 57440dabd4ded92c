/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detection.h - what the files of the vision `detection` module share: the
** parts of torchvision's two-stage detectors (torchvision.models.detection)
** as ops, each usable on its own, in the order a detector runs them:
**
**   transform_cpu.c  vision.rcnn_transform (GeneralizedRCNNTransform in
**                    eval: normalize, resize, batch) and vision.rcnn_resize
**                    (its one-image resize)
**   postprocess_cpu.c  vision.rcnn_postprocess_boxes (boxes back to the
**                    original image size)
**   anchors_cpu.c    vision.anchor_generator (AnchorGenerator)
**   box_decode.c     the BoxCoder decode shared by the ops below
**   box_decode_cpu.c vision.box_coder_decode (BoxCoder.decode)
**   rpn_cpu.c        vision.rpn_proposals (RegionProposalNetwork after its
**                    head: decode, then filter_proposals)
**   multiscale_cpu.c vision.multiscale_roi_align (MultiScaleRoIAlign with
**                    its LevelMapper, on the landed vision.roi_align)
**   detections_cpu.c vision.rcnn_postprocess_detections (RoIHeads'
**                    postprocess_detections)
**   det_nms.c        the dispatched vision.batched_nms both filters call
**
** The module is cpu only: its schemas go into vision.so alone. Every float
** is float32 and every expression is evaluated in torchvision's order with
** one rounding per operation (the pack builds without contraction), so the
** results are torchvision's up to the few libm differences each op names.
** Everything here has hidden visibility.
*/
#ifndef LOOM_VISION_DETECTION_H
#define LOOM_VISION_DETECTION_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

#define VISION_DETECTION_OPS(X)                                                                    \
    X(vision_rcnn_transform_schema) X(vision_rcnn_resize_schema) X(vision_rcnn_postprocess_boxes_schema) \
    X(vision_anchor_generator_schema) X(vision_box_coder_decode_schema) X(vision_rpn_proposals_schema) \
    X(vision_multiscale_roi_align_schema) X(vision_rcnn_postprocess_detections_schema)
PK_OPS_DECLARE(vision_detection_ops, VISION_DETECTION_OPS);

/* ----------------------------------------------------------- attributes */

#define RCNN_SIZE_ATTRS(A, op)                                                                     \
    A(op, min_size, INT, LOOM_DEFAULT_INT(800), LOOM_ATTR_POSITIVE,                                \
      "the short edge is scaled to min_size (torchvision's min_size[-1] in eval)", )               \
    A(op, max_size, INT, LOOM_DEFAULT_INT(1333), LOOM_ATTR_POSITIVE,                               \
      "unless the long edge would then pass max_size: scale = min(min_size/short, max_size/long)", )
#define RCNN_TRANSFORM_ATTRS(A, op)                                                                \
    RCNN_SIZE_ATTRS(A, op)                                                                         \
    A(op, image_mean, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                 \
      "one per channel; absent: ImageNet's 0.485, 0.456, 0.406", )                                 \
    A(op, image_std, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,             \
      "one per channel; absent: ImageNet's 0.229, 0.224, 0.225", )                                 \
    A(op, size_divisible, INT, LOOM_DEFAULT_INT(32), LOOM_ATTR_POSITIVE,                           \
      "the batch's height and width are rounded up to a multiple of this", )
#define RCNN_POSTPROCESS_ATTRS(A, op)                                                              \
    A(op, image_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,            \
      "(H, W) the boxes lie on: the resized image (rcnn_transform's image_sizes row)", )           \
    A(op, original_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,         \
      "(H, W) of the image before the transform", )
#define ANCHOR_ATTRS(A, op)                                                                        \
    A(op, sizes, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,                 \
      "anchor sizes, the same count per level, level after level (torchvision's sizes flattened)", ) \
    A(op, aspect_ratios, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, \
      "height / width ratios, the same on every level (as every torchvision detector has them)", ) \
    A(op, image_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,            \
      "(H, W) of the batched images (their padded size); a level's stride is H // h, W // w", )
#define BOX_DECODE_ATTRS(A, op)                                                                    \
    A(op, weights, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,               \
      "(wx, wy, ww, wh) the codes are divided by; absent: 1, 1, 1, 1 (the RPN's; the RoI heads use 10, 10, 5, 5)", ) \
    A(op, bbox_xform_clip, FLOAT, LOOM_DEFAULT_FLOAT(4.135166556742356), LOOM_ATTR_FINITE,         \
      "dw and dh are clamped above at this (default log(1000 / 16))", )
#define RPN_ATTRS(A, op)                                                                           \
    A(op, num_anchors_per_level, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,   \
      "anchors of each level (h * w * anchors per location), summing to A", )                      \
    A(op, pre_nms_top_n, INT, LOOM_DEFAULT_INT(1000), LOOM_ATTR_POSITIVE,                          \
      "the best this many anchors of each level (by objectness) go on", )                          \
    A(op, post_nms_top_n, INT, LOOM_DEFAULT_INT(1000), LOOM_ATTR_POSITIVE,                         \
      "proposals kept per image after nms", )                                                      \
    A(op, nms_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.7), LOOM_ATTR_FINITE,                            \
      "IoU threshold of the per-level batched_nms", )                                              \
    A(op, score_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.0), LOOM_ATTR_FINITE,                          \
      "proposals whose sigmoid(objectness) is below are dropped", )                                \
    A(op, min_size, FLOAT, LOOM_DEFAULT_FLOAT(1e-3), LOOM_ATTR_FINITE,                             \
      "proposals narrower or lower than this (after clipping) are dropped", )                      \
    BOX_DECODE_ATTRS(A, op)
#define MULTISCALE_ATTRS(A, op)                                                                    \
    A(op, output_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "[PH, PW], or [S] for S x S (Faster R-CNN's box head: 7)", )                                 \
    A(op, sampling_ratio, INT, LOOM_DEFAULT_INT(2), 0,                                             \
      "samples per bin side of roi_align (aligned=False); <= 0: adaptive", )                       \
    A(op, canonical_scale, INT, LOOM_DEFAULT_INT(224), LOOM_ATTR_POSITIVE,                         \
      "LevelMapper: a box of this sqrt(area) goes to canonical_level", )                           \
    A(op, canonical_level, INT, LOOM_DEFAULT_INT(4), 0, "LevelMapper's level of canonical_scale", )
#define DETECTIONS_ATTRS(A, op)                                                                    \
    A(op, score_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.05), LOOM_ATTR_FINITE,                         \
      "class scores (softmax) must be above this", )                                               \
    A(op, nms_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.5), LOOM_ATTR_FINITE, "IoU threshold of the per-class nms", ) \
    A(op, detections_per_img, INT, LOOM_DEFAULT_INT(100), LOOM_ATTR_POSITIVE,                      \
      "detections kept per image, by decreasing score", )                                          \
    A(op, weights, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,               \
      "(wx, wy, ww, wh) of the box coder; absent: the RoI heads' 10, 10, 5, 5", )                  \
    A(op, bbox_xform_clip, FLOAT, LOOM_DEFAULT_FLOAT(4.135166556742356), LOOM_ATTR_FINITE,         \
      "dw and dh are clamped above at this (default log(1000 / 16))", )
PK_ATTR_ENUM(rcnn_size, RCNN_SIZE_ATTRS);
PK_ATTR_ENUM(multiscale, MULTISCALE_ATTRS);
PK_ATTR_ENUM(detections, DETECTIONS_ATTRS);
PK_ATTR_ENUM(rcnn_transform, RCNN_TRANSFORM_ATTRS);
PK_ATTR_ENUM(rcnn_postprocess, RCNN_POSTPROCESS_ATTRS);
PK_ATTR_ENUM(anchor, ANCHOR_ATTRS);
PK_ATTR_ENUM(box_decode, BOX_DECODE_ATTRS);
PK_ATTR_ENUM(rpn, RPN_ATTRS);

/* ------------------------------------------------------------ box coder */

/* BoxCoder's parameters: the weights as float32 and the clamp of dw, dh. */
typedef struct det_box_coder {
    float wx, wy, ww, wh;
    float clip;
} det_box_coder;

/* The coder of an op's weights / bbox_xform_clip attributes (the first of
** them at index `first`), weights `dflt` when absent; fails naming the op
** when weights is not 4 values. */
loom_status det_box_coder_from_attrs(const char *op, const loom_attr_value *attrs, int first, const float dflt[4],
                                     det_box_coder *out);
extern const float det_rpn_weights[4];    /* 1, 1, 1, 1 */
extern const float det_roi_weights[4];    /* 10, 10, 5, 5 */

/* vision.batched_nms (dispatched) of m f32 boxes [m, 4] with scores [m] and
** categories idxs [m]; *keep (freed by the caller with tensor_free) holds
** the kept indices by decreasing score. */
loom_status det_batched_nms(loom_call *call, int64_t m, const float *boxes, const float *scores,
                            const int64_t *idxs, double iou_threshold, loom_tensor **keep);

/* One image's filtered candidates (m boxes cb [m, 4], scores cs, labels cl)
** through det_batched_nms: the first per_img kept rows are appended at row
** *total of kept ([., 5]: the box, then the score) and labels, and *total
** grows by their number. */
loom_status det_keep_after_nms(loom_call *call, int64_t m, const float *cb, const float *cs, const int64_t *cl,
                               double iou_threshold, int64_t per_img, float *kept, int64_t *labels, int64_t *total);

/* The detection outputs 0..3 of a filter op: boxes [total, 4], scores
** [total], labels [total] and offsets [n_images + 1], from kept and labels
** (det_keep_after_nms) and offsets. */
loom_status det_write_detections(loom_call *call, int64_t total, const float *kept, const int64_t *labels,
                                 const int64_t *offsets, int64_t n_images);

/* clip_boxes_to_image of one xyxy box to (h, w): torch.clamp, NaN kept. */
void det_clip_box(float *box, float h, float w);

/* One box decoded as BoxCoder.decode_single does it: code (dx, dy, dw, dh)
** relative to the xyxy box ref, into out (xyxy). */
void det_box_decode(const det_box_coder *c, const float *code, const float *ref, float *out);

/* ------------------------------------------------------------ kernels */

/* The output (h, w) of torchvision's _resize_image_and_masks for an h x w
** image: scale = min(min_size / short, max_size / long) in double, each
** side floor(side * scale). Fails naming the op and image when a side
** would become 0. */
loom_status det_resized_size(const char *op, int64_t index, int64_t h, int64_t w, int64_t min_size,
                             int64_t max_size, int64_t out[2]);

loom_status vision_rcnn_transform_cpu(loom_call *call);
loom_status vision_rcnn_resize_cpu(loom_call *call);
loom_status vision_rcnn_postprocess_boxes_cpu(loom_call *call);
loom_status vision_anchor_generator_cpu(loom_call *call);
loom_status vision_box_coder_decode_cpu(loom_call *call);
loom_status vision_rpn_proposals_cpu(loom_call *call);
loom_status vision_multiscale_roi_align_cpu(loom_call *call);
loom_status vision_rcnn_postprocess_detections_cpu(loom_call *call);

#endif /* LOOM_VISION_DETECTION_H */
