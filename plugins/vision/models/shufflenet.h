/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shufflenet.h - the ShuffleNetV2 family of
** torchvision/models/shufflenetv2.py (vision.shufflenet_v2_x0_5, x1_0,
** x1_5, x2_0, and vision.shufflenet_v2, which takes the architecture as
** attributes): the architectures and the model state.
*/
#ifndef LOOM_VISION_MODELS_SHUFFLENET_H
#define LOOM_VISION_MODELS_SHUFFLENET_H

#include "model_common.h"

typedef struct shufflenet_arch {
    const char *name;               /* "vision.shufflenet_v2_x1_0" */
    int repeats[3];                 /* stages_repeats */
    int channels[5];                /* stages_out_channels: conv1, stage2..4, conv5 */
} shufflenet_arch;

/* InvertedResidual(inp, oup, stride): stride 2: branch1 = dw 3x3/2 + bn,
** 1x1 + bn + relu; branch2 = 1x1 + bn + relu, dw 3x3/stride + bn, 1x1 +
** bn + relu, on the input (stride 2) or its second channel half (stride 1,
** whose first half is passed on); then channel_shuffle(cat(...), 2). */
typedef struct shufflenet_block {
    int stride;
    model_conv b1_dw, b1_pw;        /* stride 2 only */
    model_conv b2_pw1, b2_dw, b2_pw2;
} shufflenet_block;

typedef struct shufflenet_model {
    model_base base;                /* base.arch: &arch */
    shufflenet_arch arch;           /* the class's, or vision.shufflenet_v2's attributes */
    model_conv conv1, conv5;
    shufflenet_block *blocks;
    int n_blocks;
} shufflenet_model;

const shufflenet_arch *shufflenet_arch_of(const char *class_name);

/* vision.shufflenet_v2: the architecture as attributes, method vision.shufflenet_v2. */
extern const loom_object_class vision_shufflenet_v2_class;
extern const loom_op_schema vision_shufflenet_v2_schema;
extern const loom_kernel_desc shufflenet_generic_kernels[1];

#endif /* LOOM_VISION_MODELS_SHUFFLENET_H */
