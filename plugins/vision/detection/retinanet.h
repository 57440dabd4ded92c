/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet.h - RetinaNet's parts as ops (torchvision.models.detection.
** retinanet), the `retinanet` module of vision.so:
**   retinanet_head_cpu.c         vision.retinanet_head (RetinaNetClassificationHead
**                                or RetinaNetRegressionHead, v1 or v2)
**   retinanet_postprocess_cpu.c  vision.retinanet_postprocess
**                                (RetinaNet.postprocess_detections)
** The module uses the detection module's box coder and dispatched
** batched_nms (detection.h). cpu only.
*/
#ifndef LOOM_VISION_RETINANET_H
#define LOOM_VISION_RETINANET_H

#include "detection.h"

#define VISION_RETINANET_OPS(X) X(vision_retinanet_head_schema) X(vision_retinanet_postprocess_schema)
PK_OPS_DECLARE(vision_retinanet_ops, VISION_RETINANET_OPS);

enum { RP_CLS_LOGITS = 0, RP_BBOX_REGRESSION = 1, RP_ANCHORS = 2, RP_IMAGE_SIZES = 3 };

enum { RH_CONV_WEIGHT = 0, RH_CONV_BIAS = 1, RH_NORM_WEIGHT = 2, RH_NORM_BIAS = 3, RH_OUT_WEIGHT = 4,
       RH_OUT_BIAS = 5, RH_FEATURES = 6, RH_MAX_LEVELS = 5 };

#define RETINANET_HEAD_ATTRS(A, op)                                                                \
    A(op, num_outputs, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,            \
      "K: values per anchor (num_classes for the classification head, 4 for the regression head)", ) \
    A(op, num_groups, INT, LOOM_DEFAULT_INT(32), LOOM_ATTR_POSITIVE,                               \
      "GroupNorm's groups when norm_weight is given (the v2 heads: 32)", )                         \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "GroupNorm's eps", )
PK_ATTR_ENUM(retinanet_head, RETINANET_HEAD_ATTRS);

#define RETINANET_POSTPROCESS_ATTRS(A, op)                                                         \
    A(op, num_anchors_per_level, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,   \
      "anchors of each level (h * w * anchors per location), summing to A", )                      \
    A(op, score_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.05), LOOM_ATTR_FINITE,                         \
      "sigmoid(logit) must be above this", )                                                       \
    A(op, nms_thresh, FLOAT, LOOM_DEFAULT_FLOAT(0.5), LOOM_ATTR_FINITE,                            \
      "IoU threshold of the batched_nms per class over every level", )                             \
    A(op, detections_per_img, INT, LOOM_DEFAULT_INT(300), LOOM_ATTR_POSITIVE,                      \
      "detections kept per image, by decreasing score", )                                          \
    A(op, topk_candidates, INT, LOOM_DEFAULT_INT(1000), LOOM_ATTR_POSITIVE,                        \
      "the best this many (anchor, class) scores of each level go on", )                           \
    BOX_DECODE_ATTRS(A, op)
PK_ATTR_ENUM(retinanet_postprocess, RETINANET_POSTPROCESS_ATTRS);

loom_status vision_retinanet_head_cpu(loom_call *call);
loom_status vision_retinanet_postprocess_cpu(loom_call *call);

extern const pk_module vision_retinanet_cpu;

#endif /* LOOM_VISION_RETINANET_H */
