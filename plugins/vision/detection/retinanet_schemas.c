/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_schemas.c - the definitions of the retinanet module's ops
** (retinanet.h) and the module of vision.so that registers their cpu kernels.
*/
#include "retinanet.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

PK_ATTR_TABLE(retinanet_head, RETINANET_HEAD_ATTRS);
PK_ATTR_TABLE(retinanet_postprocess, RETINANET_POSTPROCESS_ATTRS);

static const loom_arg_def head_in[] = {
    { .name = "conv_weight", .dtypes = F32, .ndim = 5, .doc = "[4, C, C, 3, 3] the four 3x3 convs (conv[i][0].weight)" },
    { .name = "conv_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[4, C] their biases (v1; the v2 convs have none)" },
    { .name = "norm_weight", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[4, C] GroupNorm weights after each conv (v2: given; v1: absent, conv + relu)" },
    { .name = "norm_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, .doc = "[4, C] GroupNorm biases" },
    { .name = "out_weight", .dtypes = F32, .ndim = 4,
      .doc = "[A K, C, 3, 3] cls_logits or bbox_reg, A anchors per location" },
    { .name = "out_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[A K]" },
    { .name = "features0", .dtypes = F32, .ndim = 4, .doc = "[N, C, H0, W0] the first FPN level" },
    { .name = "features1", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 4, .doc = "[N, C, H1, W1]" },
    { .name = "features2", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 4, .doc = "[N, C, H2, W2]" },
    { .name = "features3", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 4, .doc = "[N, C, H3, W3]" },
    { .name = "features4", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[N, C, H4, W4] (the levels given must come first, without gaps)" },
};
static const loom_arg_def head_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 3,
      .doc = "[N, sum of H W A, K] per level [N, A K, H, W] as [N, H, W, A, K], levels concatenated" },
};

PK_SCHEMA(vision_retinanet_head_schema, "vision.retinanet_head", 1,
          "torchvision RetinaNetClassificationHead / RetinaNetRegressionHead: 4 x (conv3x3 + relu) (v1) or "
          "4 x (conv3x3 + GroupNorm + relu) (v2), then the output conv, reshaped and concatenated over levels",
          PK_INPUTS(head_in), PK_OUTPUTS(head_out), PK_ATTRS(retinanet_head_attrs));

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
    PK_KERNEL_CPU(vision_retinanet_head_schema, "cpu:dispatched-conv-gn", F32, vision_retinanet_head_cpu),
    PK_KERNEL_CPU(vision_retinanet_postprocess_schema, "cpu:sigmoid-topk-decode-nms", 0,
                  vision_retinanet_postprocess_cpu),
};

const pk_module vision_retinanet_cpu = PK_MODULE("retinanet", vision_retinanet_ops, cpu_kernels, NULL);
