/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transforms_schemas.c - the definitions of the transforms module's ops.
** Names and attributes follow torchvision.transforms.v2.functional:
**   vision.resize                 resize_image(image, size, interpolation, max_size, antialias)
**   vision.resize_mask            resize_mask(mask, size, interpolation, max_size)
**   vision.resize_bounding_boxes  resize_bounding_boxes(boxes, canvas_size, size, max_size, format)
*/
#include "transforms.h"

PK_ATTR_TABLE(resize, RESIZE_ATTRS);
PK_ATTR_TABLE(resize_mask, RESIZE_MASK_ATTRS);
PK_ATTR_TABLE(resize_boxes, RESIZE_BOXES_ATTRS);

static const char *const interpolations[] = { "nearest", "nearest-exact", "bilinear", "bicubic", NULL };
static const char *const box_formats[] = { "xyxy", "xywh", "cxcywh", NULL };

#define IMAGE_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
/* masks move by nearest neighbour only: any element of 1, 4 or 8 bytes */
#define MASK_DTYPES                                                                                \
    (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL) | LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | \
     LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))

/* ------------------------------------------------------------------ resize */

static const loom_arg_def resize_inputs[] = {
    { .name = "image", .dtypes = IMAGE_DTYPES, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32, rank >= 3" },
};
static const loom_arg_def resize_outputs[] = {
    { .name = "output", .dtypes = IMAGE_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., C, H', W'], the dtype of image" },
};
static const loom_attr_choices resize_choices[] = {
    { PK_ATTR(resize, interpolation), interpolations },
};

PK_SCHEMA(vision_resize_schema, "vision.resize", 1,
          "torchvision.transforms.v2.functional.resize on images: nearest, nearest-exact, bilinear, bicubic, "
          "antialias, max_size (uint8 in PyTorch's fixed point)",
          PK_INPUTS(resize_inputs), PK_OUTPUTS(resize_outputs), PK_ATTRS(resize_attrs), PK_CHOICES(resize_choices));

/* ------------------------------------------------------------- resize_mask */

static const loom_arg_def mask_inputs[] = {
    { .name = "mask", .dtypes = MASK_DTYPES, .ndim = -1, .doc = "[..., H, W], rank >= 2" },
};
static const loom_arg_def mask_outputs[] = {
    { .name = "output", .dtypes = MASK_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., H', W'], the dtype of mask" },
};
static const loom_attr_choices mask_choices[] = {
    { PK_ATTR(resize_mask, interpolation), interpolations },
};

PK_SCHEMA(vision_resize_mask_schema, "vision.resize_mask", 1,
          "torchvision.transforms.v2.functional.resize on masks: nearest or nearest-exact",
          PK_INPUTS(mask_inputs), PK_OUTPUTS(mask_outputs), PK_ATTRS(resize_mask_attrs), PK_CHOICES(mask_choices));

/* --------------------------------------------------- resize_bounding_boxes */

static const loom_arg_def boxes_inputs[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4] float32" },
};
static const loom_arg_def boxes_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4], scaled" },
    { .name = "canvas_size", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[2]: the new (H, W)" },
};
static const loom_attr_choices boxes_choices[] = {
    { PK_ATTR(resize_boxes, format), box_formats },
};

PK_SCHEMA(vision_resize_bounding_boxes_schema, "vision.resize_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.resize on bounding boxes: x by W'/W, y by H'/H",
          PK_INPUTS(boxes_inputs), PK_OUTPUTS(boxes_outputs), PK_ATTRS(resize_boxes_attrs),
          PK_CHOICES(boxes_choices));

PK_OPS_DEFINE(vision_transforms_ops, VISION_TRANSFORMS_OPS);
