/* SPDX-License-Identifier: BSD-3-Clause */
/*
** affine_schemas.c - vision.affine and vision.rotate on images, with
** torchvision.transforms.v2.functional's arguments (affine_image,
** rotate_image).
*/
#include "transforms.h"

PK_ATTR_TABLE(affine, AFFINE_ATTRS);
PK_ATTR_TABLE(rotate, ROTATE_ATTRS);
PK_ATTR_TABLE(perspective, PERSPECTIVE_ATTRS);
PK_ATTR_TABLE(elastic, ELASTIC_ATTRS);
PK_ATTR_TABLE(affine_boxes, AFFINE_BOXES_ATTRS);
PK_ATTR_TABLE(rotate_boxes, ROTATE_BOXES_ATTRS);
PK_ATTR_TABLE(affine_mask, AFFINE_MASK_ATTRS);
PK_ATTR_TABLE(rotate_mask, ROTATE_MASK_ATTRS);
PK_ATTR_TABLE(perspective_mask, PERSPECTIVE_MASK_ATTRS);
PK_ATTR_TABLE(elastic_mask, ELASTIC_MASK_ATTRS);
PK_ATTR_TABLE(perspective_boxes, PERSPECTIVE_BOXES_ATTRS);
PK_ATTR_TABLE(elastic_boxes, ELASTIC_BOXES_ATTRS);

static const char *const modes[] = { "nearest", "bilinear", NULL };
static const loom_attr_choices affine_choices[] = { { PK_ATTR(affine, interpolation), modes } };
static const loom_attr_choices rotate_choices[] = { { PK_ATTR(rotate, interpolation), modes } };
static const loom_attr_choices perspective_choices[] = { { PK_ATTR(perspective, interpolation), modes } };
static const loom_attr_choices elastic_choices[] = { { PK_ATTR(elastic, interpolation), modes } };

#define U8_F32 (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
static const loom_arg_def image_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32" },
};
static const loom_arg_def image_out[] = {
    { .name = "output", .dtypes = U8_F32, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., C, H', W'] (H' x W' = H x W unless rotate expands)" },
};

PK_SCHEMA(vision_affine_schema, "vision.affine", 1,
          "torchvision.transforms.v2.functional.affine on images: rotation, translation, scale, shear about a centre",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(affine_attrs), PK_CHOICES(affine_choices));
PK_SCHEMA(vision_rotate_schema, "vision.rotate", 1,
          "torchvision.transforms.v2.functional.rotate on images, optionally expanded to hold the whole image",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(rotate_attrs), PK_CHOICES(rotate_choices));

static const loom_arg_def elastic_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32" },
    { .name = "displacement", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[1, H, W, 2]: offsets added to the identity grid, in its [-1, 1] units" },
};

PK_SCHEMA(vision_perspective_schema, "vision.perspective", 1,
          "torchvision.transforms.v2.functional.perspective on images: four corners to four corners",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(perspective_attrs), PK_CHOICES(perspective_choices));
PK_SCHEMA(vision_elastic_schema, "vision.elastic", 1,
          "torchvision.transforms.v2.functional.elastic on images: resample at identity grid + displacement",
          PK_INPUTS(elastic_in), PK_OUTPUTS(image_out), PK_ATTRS(elastic_attrs), PK_CHOICES(elastic_choices));

static const char *const formats[] = { "xyxy", "xywh", "cxcywh", NULL };
static const char *const clamping[] = { "soft", "hard", "none", NULL };
static const loom_attr_choices affine_boxes_choices[] = {
    { PK_ATTR(affine_boxes, format), formats }, { PK_ATTR(affine_boxes, clamping_mode), clamping } };
static const loom_attr_choices rotate_boxes_choices[] = {
    { PK_ATTR(rotate_boxes, format), formats }, { PK_ATTR(rotate_boxes, clamping_mode), clamping } };
static const loom_arg_def boxes_in[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4] float32" },
};
static const loom_arg_def boxes_out[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4]: the enclosing boxes" },
};
static const loom_arg_def boxes_canvas_out[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4]: the enclosing boxes" },
    { .name = "canvas_size", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[2]: the new (H, W)" },
};

PK_SCHEMA(vision_affine_bounding_boxes_schema, "vision.affine_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.affine on boxes: the boxes enclosing the moved corners",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(affine_boxes_attrs), PK_CHOICES(affine_boxes_choices));
PK_SCHEMA(vision_rotate_bounding_boxes_schema, "vision.rotate_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.rotate on boxes, with the canvas of expand",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_canvas_out), PK_ATTRS(rotate_boxes_attrs),
          PK_CHOICES(rotate_boxes_choices));

/* ------------------------------------------------------------- masks */

static const loom_arg_def mask_in[] = {
    { .name = "mask", .dtypes = TRANSFORMS_ANY_DTYPES, .ndim = -1, .doc = "[..., H, W] labels (any dtype)" },
};
static const loom_arg_def mask_displacement_in[] = {
    { .name = "mask", .dtypes = TRANSFORMS_ANY_DTYPES, .ndim = -1, .doc = "[..., H, W] labels (any dtype)" },
    { .name = "displacement", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[1, H, W, 2]: as vision.elastic" },
};
static const loom_arg_def mask_out[] = {
    { .name = "output", .dtypes = TRANSFORMS_ANY_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., H', W']: the labels at the nearest source pixel, or the fill" },
};

PK_SCHEMA(vision_affine_mask_schema, "vision.affine_mask", 1,
          "torchvision.transforms.v2.functional.affine on masks: vision.affine's grid, nearest, one fill",
          PK_INPUTS(mask_in), PK_OUTPUTS(mask_out), PK_ATTRS(affine_mask_attrs));
PK_SCHEMA(vision_rotate_mask_schema, "vision.rotate_mask", 1,
          "torchvision.transforms.v2.functional.rotate on masks: vision.rotate's grid, nearest, one fill",
          PK_INPUTS(mask_in), PK_OUTPUTS(mask_out), PK_ATTRS(rotate_mask_attrs));
PK_SCHEMA(vision_perspective_mask_schema, "vision.perspective_mask", 1,
          "torchvision.transforms.v2.functional.perspective on masks: vision.perspective's grid, nearest, one fill",
          PK_INPUTS(mask_in), PK_OUTPUTS(mask_out), PK_ATTRS(perspective_mask_attrs));
PK_SCHEMA(vision_elastic_mask_schema, "vision.elastic_mask", 1,
          "torchvision.transforms.v2.functional.elastic on masks: vision.elastic's grid, nearest, one fill",
          PK_INPUTS(mask_displacement_in), PK_OUTPUTS(mask_out), PK_ATTRS(elastic_mask_attrs));

/* ------------------------------------------- boxes: perspective, elastic */

static const loom_attr_choices perspective_boxes_choices[] = {
    { PK_ATTR(perspective_boxes, format), formats }, { PK_ATTR(perspective_boxes, clamping_mode), clamping } };
static const loom_attr_choices elastic_boxes_choices[] = {
    { PK_ATTR(elastic_boxes, format), formats }, { PK_ATTR(elastic_boxes, clamping_mode), clamping } };
static const loom_arg_def boxes_displacement_in[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., 4] float32" },
    { .name = "displacement", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[1, H, W, 2] of the canvas: as vision.elastic" },
};

PK_SCHEMA(vision_perspective_bounding_boxes_schema, "vision.perspective_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.perspective on boxes: the boxes enclosing the moved corners",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(perspective_boxes_attrs),
          PK_CHOICES(perspective_boxes_choices));
PK_SCHEMA(vision_elastic_bounding_boxes_schema, "vision.elastic_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.elastic on boxes: corners through the approximate inverse grid",
          PK_INPUTS(boxes_displacement_in), PK_OUTPUTS(boxes_out), PK_ATTRS(elastic_boxes_attrs),
          PK_CHOICES(elastic_boxes_choices));
