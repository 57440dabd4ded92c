/* SPDX-License-Identifier: BSD-3-Clause */
/*
** geometry_schemas.c - the definitions of the geometry ops on images and
** masks, with torchvision.transforms.v2.functional's names and arguments:
**   vision.crop             crop_image / crop_mask (top, left, height, width)
**   vision.center_crop      center_crop_image / center_crop_mask (output_size)
**   vision.resized_crop     resized_crop_image / resized_crop_mask
**   vision.pad              pad_image / pad_mask (padding, fill, padding_mode)
**   vision.horizontal_flip  horizontal_flip_image / _mask
**   vision.vertical_flip    vertical_flip_image / _mask
** Each takes [..., H, W] of any TRANSFORMS_ANY_DTYPES and keeps the dtype.
*/
#include "transforms.h"

PK_ATTR_TABLE(crop, CROP_ATTRS);
PK_ATTR_TABLE(center_crop, CENTER_CROP_ATTRS);
PK_ATTR_TABLE(resized_crop, RESIZED_CROP_ATTRS);
PK_ATTR_TABLE(pad, PAD_ATTRS);

static const char *const interpolations[] = { "nearest", "nearest-exact", "bilinear", "bicubic", NULL };
static const char *const pad_modes[] = { "constant", "edge", "reflect", "symmetric", NULL };

static const loom_arg_def image_in[] = {
    { .name = "image", .dtypes = TRANSFORMS_ANY_DTYPES, .ndim = -1,
      .doc = "[..., H, W] (an image [..., C, H, W] or a mask), rank >= 2" },
};
static const loom_arg_def image_out[] = {
    { .name = "output", .dtypes = TRANSFORMS_ANY_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., H', W'], the dtype of image" },
};
static const loom_attr_choices resized_crop_choices[] = {
    { PK_ATTR(resized_crop, interpolation), interpolations },
};
static const loom_attr_choices pad_choices[] = {
    { PK_ATTR(pad, padding_mode), pad_modes },
};

PK_SCHEMA(vision_crop_schema, "vision.crop", 1,
          "torchvision.transforms.v2.functional.crop on images and masks: a window, zeros outside the image",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(crop_attrs));
PK_SCHEMA(vision_center_crop_schema, "vision.center_crop", 1,
          "torchvision.transforms.v2.functional.center_crop: the centred window (round half to even), zero-padded",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(center_crop_attrs));
PK_SCHEMA(vision_resized_crop_schema, "vision.resized_crop", 1,
          "torchvision.transforms.v2.functional.resized_crop: crop, then resize as vision.resize",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(resized_crop_attrs), PK_CHOICES(resized_crop_choices));
PK_SCHEMA(vision_pad_schema, "vision.pad", 1,
          "torchvision.transforms.v2.functional.pad: constant (per-channel fill), edge, reflect, symmetric",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(pad_attrs), PK_CHOICES(pad_choices));
PK_SCHEMA(vision_horizontal_flip_schema, "vision.horizontal_flip", 1,
          "torchvision.transforms.v2.functional.horizontal_flip on images and masks: image.flip(-1)",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out));
PK_SCHEMA(vision_vertical_flip_schema, "vision.vertical_flip", 1,
          "torchvision.transforms.v2.functional.vertical_flip on images and masks: image.flip(-2)",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out));
