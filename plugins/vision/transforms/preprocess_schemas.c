/* SPDX-License-Identifier: BSD-3-Clause */
/*
** preprocess_schemas.c - vision.preprocess: the inference preset of a
** torchvision weight entry (weights.transforms(), ImageClassification):
** resize the short edge to resize_size, centre-crop crop_size, scale to
** [0, 1] and normalise, as one op.
*/
#include "transforms.h"

PK_ATTR_TABLE(preprocess, PREPROCESS_ATTRS);

static const char *const modes[] = { "bilinear", "bicubic", NULL };
static const loom_attr_choices choices[] = { { PK_ATTR(preprocess, interpolation), modes } };

static const loom_arg_def inputs[] = {
    { .name = "image", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[..., C, H, W] uint8 (as decoded) or float32 in [0, 1]" },
};
static const loom_arg_def outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[..., C, crop_size, crop_size] float32, normalised" },
};

PK_SCHEMA(vision_preprocess_schema, "vision.preprocess", 1,
          "torchvision ImageClassification preset (weights.transforms()): resize, center_crop, to float, "
          "normalize, fused",
          PK_INPUTS(inputs), PK_OUTPUTS(outputs), PK_ATTRS(preprocess_attrs), PK_CHOICES(choices));
