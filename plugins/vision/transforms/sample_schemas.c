/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sample_schemas.c - vision.transform_sample: a torchvision.transforms.v2
** pipeline (JSON) on an image with its boxes, masks and labels.
*/
#include "sample.h"

PK_ATTR_TABLE(transform_sample, TRANSFORM_SAMPLE_ATTRS);

static const char *const formats[] = { "xyxy", "xywh", "cxcywh", NULL };
static const loom_attr_choices sample_choices[] = { { PK_ATTR(transform_sample, format), formats } };

#define U8_F32 (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
static const loom_arg_def sample_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32" },
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[N, 4] float32 in 'format', on the image's canvas" },
    { .name = "masks", .dtypes = TRANSFORMS_ANY_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "[..., H, W] labels of the image's pixels (any dtype)" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "[N, ...]: one row per box, kept with it; with MixUp / CutMix, [N] classes of the batch's images" },
    { .name = "draws", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
      .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[K]: torchvision's random draws in its order (randint, rand, uniform_, normal_, randperm, Beta); "
             "absent: the seed" },
};
static const loom_arg_def sample_out[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "the transformed image (ToDtype may change its dtype)" },
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "[M, 4] ([0, 4] without boxes)" },
    { .name = "masks", .dtypes = TRANSFORMS_ANY_DTYPES, .ndim = -1,
      .doc = "[..., H', W'] moved with the image ([0, H', W'] uint8 without masks)" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[M, ...] int64 ([0] without labels); after MixUp / CutMix [N, K] float32" },
};

PK_SCHEMA(vision_transform_sample_schema, "vision.transform_sample", 1,
          "torchvision.transforms.v2.Compose of a JSON pipeline on an image with its boxes, masks and labels, "
          "moved together; seeded, or fed torchvision's draws",
          PK_INPUTS(sample_in), PK_OUTPUTS(sample_out), PK_ATTRS(transform_sample_attrs), PK_CHOICES(sample_choices));
