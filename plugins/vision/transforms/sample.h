/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sample.h - vision.transform_sample: a torchvision.transforms.v2.Compose
** pipeline, given as JSON, applied to an image with its boxes, masks and
** labels, coherently (sample_pipeline.c parses it, sample_cpu.c runs it
** through the module's own ops, sample_schemas.c declares the op).
**
** The pipeline is a JSON list; each element is an object with one key, the
** transform's torchvision class name, whose value holds its arguments:
**   [{"RandomResizedCrop": {"size": [24, 24]}}, {"RandomHorizontalFlip": {}},
**    {"ToDtype": {"dtype": "float32", "scale": true}}]
*/
#ifndef LOOM_VISION_SAMPLE_H
#define LOOM_VISION_SAMPLE_H

#include "augment.h"

typedef enum sample_kind {
    SAMPLE_HFLIP,
    SAMPLE_VFLIP,
    SAMPLE_RESIZE,
    SAMPLE_CENTER_CROP,
    SAMPLE_RANDOM_CROP,
    SAMPLE_RANDOM_RESIZED_CROP,
    SAMPLE_PAD,
    SAMPLE_COLOR_JITTER,
    SAMPLE_NORMALIZE,
    SAMPLE_TO_DTYPE,
    SAMPLE_CLAMP_BOXES,
    SAMPLE_SANITIZE_BOXES,
    SAMPLE_RANDOM_ROTATION,
    SAMPLE_RANDOM_AFFINE,
    SAMPLE_RANDOM_PERSPECTIVE,
    SAMPLE_RANDOM_ZOOM_OUT,
    SAMPLE_POLICY,                /* AutoAugment, RandAugment, TrivialAugmentWide, AugMix */
    SAMPLE_ELASTIC,
    SAMPLE_RANDOM_IOU_CROP,
    SAMPLE_RANDOM_ERASING,        /* image alone; boxes and masks pass through, as in torchvision */
    SAMPLE_MIXUP,                 /* a batch [N, C, H, W] with labels [N]: see sample_cpu.c */
    SAMPLE_CUTMIX,
} sample_kind;

/* One transform and its arguments, checked as torchvision's constructor
** checks them. */
typedef struct sample_step {
    sample_kind kind;
    double p;                     /* flips */
    int64_t size[2];              /* resize: n_size 1 or 2; crops: (h, w) */
    int n_size;
    int64_t max_size;             /* 0: none */
    char interpolation[16];
    int antialias;
    double scale[2], ratio[2];    /* random_resized_crop */
    int64_t padding[4];           /* (left, top, right, bottom) */
    int has_padding, pad_if_needed;
    double fill[4];
    int n_fill;
    char padding_mode[12];
    double jitter[4][2];          /* brightness, contrast, saturation, hue ranges */
    int has_jitter[4];
    double mean[4], std[4];
    int n_mean, n_std;
    char dtype[12];
    int scale_values;             /* to_dtype's scale */
    double min_size, min_area;    /* sanitize */
    double degrees[2];            /* rotation, affine: the angle's range */
    double translate[2];          /* affine: fractions of W and H */
    double shear[4];              /* affine: x range, then y range */
    int has_translate, has_scale, n_shear, has_center, expand;
    double center[2];
    double side_range[2];         /* zoom out */
    double distortion_scale;      /* perspective */
    double alpha[2], sigma[2];    /* elastic */
    double iou_scale[2], iou_aspect[2], options[16];   /* RandomIoUCrop */
    int n_options;
    int64_t trials;
    aug_policy policy;            /* the augmentations (policy.fill points at fill) */
    double value[4];              /* random_erasing (scale, ratio above; p) */
    int n_value, random_value;
    double mix_alpha;             /* mixup, cutmix */
    int64_t num_classes;          /* 0: None */
} sample_step;

typedef struct sample_pipeline {
    sample_step *steps;
    int n;
} sample_pipeline;

/* Parse the JSON text of attribute 'pipeline' (malloc'd steps; free with
** sample_pipeline_free). Errors name the index, the transform and the
** argument. */
loom_status sample_pipeline_parse(const char *json, sample_pipeline *out);
void sample_pipeline_free(sample_pipeline *p);

#define TRANSFORM_SAMPLE_ATTRS(A, op)                                                              \
    A(op, pipeline, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                 \
      "JSON list of {\"Transform\": {arguments}} (torchvision.transforms.v2 names)", )             \
    A(op, format, STRING, LOOM_DEFAULT_STRING("xyxy"), 0, "format of boxes: xyxy, xywh or cxcywh", ) \
    AUG_SEED_ATTR(A, op)
PK_ATTR_ENUM(transform_sample, TRANSFORM_SAMPLE_ATTRS);

loom_status vision_transform_sample_cpu(loom_call *call);

#endif /* LOOM_VISION_SAMPLE_H */
