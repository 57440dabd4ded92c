/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mnasnet.h - the MNASNet family of torchvision/models/mnasnet.py
** (vision.mnasnet0_5, 0_75, 1_0, 1_3: MNASNet B1 at width alpha, and
** vision.mnasnet, which takes alpha as an attribute) and the model state.
*/
#ifndef LOOM_VISION_MODELS_MNASNET_H
#define LOOM_VISION_MODELS_MNASNET_H

#include "model_common.h"

#define MNASNET_STACKS 6

typedef struct mnasnet_arch {
    const char *name;               /* "vision.mnasnet1_0" */
    double alpha;
} mnasnet_arch;

/* _InvertedResidual: 1x1 + bn + relu, dw kxk/stride + bn + relu, 1x1 + bn;
** + input when stride 1 and in == out. */
typedef struct mnasnet_block {
    model_conv expand, dw, proj;
    int use_res;
} mnasnet_block;

typedef struct mnasnet_model {
    model_base base;                /* base.arch: &arch */
    mnasnet_arch arch;              /* the class's, or vision.mnasnet's attributes */
    int version;                    /* 2, or 1: a checkpoint whose stem keeps 32 / 16 channels (alpha != 1) */
    model_conv stem, stem_dw, stem_pw, head;
    mnasnet_block *blocks;
    int n_blocks;
} mnasnet_model;

const mnasnet_arch *mnasnet_arch_of(const char *class_name);

/* vision.mnasnet: alpha as an attribute, method vision.mnasnet. */
extern const loom_object_class vision_mnasnet_class;
extern const loom_op_schema vision_mnasnet_schema;
extern const loom_kernel_desc mnasnet_generic_kernels[1];

/* torchvision's _round_to_multiple_of(val, divisor) with round_up_bias 0.9 */
int64_t mnasnet_round_to_multiple_of(double val, int64_t divisor);

#endif /* LOOM_VISION_MODELS_MNASNET_H */
