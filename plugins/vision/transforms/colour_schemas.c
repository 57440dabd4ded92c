/* SPDX-License-Identifier: BSD-3-Clause */
/*
** colour_schemas.c - the definitions of the colour ops of the transforms
** module, torchvision.transforms.v2.functional's image kernels:
** adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue,
** adjust_gamma, autocontrast, equalize, posterize, solarize, invert,
** gaussian_blur, normalize, to_dtype, rgb_to_grayscale. Images are uint8 or
** float32 [..., C, H, W] (normalize: float32 only; to_dtype converts).
*/
#include "transforms.h"

PK_ATTR_TABLE(brightness, BRIGHTNESS_ATTRS);
PK_ATTR_TABLE(sharpness, SHARPNESS_ATTRS);
PK_ATTR_TABLE(contrast, CONTRAST_ATTRS);
PK_ATTR_TABLE(saturation, SATURATION_ATTRS);
PK_ATTR_TABLE(hue, HUE_ATTRS);
PK_ATTR_TABLE(gamma, GAMMA_ATTRS);
PK_ATTR_TABLE(posterize, POSTERIZE_ATTRS);
PK_ATTR_TABLE(solarize, SOLARIZE_ATTRS);
PK_ATTR_TABLE(blur, BLUR_ATTRS);
PK_ATTR_TABLE(normalize, NORMALIZE_ATTRS);
PK_ATTR_TABLE(to_dtype, TO_DTYPE_ATTRS);
PK_ATTR_TABLE(grayscale, GRAYSCALE_ATTRS);

static const char *const dtypes[] = { "float32", "uint8", NULL };
static const loom_attr_choices to_dtype_choices[] = { { PK_ATTR(to_dtype, dtype), dtypes } };

#define U8_F32 (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
static const loom_arg_def image_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 (0..255) or float32 (0..1)" },
};
static const loom_arg_def image_out[] = {
    { .name = "output", .dtypes = U8_F32, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "the shape and dtype of image" },
};
static const loom_arg_def float_in[] = {
    { .name = "image", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[..., C, H, W] float32" },
};
static const loom_arg_def float_out[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "(image - mean) / std" },
};
static const loom_arg_def any_out[] = {
    { .name = "output", .dtypes = U8_F32, .ndim = -1, .doc = "image in the asked dtype" },
};
static const loom_arg_def gray_out[] = {
    { .name = "output", .dtypes = U8_F32, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "[..., num_output_channels, H, W]" },
};

#define COLOUR_OP(VAR, NAME, DOC, ATTRS)                                                           \
    PK_SCHEMA(VAR, NAME, 1, DOC, PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(ATTRS))

COLOUR_OP(vision_adjust_brightness_schema, "vision.adjust_brightness",
          "torchvision v2 adjust_brightness: image * factor, clamped (1 or 3 channels)", brightness_attrs);
COLOUR_OP(vision_adjust_sharpness_schema, "vision.adjust_sharpness",
          "torchvision v2 adjust_sharpness: blend with the 3x3 smoothed image inside the border (1 or 3 channels)",
          sharpness_attrs);
COLOUR_OP(vision_adjust_contrast_schema, "vision.adjust_contrast",
          "torchvision v2 adjust_contrast: blend with the mean of the greyscale image", contrast_attrs);
COLOUR_OP(vision_adjust_saturation_schema, "vision.adjust_saturation",
          "torchvision v2 adjust_saturation: blend with the greyscale image", saturation_attrs);
COLOUR_OP(vision_adjust_hue_schema, "vision.adjust_hue",
          "torchvision v2 adjust_hue: rotate the hue in HSV (Pillow's conversion)", hue_attrs);
COLOUR_OP(vision_adjust_gamma_schema, "vision.adjust_gamma",
          "torchvision v2 adjust_gamma: gain * image^gamma on the [0, 1] scale", gamma_attrs);
COLOUR_OP(vision_posterize_schema, "vision.posterize", "torchvision v2 posterize: keep the high bits",
          posterize_attrs);
COLOUR_OP(vision_solarize_schema, "vision.solarize", "torchvision v2 solarize: invert pixels >= threshold",
          solarize_attrs);
COLOUR_OP(vision_gaussian_blur_schema, "vision.gaussian_blur",
          "torchvision v2 gaussian_blur: separable Gaussian, reflect padding", blur_attrs);
PK_SCHEMA(vision_autocontrast_schema, "vision.autocontrast", 1,
          "torchvision v2 autocontrast: stretch each channel to the full range",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out));
PK_SCHEMA(vision_equalize_schema, "vision.equalize", 1,
          "torchvision v2 equalize: histogram equalisation per channel (Pillow's lookup table)",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out));
PK_SCHEMA(vision_invert_schema, "vision.invert", 1, "torchvision v2 invert: 255 - x, or 1 - x",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out));
PK_SCHEMA(vision_normalize_schema, "vision.normalize", 1,
          "torchvision v2 normalize: (image - mean[c]) / std[c] in float32 (a division)",
          PK_INPUTS(float_in), PK_OUTPUTS(float_out), PK_ATTRS(normalize_attrs));
PK_SCHEMA(vision_to_dtype_schema, "vision.to_dtype", 1,
          "torchvision v2 to_dtype on images: uint8 <-> float32, with or without scaling",
          PK_INPUTS(image_in), PK_OUTPUTS(any_out), PK_ATTRS(to_dtype_attrs), PK_CHOICES(to_dtype_choices));
PK_SCHEMA(vision_rgb_to_grayscale_schema, "vision.rgb_to_grayscale", 1,
          "torchvision v2 rgb_to_grayscale: 0.2989 R + 0.587 G + 0.114 B",
          PK_INPUTS(image_in), PK_OUTPUTS(gray_out), PK_ATTRS(grayscale_attrs));
