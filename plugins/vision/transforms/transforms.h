/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transforms.h - what the files of the vision `transforms` module share:
** the kernels of torchvision.transforms.v2.functional, on images
** ([..., C, H, W], uint8 or float32, any leading dims), bounding boxes
** ([..., 4] float32 with their canvas size) and masks ([..., H, W]).
**
**   resize_*.c      vision.resize, resize_mask, resize_bounding_boxes: the
**                   output size, PyTorch's weight tables, the row passes
**   geometry_*.c    crop, center_crop, resized_crop, pad, the flips (one
**                   window copy for images and masks of any dtype)
**   boxes_*.c       the *_bounding_boxes ops, convert, clamp, sanitize
**   colour_*.c      the colour ops, normalize, to_dtype, rgb_to_grayscale
**   affine_*.c      affine, rotate, perspective, elastic (grid_sample) on
**                   images and masks, and their box kernels
**   preprocess_*.c  vision.preprocess, the ImageClassification preset
**
** The module is cpu only: its schemas go into vision.so alone. The size
** rules (resize_size.c) are shared, so an image and its boxes and masks get
** the same output size and the same messages. Everything here has hidden
** visibility.
*/
#ifndef LOOM_VISION_TRANSFORMS_H
#define LOOM_VISION_TRANSFORMS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

/* ----------------------------------------------------- schemas, attributes */

/* The augmentations (augment.h) */
#define VISION_AUGMENT_OPS(X)                                                                      \
    X(vision_augmix_schema) X(vision_rand_augment_schema) X(vision_trivial_augment_wide_schema)     \
    X(vision_auto_augment_schema) X(vision_random_erasing_schema) X(vision_mixup_schema)            \
    X(vision_cutmix_schema) X(vision_transform_sample_schema)
#define VISION_TRANSFORMS_OPS(X)                                                                   \
    X(vision_resize_schema) X(vision_resize_mask_schema) X(vision_resize_bounding_boxes_schema)     \
    X(vision_crop_schema) X(vision_center_crop_schema) X(vision_resized_crop_schema)               \
    X(vision_pad_schema) X(vision_horizontal_flip_schema) X(vision_vertical_flip_schema)           \
    X(vision_convert_bounding_box_format_schema) X(vision_clamp_bounding_boxes_schema)             \
    X(vision_sanitize_bounding_boxes_schema) X(vision_horizontal_flip_bounding_boxes_schema)       \
    X(vision_vertical_flip_bounding_boxes_schema) X(vision_crop_bounding_boxes_schema)             \
    X(vision_center_crop_bounding_boxes_schema) X(vision_resized_crop_bounding_boxes_schema)       \
    X(vision_pad_bounding_boxes_schema)                                                            \
    X(vision_adjust_brightness_schema) X(vision_adjust_contrast_schema)                            \
    X(vision_adjust_saturation_schema) X(vision_adjust_hue_schema) X(vision_adjust_gamma_schema)   \
    X(vision_autocontrast_schema) X(vision_equalize_schema) X(vision_posterize_schema)             \
    X(vision_solarize_schema) X(vision_invert_schema) X(vision_gaussian_blur_schema)               \
    X(vision_normalize_schema) X(vision_to_dtype_schema) X(vision_rgb_to_grayscale_schema)         \
    X(vision_preprocess_schema) X(vision_affine_schema) X(vision_rotate_schema)                    \
    X(vision_perspective_schema) X(vision_elastic_schema)                                          \
    X(vision_affine_bounding_boxes_schema) X(vision_rotate_bounding_boxes_schema)                  \
    X(vision_affine_mask_schema) X(vision_rotate_mask_schema) X(vision_perspective_mask_schema)    \
    X(vision_elastic_mask_schema) X(vision_perspective_bounding_boxes_schema)                      \
    X(vision_elastic_bounding_boxes_schema) X(vision_adjust_sharpness_schema) VISION_AUGMENT_OPS(X)
PK_OPS_DECLARE(vision_transforms_ops, VISION_TRANSFORMS_OPS);

/* The output-size attributes every resize op shares (torchvision's
** _compute_resized_output_size): size = [s] (short edge), [h, w], or absent
** with max_size (the long edge). */
#define RESIZE_SIZE_ATTRS(A, op)                                                                   \
    A(op, size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                                       \
      "[s]: the short edge becomes s (the long one int(s*long/short)); [h, w]: taken literally; "  \
      "absent: max_size gives the long edge", )                                                    \
    A(op, max_size, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                                    \
      "cap of the long edge with size [s] (must be > s), or the long edge when size is absent", )
#define RESIZE_ATTRS(A, op)                                                                        \
    RESIZE_SIZE_ATTRS(A, op)                                                                       \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("bilinear"), 0,                               \
      "nearest, nearest-exact, bilinear or bicubic", )                                             \
    A(op, antialias, BOOL, LOOM_DEFAULT_BOOL(1), 0,                                                \
      "low-pass filter when downscaling (bilinear and bicubic only, as torchvision)", )
#define RESIZE_MASK_ATTRS(A, op)                                                                   \
    RESIZE_SIZE_ATTRS(A, op)                                                                       \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("nearest"), 0,                                \
      "nearest or nearest-exact; bilinear and bicubic mean nearest, as torchvision", )
#define RESIZE_BOXES_ATTRS(A, op)                                                                  \
    A(op, canvas_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "(H, W) of the image the boxes lie on", )                                                    \
    RESIZE_SIZE_ATTRS(A, op)                                                                       \
    A(op, format, STRING, LOOM_DEFAULT_STRING("xyxy"), 0,                                          \
      "xyxy, xywh or cxcywh (every one scales the same way)", )
/* Geometry on images and masks (geometry_cpu.c): any element dtype of
** TRANSFORMS_ANY_DTYPES, [..., H, W]; the channel of a plane (for a
** per-channel pad fill) is dim -3. */
#define CROP_BOX_ATTRS(A, op)                                                                      \
    A(op, top, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "first row; < 0 or past the end: zeros", ) \
    A(op, left, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "first column; outside: zeros", )       \
    A(op, height, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "rows of the crop", ) \
    A(op, width, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "columns of the crop", )
#define CROP_ATTRS(A, op) CROP_BOX_ATTRS(A, op)
#define CENTER_CROP_ATTRS(A, op)                                                                   \
    A(op, output_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "[s] or [h, w]; larger than the image: zero-padded around it", )
#define RESIZED_CROP_ATTRS(A, op)                                                                  \
    CROP_BOX_ATTRS(A, op)                                                                          \
    A(op, size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,                  \
      "the crop is resized to [h, w] (or its short edge to [s])", )                                \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("bilinear"), 0,                               \
      "nearest, nearest-exact, bilinear or bicubic (bilinear and bicubic: uint8, float32)", )      \
    A(op, antialias, BOOL, LOOM_DEFAULT_BOOL(1), 0, "as vision.resize", )
#define PAD_ATTRS(A, op)                                                                           \
    A(op, padding, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,                 \
      "[all], [left/right, top/bottom] or [left, top, right, bottom]", )                           \
    A(op, fill, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                       \
      "constant mode: one value or one per channel (default 0), converted to the dtype", )        \
    A(op, padding_mode, STRING, LOOM_DEFAULT_STRING("constant"), 0,                                \
      "constant, edge, reflect (the edge not repeated) or symmetric (repeated)", )
PK_ATTR_ENUM(crop, CROP_ATTRS);
PK_ATTR_ENUM(center_crop, CENTER_CROP_ATTRS);
PK_ATTR_ENUM(resized_crop, RESIZED_CROP_ATTRS);
PK_ATTR_ENUM(pad, PAD_ATTRS);

/* Bounding boxes (boxes_cpu.c): float32 [..., 4] in format xyxy, xywh or
** cxcywh, with the (H, W) canvas they lie on. */
#define BOX_FORMAT_ATTR(A, op, name, doc)                                                          \
    A(op, name, STRING, LOOM_DEFAULT_STRING("xyxy"), 0, doc, )
#define BOX_CANVAS_ATTR(A, op)                                                                     \
    A(op, canvas_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "(H, W) of the image", )
#define BOX_CLAMP_ATTR(A, op)                                                                      \
    A(op, clamping_mode, STRING, LOOM_DEFAULT_STRING("soft"), 0,                                   \
      "soft or hard (the same for these boxes): clamp to the canvas; none: do not", )
#define CONVERT_BOXES_ATTRS(A, op)                                                                 \
    BOX_FORMAT_ATTR(A, op, old_format, "format of boxes")                                          \
    A(op, new_format, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "format of the output", )
#define CLAMP_BOXES_ATTRS(A, op)                                                                   \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op) BOX_CLAMP_ATTR(A, op)
#define SANITIZE_BOXES_ATTRS(A, op)                                                                \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    A(op, min_size, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "boxes narrower or lower are dropped", ) \
    A(op, min_area, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "boxes of a smaller area are dropped", )
#define FLIP_BOXES_ATTRS(A, op) BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)
#define CROP_BOXES_ATTRS(A, op)                                                                    \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") CROP_BOX_ATTRS(A, op) BOX_CLAMP_ATTR(A, op)
#define CENTER_CROP_BOXES_ATTRS(A, op)                                                             \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    CENTER_CROP_ATTRS(A, op) BOX_CLAMP_ATTR(A, op)
#define RESIZED_CROP_BOXES_ATTRS(A, op)                                                            \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") CROP_BOX_ATTRS(A, op)                   \
    A(op, size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "[h, w] or [s], as vision.resize", ) \
    BOX_CLAMP_ATTR(A, op)
#define PAD_BOXES_ATTRS(A, op)                                                                     \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    A(op, padding, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,                 \
      "[all], [left/right, top/bottom] or [left, top, right, bottom]", )                           \
    A(op, padding_mode, STRING, LOOM_DEFAULT_STRING("constant"), 0, "constant only (torchvision's rule for boxes)", ) \
    BOX_CLAMP_ATTR(A, op)
PK_ATTR_ENUM(convert_boxes, CONVERT_BOXES_ATTRS);
PK_ATTR_ENUM(clamp_boxes, CLAMP_BOXES_ATTRS);
PK_ATTR_ENUM(sanitize_boxes, SANITIZE_BOXES_ATTRS);
PK_ATTR_ENUM(flip_boxes, FLIP_BOXES_ATTRS);
PK_ATTR_ENUM(crop_boxes, CROP_BOXES_ATTRS);
PK_ATTR_ENUM(center_crop_boxes, CENTER_CROP_BOXES_ATTRS);
PK_ATTR_ENUM(resized_crop_boxes, RESIZED_CROP_BOXES_ATTRS);
PK_ATTR_ENUM(pad_boxes, PAD_BOXES_ATTRS);

/* Colour on images (colour_cpu.c): uint8 or float32 [..., C, H, W]. */
#define FACTOR_ATTR(A, op, name, doc)                                                              \
    A(op, name, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, doc, )
#define BRIGHTNESS_ATTRS(A, op) FACTOR_ATTR(A, op, brightness_factor, "0: black, 1: the image")
#define SHARPNESS_ATTRS(A, op) FACTOR_ATTR(A, op, sharpness_factor, "0: the smoothed image, 1: the image, 2: sharper")
#define CONTRAST_ATTRS(A, op) FACTOR_ATTR(A, op, contrast_factor, "0: the mean grey, 1: the image")
#define SATURATION_ATTRS(A, op) FACTOR_ATTR(A, op, saturation_factor, "0: grey, 1: the image")
#define HUE_ATTRS(A, op)                                                                           \
    A(op, hue_factor, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,             \
      "shift of the hue channel, in [-0.5, 0.5]", )
#define GAMMA_ATTRS(A, op)                                                                         \
    FACTOR_ATTR(A, op, gamma, "exponent on the [0, 1] scale")                                      \
    A(op, gain, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "multiplier after the power", )
#define POSTERIZE_ATTRS(A, op)                                                                     \
    A(op, bits, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "bits kept, 0..8", )
#define SOLARIZE_ATTRS(A, op)                                                                      \
    A(op, threshold, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,              \
      "pixels >= threshold are inverted (at most 255, or 1.0 for float32)", )
#define BLUR_ATTRS(A, op)                                                                          \
    A(op, kernel_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "[k] or [kx, ky], odd", )                                                                    \
    A(op, sigma, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,                 \
      "[s] or [sx, sy]; default 0.3 * ((k - 1) * 0.5 - 1) + 0.8 per side (k * 0.15 + 0.35)", )
#define NORMALIZE_ATTRS(A, op)                                                                     \
    A(op, mean, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "one per channel (or one)", ) \
    A(op, std, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "one per channel (or one), != 0", )
#define TO_DTYPE_ATTRS(A, op)                                                                      \
    A(op, dtype, STRING, LOOM_DEFAULT_STRING("float32"), 0, "float32 or uint8", )                  \
    A(op, scale, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                    \
      "true: uint8 0..255 <-> float32 0..1 (x / 255 as x * float(1/255); x * 255.999 truncated)", )
#define GRAYSCALE_ATTRS(A, op)                                                                     \
    A(op, num_output_channels, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE, "1 or 3", )
PK_ATTR_ENUM(brightness, BRIGHTNESS_ATTRS);
PK_ATTR_ENUM(sharpness, SHARPNESS_ATTRS);
PK_ATTR_ENUM(contrast, CONTRAST_ATTRS);
PK_ATTR_ENUM(saturation, SATURATION_ATTRS);
PK_ATTR_ENUM(hue, HUE_ATTRS);
PK_ATTR_ENUM(gamma, GAMMA_ATTRS);
PK_ATTR_ENUM(posterize, POSTERIZE_ATTRS);
PK_ATTR_ENUM(solarize, SOLARIZE_ATTRS);
PK_ATTR_ENUM(blur, BLUR_ATTRS);
PK_ATTR_ENUM(normalize, NORMALIZE_ATTRS);
PK_ATTR_ENUM(to_dtype, TO_DTYPE_ATTRS);
PK_ATTR_ENUM(grayscale, GRAYSCALE_ATTRS);

/* vision.preprocess (preprocess_cpu.c): a weight entry's ImageClassification
** preset. Defaults: ImageNet mean and std, bilinear, antialias. */
#define PREPROCESS_ATTRS(A, op)                                                                    \
    A(op, resize_size, INT, LOOM_DEFAULT_INT(256), LOOM_ATTR_POSITIVE, "the short edge after the resize", ) \
    A(op, crop_size, INT, LOOM_DEFAULT_INT(224), LOOM_ATTR_POSITIVE, "side of the centre crop", ) \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("bilinear"), 0, "bilinear or bicubic", )     \
    A(op, mean, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "per channel; default 0.485, 0.456, 0.406", ) \
    A(op, std, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "per channel; default 0.229, 0.224, 0.225", ) \
    A(op, antialias, BOOL, LOOM_DEFAULT_BOOL(1), 0, "as vision.resize", )
PK_ATTR_ENUM(preprocess, PREPROCESS_ATTRS);

/* vision.affine and vision.rotate (affine_cpu.c): torchvision's inverse
** affine matrix, an affine grid and grid_sample (zeros padding,
** align_corners false), with an optional fill through a mask channel. */
#define GRID_TAIL_ATTRS(A, op)                                                                     \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("nearest"), 0, "nearest or bilinear", )       \
    A(op, fill, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                       \
      "value of the pixels from outside: one, or one per channel (absent: 0)", )                   \
    A(op, center, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "(x, y) of the pivot; absent: the image centre", )
#define AFFINE_PARAM_ATTRS(A, op)                                                                  \
    A(op, angle, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "degrees, clockwise", ) \
    A(op, translate, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "(tx, ty) in pixels", ) \
    A(op, scale, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, "> 0", ) \
    A(op, shear, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,                 \
      "degrees: [s] (both) or [sx, sy]", )
#define AFFINE_ATTRS(A, op) AFFINE_PARAM_ATTRS(A, op) GRID_TAIL_ATTRS(A, op)
#define ROTATE_ATTRS(A, op)                                                                        \
    A(op, angle, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "degrees, counter-clockwise", ) \
    A(op, expand, BOOL, LOOM_DEFAULT_BOOL(0), 0, "true: the output holds the whole rotated image", ) \
    GRID_TAIL_ATTRS(A, op)
#define FILL_ATTR(A, op)                                                                           \
    A(op, fill, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                       \
      "value of the pixels from outside: one, or one per channel (absent: 0)", )
#define PERSPECTIVE_ATTRS(A, op)                                                                   \
    A(op, startpoints, INTS, LOOM_DEFAULT_NONE, 0, "four (x, y) corners: x0,y0,...,x3,y3", )       \
    A(op, endpoints, INTS, LOOM_DEFAULT_NONE, 0, "where they go: x0,y0,...,x3,y3", )               \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("bilinear"), 0, "nearest or bilinear", )      \
    FILL_ATTR(A, op)                                                                               \
    A(op, coefficients, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                               \
      "the 8 coefficients instead of the points", )
#define ELASTIC_ATTRS(A, op)                                                                       \
    A(op, interpolation, STRING, LOOM_DEFAULT_STRING("bilinear"), 0, "nearest or bilinear", )      \
    FILL_ATTR(A, op)
PK_ATTR_ENUM(perspective, PERSPECTIVE_ATTRS);
PK_ATTR_ENUM(elastic, ELASTIC_ATTRS);
PK_ATTR_ENUM(affine, AFFINE_ATTRS);
#define AFFINE_BOXES_ATTRS(A, op)                                                                  \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    A(op, angle, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "degrees, as vision.affine", ) \
    A(op, translate, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "(tx, ty) in pixels", ) \
    A(op, scale, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, "> 0", ) \
    A(op, shear, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "[s] or [sx, sy] degrees", ) \
    A(op, center, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "(x, y); absent: the canvas centre", ) \
    BOX_CLAMP_ATTR(A, op)
#define ROTATE_BOXES_ATTRS(A, op)                                                                  \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    A(op, angle, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "degrees, as vision.rotate", ) \
    A(op, expand, BOOL, LOOM_DEFAULT_BOOL(0), 0, "as vision.rotate: the canvas grows", )         \
    A(op, center, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "(x, y); absent: the canvas centre", ) \
    BOX_CLAMP_ATTR(A, op)
PK_ATTR_ENUM(affine_boxes, AFFINE_BOXES_ATTRS);
PK_ATTR_ENUM(rotate_boxes, ROTATE_BOXES_ATTRS);

/* The same moves on masks ([..., H, W], any TRANSFORMS_ANY_DTYPES), as
** torchvision's affine_mask, rotate_mask, perspective_mask, elastic_mask:
** the images' grid, nearest sampling, one fill value. */
#define MASK_FILL_ATTR(A, op)                                                                      \
    A(op, fill, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                                       \
      "one value for the pixels from outside (absent: 0), rounded and saturated to the dtype", )
#define MASK_CENTER_ATTR(A, op)                                                                    \
    A(op, center, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "(x, y) of the pivot; absent: the mask centre", )
#define AFFINE_MASK_ATTRS(A, op) AFFINE_PARAM_ATTRS(A, op) MASK_FILL_ATTR(A, op) MASK_CENTER_ATTR(A, op)
#define ROTATE_MASK_ATTRS(A, op)                                                                   \
    A(op, angle, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "degrees, counter-clockwise", ) \
    A(op, expand, BOOL, LOOM_DEFAULT_BOOL(0), 0, "true: the output holds the whole rotated mask", ) \
    MASK_FILL_ATTR(A, op) MASK_CENTER_ATTR(A, op)
#define PERSPECTIVE_POINTS_ATTRS(A, op)                                                            \
    A(op, startpoints, INTS, LOOM_DEFAULT_NONE, 0, "four (x, y) corners: x0,y0,...,x3,y3", )       \
    A(op, endpoints, INTS, LOOM_DEFAULT_NONE, 0, "where they go: x0,y0,...,x3,y3", )               \
    A(op, coefficients, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE,                               \
      "the 8 coefficients instead of the points", )
#define PERSPECTIVE_MASK_ATTRS(A, op) PERSPECTIVE_POINTS_ATTRS(A, op) MASK_FILL_ATTR(A, op)
#define ELASTIC_MASK_ATTRS(A, op) MASK_FILL_ATTR(A, op)
PK_ATTR_ENUM(affine_mask, AFFINE_MASK_ATTRS);
PK_ATTR_ENUM(rotate_mask, ROTATE_MASK_ATTRS);
PK_ATTR_ENUM(perspective_mask, PERSPECTIVE_MASK_ATTRS);
PK_ATTR_ENUM(elastic_mask, ELASTIC_MASK_ATTRS);

/* Boxes through perspective and elastic (affine_boxes_cpu.c), as
** torchvision's perspective_bounding_boxes and elastic_bounding_boxes. */
#define PERSPECTIVE_BOXES_ATTRS(A, op)                                                             \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op)                  \
    PERSPECTIVE_POINTS_ATTRS(A, op) BOX_CLAMP_ATTR(A, op)
#define ELASTIC_BOXES_ATTRS(A, op)                                                                 \
    BOX_FORMAT_ATTR(A, op, format, "xyxy, xywh or cxcywh") BOX_CANVAS_ATTR(A, op) BOX_CLAMP_ATTR(A, op)
PK_ATTR_ENUM(perspective_boxes, PERSPECTIVE_BOXES_ATTRS);
PK_ATTR_ENUM(elastic_boxes, ELASTIC_BOXES_ATTRS);

/* torchvision's _perspective_coefficients: the 8 coefficients given, or
** solved from four startpoints and endpoints (rounded to float32, as
** torchvision's lstsq solution); errors name the attributes. */
loom_status transforms_perspective_coefficients(const loom_attr_value *startpoints, const loom_attr_value *endpoints,
                                                const loom_attr_value *coefficients, double m[8]);

/* Box formats and the float32 conversions of boxes_cpu.c, for the other
** box kernels: 0 xyxy, 1 xywh, 2 cxcywh. */
int transforms_box_format(const char *name);
void transforms_box_convert(float *b, int from, int to);
void transforms_box_clamp(float *b, int format, int64_t h, int64_t w);
PK_ATTR_ENUM(rotate, ROTATE_ATTRS);

/* The top-left corner, in the image, of torchvision's center_crop of ch x cw
** from an h x w image (zero padding where the crop is larger). */
void center_crop_anchor(int64_t h, int64_t w, int64_t ch, int64_t cw, int64_t *top, int64_t *left);

/* Python's int(round(d / 2.0)), halves to even (torchvision's crop anchors). */
int64_t transforms_round_half(int64_t d);

/* Images and masks of the geometry ops: any of these (copies by element). */
#define TRANSFORMS_ANY_DTYPES                                                                      \
    (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL) | LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | \
     LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))

PK_ATTR_ENUM(resize, RESIZE_ATTRS);
PK_ATTR_ENUM(resize_mask, RESIZE_MASK_ATTRS);
PK_ATTR_ENUM(resize_boxes, RESIZE_BOXES_ATTRS);

/* ----------------------------------------------------------- output size */

typedef enum resize_mode {
    RESIZE_NEAREST = 0,
    RESIZE_NEAREST_EXACT,
    RESIZE_BILINEAR,
    RESIZE_BICUBIC,
} resize_mode;

/* torchvision's _compute_resized_output_size of an (h, w) canvas under the
** call's size / max_size attributes (indices size_attr, max_size_attr).
** Errors name the attribute, as torchvision's ValueErrors do. */
loom_status resize_output_size(const loom_call *call, int size_attr, int max_size_attr, int64_t h, int64_t w,
                               int64_t *out_h, int64_t *out_w);

/* The same from the attribute values (max_size NULL: absent). */
loom_status resize_output_size_of(const loom_attr_value *size, const loom_attr_value *max_size, int64_t h,
                                  int64_t w, int64_t *out_h, int64_t *out_w);

/* The interpolation attribute as a mode (the schema's choices are checked
** by the core). */
resize_mode resize_mode_of(const char *name);

/* ----------------------------------------------------------- axis tables */

/* The taps of one resized axis: output i reads input [xmin[i], xmin[i] +
** xsize[i]) with weights w[i*ksize + k] (zero for k >= xsize[i]; ksize is
** padded to a multiple of 8 so the vector loops read whole chunks). Built
** exactly as PyTorch's upsample kernels build them (resize_weights.c). */
typedef struct resize_axis {
    int64_t in, out;
    int32_t ksize;
    int32_t *xmin, *xsize;
    int16_t *w16;       /* uint8 path: fixed-point weights ... */
    int32_t prec;       /* ... with this many fraction bits */
    float *wf;          /* float32 path */
    /* float32 without antialias: PyTorch's own taps, unmerged (tap k of
    ** output x reads input tap_idx[x * taps + k], clamped, with weight
    ** tap_w[x * taps + k]; taps 2 or 4); NULL otherwise */
    int32_t *tap_idx;
    float *tap_w;
    int32_t taps;
} resize_axis;

/* Fill ax for in -> out on the uint8 path (u8 = 1: double weights rounded to
** int16, PyTorch's _compute_index_ranges_int16_weights) or the float32 path
** (u8 = 0: weights computed in float, PyTorch's float kernels). Memory comes
** from the call's scratch. */
loom_status resize_axis_build(loom_exec_ctx *ctx, resize_axis *ax, int64_t in, int64_t out, resize_mode mode,
                              int antialias, int u8);

/* The nearest / nearest-exact source index of every output index. */
void resize_nearest_index(int64_t in, int64_t out, int exact, int64_t *idx);

/* ------------------------------------------------------------ row passes */

/* One pass over rows r in [r0, r1): horizontal (each row of in, in->in
** long, into a row of ax->out) or vertical (output row r of a plane from the
** plane's input rows). resize_cpu.c has the portable loops, resize_avx2.c
** the AVX2+FMA ones; both give the same bits on the uint8 path. */
typedef struct resize_pass {
    const resize_axis *ax;
    const void *src;
    void *dst;
    int64_t src_row, dst_row;   /* elements per row */
    int64_t src_plane, dst_plane;   /* elements per plane (vertical pass) */
    int64_t rows_per_plane;     /* output rows per plane (vertical pass) */
} resize_pass;

/* The vertical pass alone: src is the planar [planes, in_h, out_w] result
** of a horizontal pass (or the image when the width is kept). */
loom_status resize_vertical(loom_exec_ctx *ctx, const void *src, void *dst, int u8, int64_t planes, int64_t in_h,
                            int64_t out_h, int64_t out_w, resize_mode mode, int antialias);
/* vision.resize of a non-compact image x (resize_strided.c) into the
** compact dst [..., out_h, out_w]: the same bits as the compact path. */
loom_status resize_strided(loom_call *call, const loom_tensor *x, void *dst, int64_t out_h, int64_t out_w,
                           resize_mode mode, int antialias);

void resize_h_u8(const resize_pass *p, int64_t r0, int64_t r1);
void resize_v_u8(const resize_pass *p, int64_t r0, int64_t r1);
void resize_h_f32(const resize_pass *p, int64_t r0, int64_t r1);
void resize_v_f32(const resize_pass *p, int64_t r0, int64_t r1);
void resize_h_u8_avx2(const resize_pass *p, int64_t r0, int64_t r1);
void resize_v_u8_avx2(const resize_pass *p, int64_t r0, int64_t r1);
void resize_h_f32_avx2(const resize_pass *p, int64_t r0, int64_t r1);
void resize_v_f32_avx2(const resize_pass *p, int64_t r0, int64_t r1);

/* vision.adjust_sharpness on one interior row (colour_avx2.c): outputs
** 1, 9, ... of dst from the rows above, at and below (uint8 or float32, w
** elements), eight at a time while they stay inside the border; returns the
** first output left to the portable loop. The same bits as colour_cpu.c. */
int64_t sharpness_row_avx2(int u8, const void *above, const void *row, const void *below, void *dst, int64_t w,
                           float around, float middle, float one_minus_factor);

/* The sampling of the output pixels of a grid for the AVX2 row
** (affine_cpu.c fills it once per call; every plane shares it). Per pixel
** k: in, the inside bits of its corners (1 nw, 2 ne, 4 sw, 8 se; nearest:
** bit 1 alone) and GRID_LANE_LEFT_OUT when its left column lies outside;
** top, bottom, where the reads of its corner pairs start in a plane (the
** nw, or the ne when the left column is outside; nearest: top alone; 0
** where the pair lies outside); dx, dy its bilinear fractions (0 where every
** corner lies outside). row_end[oy]: the end of the furthest 4-byte read of
** output row oy. */
enum { GRID_LANE_LEFT_OUT = 16 };
typedef struct grid_lanes {
    int32_t *in, *top, *bottom;
    float *dx, *dy;
    int64_t *row_end;
} grid_lanes;

/* Output pixels k0 .. k0 + n - 1 of one plane (uint8 or float32, from
** plane) into dst, eight at a time (affine_avx2.c); returns how many it did
** (a multiple of 8), the rest left to the portable loop. The same bits as
** affine_cpu.c's row. fill: the channel's (has_fill). */
int64_t grid_row_avx2(const grid_lanes *l, int64_t k0, int64_t n, int u8, int nearest, int has_fill, float fill,
                      const void *plane, void *dst);

/* 1 when the AVX2 loops may run (the core's CPU features, capped by
** LOOM_CPU_MAX_ISA); read at registration. */
int transforms_have_avx2(void);

/* Resize planes x [in_h, in_w] of dtype (uint8 or float32 for bilinear and
** bicubic; any element size for nearest) into planes x [out_h, out_w]:
** what vision.resize does once its arguments are checked. in_h, in_w >= 1. */
loom_status resize_planes(loom_exec_ctx *ctx, const void *src, void *dst, loom_dtype dtype, int64_t planes,
                          int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, resize_mode mode, int antialias);

/* ------------------------------------------------------------ kernels */

/* How PyTorch's AVX2 build (GCC, torch 2.15) evaluates the float32 tap chain
** of its antialiased separable resize, `t = x0 * w0; for j >= 1: t += xj *
** wj` over the window of `taps` inputs (zero-weight edge taps included): GCC
** vectorises the j loop as an in-order reduction, the products of four taps
** in one multiply, each added to t in turn (two roundings), and the m mod 4
** taps left (m = taps - 1) run in the scalar epilogue, contracted to FMA. So
** taps 1..PREPROCESS_UNFUSED_TAPS are t + round(xj wj) and the rest
** fma(xj, wj, t), in both passes. Checked against torch 2.15 on windows of
** 2 to about 55 taps, both passes, bilinear and bicubic (the preprocess
** goldens of tools/gen_vision_transforms_goldens.py, photo_big_u8 among
** them): a single FMA chain differs from torch by an ulp in a few percent
** of the outputs once windows reach 5 taps, which is what turned one pixel of the
** ResNet50 V2 preset on examples/demos/data/street.jpg (a sum landing an ulp
** above 110.5) into 111 instead of torch's 110. */
#define PREPROCESS_UNFUSED_TAPS(taps) (4 * (((taps) - 1) / 4))

/* The float32 tap chain of PREPROCESS_UNFUSED_TAPS over taps inputs
** stride elements apart: t = x0 w0, then taps 1 .. unfused as t + xj wj
** (two roundings; this file is C11, so no contraction) and the rest as
** fmaf(xj, wj, t). */
static inline float resize_chain_f32(const float *x, int64_t stride, const float *w, int32_t taps)
{
    const int32_t unfused = PREPROCESS_UNFUSED_TAPS(taps);
    float t = x[0] * w[0];
    int32_t j = 1;
    for (; j <= unfused; j++)
        t = t + x[j * stride] * w[j];
    for (; j < taps; j++)
        t = fmaf(x[j * stride], w[j], t);
    return t;
}

/* The unmerged taps of PyTorch's plain (no antialias) kernels, inputs
** x[idx[k] * stride], as its `t0 * w0 + t1 * w1 + ...` contracts: the
** second product rounded, the first fused onto it, the rest fused in turn. */
static inline float resize_plain_taps(const float *x, int64_t stride, const int32_t *idx, const float *w, int32_t taps)
{
    float t = fmaf(x[idx[0] * stride], w[0], x[idx[1] * stride] * w[1]);
    for (int32_t k = 2; k < taps; k++)
        t = fmaf(x[idx[k] * stride], w[k], t);
    return t;
}

loom_status vision_resize_cpu(loom_call *call);
loom_status vision_resize_mask_cpu(loom_call *call);
loom_status vision_resize_bounding_boxes_cpu(loom_call *call);
loom_status vision_crop_cpu(loom_call *call);                /* geometry_cpu.c */
loom_status vision_center_crop_cpu(loom_call *call);
loom_status vision_resized_crop_cpu(loom_call *call);
loom_status vision_pad_cpu(loom_call *call);
loom_status vision_horizontal_flip_cpu(loom_call *call);
loom_status vision_vertical_flip_cpu(loom_call *call);
loom_status vision_convert_bounding_box_format_cpu(loom_call *call);   /* boxes_cpu.c */
loom_status vision_clamp_bounding_boxes_cpu(loom_call *call);
loom_status vision_sanitize_bounding_boxes_cpu(loom_call *call);
loom_status vision_horizontal_flip_bounding_boxes_cpu(loom_call *call);
loom_status vision_vertical_flip_bounding_boxes_cpu(loom_call *call);
loom_status vision_crop_bounding_boxes_cpu(loom_call *call);
loom_status vision_center_crop_bounding_boxes_cpu(loom_call *call);
loom_status vision_resized_crop_bounding_boxes_cpu(loom_call *call);
loom_status vision_pad_bounding_boxes_cpu(loom_call *call);
loom_status vision_adjust_brightness_cpu(loom_call *call);   /* colour_cpu.c */
loom_status vision_adjust_sharpness_cpu(loom_call *call);
loom_status vision_adjust_contrast_cpu(loom_call *call);
loom_status vision_adjust_saturation_cpu(loom_call *call);
loom_status vision_adjust_hue_cpu(loom_call *call);
loom_status vision_adjust_gamma_cpu(loom_call *call);
loom_status vision_autocontrast_cpu(loom_call *call);
loom_status vision_equalize_cpu(loom_call *call);
loom_status vision_posterize_cpu(loom_call *call);
loom_status vision_solarize_cpu(loom_call *call);
loom_status vision_invert_cpu(loom_call *call);
loom_status vision_gaussian_blur_cpu(loom_call *call);
loom_status vision_normalize_cpu(loom_call *call);
loom_status vision_to_dtype_cpu(loom_call *call);
loom_status vision_rgb_to_grayscale_cpu(loom_call *call);
loom_status vision_preprocess_cpu(loom_call *call);          /* preprocess_cpu.c */
loom_status vision_affine_cpu(loom_call *call);              /* affine_cpu.c */
loom_status vision_rotate_cpu(loom_call *call);
loom_status vision_perspective_cpu(loom_call *call);
loom_status vision_elastic_cpu(loom_call *call);
loom_status vision_affine_bounding_boxes_cpu(loom_call *call);   /* affine_boxes_cpu.c */
loom_status vision_rotate_bounding_boxes_cpu(loom_call *call);
loom_status vision_perspective_bounding_boxes_cpu(loom_call *call);
loom_status vision_elastic_bounding_boxes_cpu(loom_call *call);
loom_status vision_affine_mask_cpu(loom_call *call);          /* affine_cpu.c */
loom_status vision_rotate_mask_cpu(loom_call *call);
loom_status vision_perspective_mask_cpu(loom_call *call);
loom_status vision_elastic_mask_cpu(loom_call *call);
/* torchvision's _get_inverse_affine_matrix in double (affine_cpu.c):
** inverted = 1 the image kernels' matrix, 0 the boxes' forward one. */
void transforms_affine_matrix(const double center[2], double angle, const double translate[2], double scale,
                              const double shear[2], int inverted, double m[6]);
/* torch.linspace(start, end, n) in float32 (the grids' base coordinates) */
void transforms_linspace(float start, float end, int64_t n, float *out);
/* _compute_affine_output_size (w, h) of an inverse matrix, in float32 */
void transforms_affine_output_size(const double m[6], int64_t w, int64_t h, int64_t *ow, int64_t *oh);
void preprocess_h_avx2(const float *wf, const int32_t *xmin, const int32_t *xsize, int32_t ks, int64_t x0,
                       int64_t nx, const void *src, int u8, int64_t row_stride, int64_t col_stride, float *dst,
                       int64_t dst_stride);
void preprocess_v_avx2(const float *w, int32_t taps, const float *src, int64_t src_stride, int64_t n,
                       float *dst);

#endif /* LOOM_VISION_TRANSFORMS_H */
