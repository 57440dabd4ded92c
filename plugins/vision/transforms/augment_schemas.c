/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment_schemas.c - the augmentation ops of torchvision.transforms.v2
** (AugMix, RandAugment, TrivialAugmentWide, AutoAugment, RandomErasing,
** MixUp, CutMix) with their arguments, a seed, and an optional input of
** torchvision's own draws.
*/
#include "augment.h"

PK_ATTR_TABLE(augmix, AUGMIX_ATTRS);
PK_ATTR_TABLE(rand_augment, RAND_AUGMENT_ATTRS);
PK_ATTR_TABLE(trivial_augment, TRIVIAL_AUGMENT_ATTRS);
PK_ATTR_TABLE(auto_augment, AUTO_AUGMENT_ATTRS);
PK_ATTR_TABLE(random_erasing, RANDOM_ERASING_ATTRS);
PK_ATTR_TABLE(mix, MIX_ATTRS);

static const char *const modes[] = { "nearest", "bilinear", NULL };
static const char *const policies[] = { "imagenet", NULL };
static const loom_attr_choices augmix_choices[] = { { PK_ATTR(augmix, interpolation), modes } };
static const loom_attr_choices rand_choices[] = { { PK_ATTR(rand_augment, interpolation), modes } };
static const loom_attr_choices trivial_choices[] = { { PK_ATTR(trivial_augment, interpolation), modes } };
static const loom_attr_choices auto_choices[] = { { PK_ATTR(auto_augment, interpolation), modes },
                                                  { PK_ATTR(auto_augment, policy), policies } };

#define U8_F32 (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
#define DRAWS_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))
#define DRAWS_DOC "[K]: torchvision's random draws in its order (each randint, rand, normal noise value and Dirichlet component); absent: the seed"
static const loom_arg_def image_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32, 1 or 3 channels" },
    { .name = "draws", .dtypes = DRAWS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = DRAWS_DOC },
};
static const loom_arg_def image_out[] = {
    { .name = "output", .dtypes = U8_F32, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "the augmented image, same shape and dtype" },
};

PK_SCHEMA(vision_augmix_schema, "vision.augmix", 1,
          "torchvision.transforms.v2.AugMix: chains of random ops mixed with the image by Dirichlet weights "
          "(per image of a batch; the chains shared, as torchvision)",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(augmix_attrs), PK_CHOICES(augmix_choices));
PK_SCHEMA(vision_rand_augment_schema, "vision.rand_augment", 1,
          "torchvision.transforms.v2.RandAugment: num_ops random ops at one magnitude",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(rand_augment_attrs), PK_CHOICES(rand_choices));
PK_SCHEMA(vision_trivial_augment_wide_schema, "vision.trivial_augment_wide", 1,
          "torchvision.transforms.v2.TrivialAugmentWide: one random op at a random magnitude",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(trivial_augment_attrs), PK_CHOICES(trivial_choices));
PK_SCHEMA(vision_auto_augment_schema, "vision.auto_augment", 1,
          "torchvision.transforms.v2.AutoAugment with the ImageNet policy: one random sub-policy of two ops",
          PK_INPUTS(image_in), PK_OUTPUTS(image_out), PK_ATTRS(auto_augment_attrs), PK_CHOICES(auto_choices));

static const loom_arg_def erase_in[] = {
    { .name = "image", .dtypes = U8_F32, .ndim = -1, .doc = "[..., C, H, W] uint8 or float32" },
    { .name = "draws", .dtypes = DRAWS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = DRAWS_DOC },
};
PK_SCHEMA(vision_random_erasing_schema, "vision.random_erasing", 1,
          "torchvision.transforms.v2.RandomErasing: with probability p, a random rectangle set to value",
          PK_INPUTS(erase_in), PK_OUTPUTS(image_out), PK_ATTRS(random_erasing_attrs));

static const loom_arg_def mixup_in[] = {
    { .name = "images", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4, .doc = "[N, C, H, W] float32" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[N] class indices (int64) or [N, K] probabilities (float32)" },
    { .name = "draws", .dtypes = DRAWS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = DRAWS_DOC },
};
static const loom_arg_def cutmix_in[] = {
    { .name = "images", .dtypes = U8_F32, .ndim = 4, .doc = "[N, C, H, W] uint8 or float32" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[N] class indices (int64) or [N, K] probabilities (float32)" },
    { .name = "draws", .dtypes = DRAWS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = DRAWS_DOC },
};
static const loom_arg_def mix_out[] = {
    { .name = "images", .dtypes = U8_F32, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = 4,
      .doc = "[N, C, H, W]: each image mixed with the one before it (the batch rolled by one)" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "[N, K] float32: the mixed labels" },
};
PK_SCHEMA(vision_mixup_schema, "vision.mixup", 1,
          "torchvision.transforms.v2.MixUp: a batch blended with itself rolled by one, lam ~ Beta(alpha, alpha)",
          PK_INPUTS(mixup_in), PK_OUTPUTS(mix_out), PK_ATTRS(mix_attrs));
PK_SCHEMA(vision_cutmix_schema, "vision.cutmix", 1,
          "torchvision.transforms.v2.CutMix: a random box of each image from the one before it, labels by area",
          PK_INPUTS(cutmix_in), PK_OUTPUTS(mix_out), PK_ATTRS(mix_attrs));
