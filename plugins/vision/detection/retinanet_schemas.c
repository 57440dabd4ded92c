/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_schemas.c - the definitions of the retinanet module's ops
** (retinanet.h) and the module of vision.so that registers their cpu kernels.
*/
#include "retinanet.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

PK_ATTR_TABLE(retinanet_postprocess, RETINANET_POSTPROCESS_ATTRS);

static const loom_arg_def postprocess_in[] = {
    { .name = "cls_logits", .dtypes = F32, .ndim = 3,
      .doc = "[N, A, K] the classification head's logits, levels concatenated (torchvision's head output)" },
    { .name = "bbox_regression", .dtypes = F32, .ndim = 3, .doc = "[N, A, 4] the regression head's box codes" },
    { .name = "anchors", .dtypes = F32, .ndim = 2,
      .doc = "[A, 4] xyxy anchors of one image (every image of a batch has the same), level after level" },
    { .name = "image_sizes", .dtypes = I64, .ndim = 2, .doc = "[N, 2] (h, w) the boxes are clipped to" },
};
static const loom_arg_def postprocess_out[] = {
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[D, 4] detections of every image, image after image" },
    { .name = "scores", .dtypes = F32, .ndim = 1, .doc = "[D] their sigmoid scores, decreasing per image" },
    { .name = "labels", .dtypes = I64, .ndim = 1, .doc = "[D] their classes (0..K-1)" },
    { .name = "offsets", .dtypes = I64, .ndim = 1, .doc = "[N+1] image n's rows are offsets[n]..offsets[n+1]" },
};

PK_SCHEMA(vision_retinanet_postprocess_schema, "vision.retinanet_postprocess", 1,
          "torchvision RetinaNet.postprocess_detections: per level sigmoid, score threshold, top-k candidates, "
          "decode, clip; then nms per class over the levels and detections_per_img",
          PK_INPUTS(postprocess_in), PK_OUTPUTS(postprocess_out), PK_ATTRS(retinanet_postprocess_attrs));

PK_OPS_DEFINE(vision_retinanet_ops, VISION_RETINANET_OPS);

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_retinanet_postprocess_schema, "cpu:sigmoid-topk-decode-nms", 0,
                  vision_retinanet_postprocess_cpu),
};

const pk_module vision_retinanet_cpu = PK_MODULE("retinanet", vision_retinanet_ops, cpu_kernels, NULL);
