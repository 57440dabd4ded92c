/* SPDX-License-Identifier: BSD-3-Clause */
/*
** models.h - what the files of the vision `models` module share: the
** torchvision classification models as object classes, each with a method
** op of the same name (vision.resnet50 ...): created from a safetensors file
** with torchvision's state_dict keys, run as a sequence of dispatched
** vision.* ops (host->op_call), so LOOM_VERBOSE=2 shows each layer's backend.
*/
#ifndef LOOM_VISION_MODELS_H
#define LOOM_VISION_MODELS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

/* The ResNet family of torchvision/models/resnet.py. */
#define VISION_RESNETS(X)                                                                          \
    X(resnet18) X(resnet34) X(resnet50) X(resnet101) X(resnet152)                                  \
    X(resnext50_32x4d) X(resnext101_32x8d) X(resnext101_64x4d) X(wide_resnet50_2) X(wide_resnet101_2)

#define VISION_MODELS_OPS(X_)                                                                      \
    X_(vision_resnet18_schema) X_(vision_resnet34_schema) X_(vision_resnet50_schema)               \
    X_(vision_resnet101_schema) X_(vision_resnet152_schema) X_(vision_resnext50_32x4d_schema)      \
    X_(vision_resnext101_32x8d_schema) X_(vision_resnext101_64x4d_schema)                          \
    X_(vision_wide_resnet50_2_schema) X_(vision_wide_resnet101_2_schema) X_(vision_weights_meta_schema)
PK_OPS_DECLARE(vision_models_ops, VISION_MODELS_OPS);

/* One architecture of the family: torchvision's ResNet(block, layers,
** groups, width_per_group). */
typedef struct resnet_arch {
    const char *name;               /* "vision.resnet50" */
    int bottleneck;                 /* 0: BasicBlock (expansion 1), 1: Bottleneck (expansion 4) */
    int layers[4];
    int groups, width_per_group;
} resnet_arch;

const resnet_arch *resnet_arch_of(const char *class_name);

/* A convolution with its batchnorm folded in: weight [cout, cin/groups, k, k]
** and bias [cout], owned by the model. */
typedef struct model_conv {
    float *weight, *bias;
    int64_t cin, cout, k, stride, pad, groups;
} model_conv;

typedef struct resnet_block {
    model_conv conv[3];             /* BasicBlock: conv1, conv2; Bottleneck: conv1..conv3 */
    int n_convs;
    int has_down;
    model_conv down;                /* downsample.0 + downsample.1 */
} resnet_block;

/* The activation buffers of one input shape, planned at its first call
** (see resnet_forward.c for the roles). */
typedef struct resnet_plan {
    int64_t n, h, w;                /* the input shape it is for; n = 0: none yet */
    float *buf[5];
    size_t floats[5];
} resnet_plan;

typedef struct resnet_model {
    const resnet_arch *arch;
    model_conv stem;
    resnet_block *blocks;
    int n_blocks;
    int64_t features, classes;      /* fc: [classes, features] */
    const float *fc_weight, *fc_bias;  /* borrowed from the mapping */
    int64_t num_params;             /* of the file, as torchvision counts them (parameters, no buffers) */
    const struct model_weights_entry *entry;  /* the weight entry named at create, or NULL */
    const loom_op *conv2d, *max_pool, *avg_pool, *linear;
    pthread_mutex_t lock;           /* one forward at a time per model: the plan's buffers */
    resnet_plan plan;
} resnet_model;

extern const loom_object_class *const vision_models_classes[10];
extern const pk_module vision_models_cpu;

#endif /* LOOM_VISION_MODELS_H */
