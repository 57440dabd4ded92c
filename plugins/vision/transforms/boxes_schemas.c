/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_schemas.c - the definitions of the bounding-box ops of the
** transforms module, torchvision.transforms.v2.functional's kernels:
**   vision.convert_bounding_box_format       (old_format, new_format)
**   vision.clamp_bounding_boxes              (format, canvas_size, clamping_mode)
**   vision.sanitize_bounding_boxes           drops degenerate and outside boxes with their labels
**   vision.horizontal_flip_bounding_boxes    vision.vertical_flip_bounding_boxes
**   vision.crop_bounding_boxes               vision.center_crop_bounding_boxes
**   vision.resized_crop_bounding_boxes       vision.pad_bounding_boxes
** The ops that change the canvas give its new (H, W) as a second output.
*/
#include "transforms.h"

PK_ATTR_TABLE(convert_boxes, CONVERT_BOXES_ATTRS);
PK_ATTR_TABLE(clamp_boxes, CLAMP_BOXES_ATTRS);
PK_ATTR_TABLE(sanitize_boxes, SANITIZE_BOXES_ATTRS);
PK_ATTR_TABLE(flip_boxes, FLIP_BOXES_ATTRS);
PK_ATTR_TABLE(crop_boxes, CROP_BOXES_ATTRS);
PK_ATTR_TABLE(center_crop_boxes, CENTER_CROP_BOXES_ATTRS);
PK_ATTR_TABLE(resized_crop_boxes, RESIZED_CROP_BOXES_ATTRS);
PK_ATTR_TABLE(pad_boxes, PAD_BOXES_ATTRS);

static const char *const formats[] = { "xyxy", "xywh", "cxcywh", NULL };
static const char *const clamping[] = { "soft", "hard", "none", NULL };
static const char *const pad_modes[] = { "constant", NULL };

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
static const loom_arg_def boxes_in[] = {
    { .name = "boxes", .dtypes = F32, .ndim = -1, .doc = "[..., 4] float32" },
};
static const loom_arg_def boxes_out[] = {
    { .name = "output", .dtypes = F32, .ndim = -1, .doc = "[..., 4]" },
};
static const loom_arg_def boxes_canvas_out[] = {
    { .name = "output", .dtypes = F32, .ndim = -1, .doc = "[..., 4]" },
    { .name = "canvas_size", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[2]: the new (H, W)" },
};
static const loom_arg_def sanitize_in[] = {
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[N, 4] float32" },
    { .name = "labels", .dtypes = 0, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "[N, ...] of any dtype: the rows of the kept boxes are kept" },
};
static const loom_arg_def sanitize_out[] = {
    { .name = "output", .dtypes = F32, .ndim = 2, .doc = "[K, 4]: the valid boxes, in order" },
    { .name = "labels", .dtypes = 0, .ndim = -1, .doc = "[K, ...]: their labels ([0] without labels)" },
    { .name = "valid", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL), .ndim = 1, .doc = "[N]: which boxes were kept" },
};

static const loom_attr_choices convert_choices[] = {
    { PK_ATTR(convert_boxes, old_format), formats }, { PK_ATTR(convert_boxes, new_format), formats } };
static const loom_attr_choices clamp_choices[] = {
    { PK_ATTR(clamp_boxes, format), formats }, { PK_ATTR(clamp_boxes, clamping_mode), clamping } };
static const loom_attr_choices sanitize_choices[] = { { PK_ATTR(sanitize_boxes, format), formats } };
static const loom_attr_choices flip_choices[] = { { PK_ATTR(flip_boxes, format), formats } };
static const loom_attr_choices crop_choices[] = {
    { PK_ATTR(crop_boxes, format), formats }, { PK_ATTR(crop_boxes, clamping_mode), clamping } };
static const loom_attr_choices center_crop_choices[] = {
    { PK_ATTR(center_crop_boxes, format), formats }, { PK_ATTR(center_crop_boxes, clamping_mode), clamping } };
static const loom_attr_choices resized_crop_choices[] = {
    { PK_ATTR(resized_crop_boxes, format), formats }, { PK_ATTR(resized_crop_boxes, clamping_mode), clamping } };
static const loom_attr_choices pad_choices[] = {
    { PK_ATTR(pad_boxes, format), formats }, { PK_ATTR(pad_boxes, padding_mode), pad_modes },
    { PK_ATTR(pad_boxes, clamping_mode), clamping } };

PK_SCHEMA(vision_convert_bounding_box_format_schema, "vision.convert_bounding_box_format", 1,
          "torchvision.transforms.v2.functional.convert_bounding_box_format between xyxy, xywh and cxcywh",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(convert_boxes_attrs), PK_CHOICES(convert_choices));
PK_SCHEMA(vision_clamp_bounding_boxes_schema, "vision.clamp_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.clamp_bounding_boxes: corners into [0, W] x [0, H]",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(clamp_boxes_attrs), PK_CHOICES(clamp_choices));
PK_SCHEMA(vision_sanitize_bounding_boxes_schema, "vision.sanitize_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.sanitize_bounding_boxes: drop small, empty or outside boxes "
          "and their labels",
          PK_INPUTS(sanitize_in), PK_OUTPUTS(sanitize_out), PK_ATTRS(sanitize_boxes_attrs),
          PK_CHOICES(sanitize_choices));
PK_SCHEMA(vision_horizontal_flip_bounding_boxes_schema, "vision.horizontal_flip_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.horizontal_flip on boxes: x -> W - x",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(flip_boxes_attrs), PK_CHOICES(flip_choices));
PK_SCHEMA(vision_vertical_flip_bounding_boxes_schema, "vision.vertical_flip_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.vertical_flip on boxes: y -> H - y",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_out), PK_ATTRS(flip_boxes_attrs), PK_CHOICES(flip_choices));
PK_SCHEMA(vision_crop_bounding_boxes_schema, "vision.crop_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.crop on boxes: shift by (left, top), clamp to the crop",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_canvas_out), PK_ATTRS(crop_boxes_attrs), PK_CHOICES(crop_choices));
PK_SCHEMA(vision_center_crop_bounding_boxes_schema, "vision.center_crop_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.center_crop on boxes",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_canvas_out), PK_ATTRS(center_crop_boxes_attrs),
          PK_CHOICES(center_crop_choices));
PK_SCHEMA(vision_resized_crop_bounding_boxes_schema, "vision.resized_crop_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.resized_crop on boxes: crop, then resize",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_canvas_out), PK_ATTRS(resized_crop_boxes_attrs),
          PK_CHOICES(resized_crop_choices));
PK_SCHEMA(vision_pad_bounding_boxes_schema, "vision.pad_bounding_boxes", 1,
          "torchvision.transforms.v2.functional.pad on boxes: shift by (left, top), clamp to the new canvas",
          PK_INPUTS(boxes_in), PK_OUTPUTS(boxes_canvas_out), PK_ATTRS(pad_boxes_attrs), PK_CHOICES(pad_choices));
