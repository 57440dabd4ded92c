/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet.h - the RegNet family of torchvision/models/regnet.py
** (vision.regnet_y_400mf ... regnet_y_128gf, vision.regnet_x_400mf ...
** regnet_x_32gf): the architectures, their stage tables computed as
** torchvision's BlockParams.from_init_params does, and the model state.
*/
#ifndef LOOM_VISION_MODELS_REGNET_H
#define LOOM_VISION_MODELS_REGNET_H

#include "model_common.h"

#define REGNET_MAX_STAGES 8

/* One architecture: torchvision's from_init_params arguments. */
typedef struct regnet_arch {
    const char *name;               /* "vision.regnet_y_400mf" */
    int depth;
    int w_0;
    double w_a, w_m;
    int group_width;
    double se_ratio;                /* 0: no squeeze-excitation (the X models) */
} regnet_arch;

/* The per-stage settings (BlockParams after _adjust_widths_groups_compatibilty;
** bottleneck_multiplier 1 and stride 2 in every torchvision RegNet). */
typedef struct regnet_stages {
    int n;
    int64_t width[REGNET_MAX_STAGES], depth[REGNET_MAX_STAGES], group_width[REGNET_MAX_STAGES];
} regnet_stages;

const regnet_arch *regnet_arch_of(const char *class_name);

/* The stages of a; LOOM_EINVAL (naming the class) when the settings are
** invalid or need more than REGNET_MAX_STAGES stages. */
loom_status regnet_stages_of(const regnet_arch *a, regnet_stages *out);

/* ResBottleneckBlock: proj (1x1 + bn, when the width or stride changes),
** f.a (1x1 + bn + relu), f.b (3x3 grouped, stride + bn + relu), f.se
** (SqueezeExcitation with ReLU; Y models), f.c (1x1 + bn); relu(proj + f). */
typedef struct regnet_block {
    model_conv proj, a, b, c;
    int has_proj;
    int64_t se_channels;            /* 0: none */
    const float *se_w1, *se_b1, *se_w2, *se_b2;     /* borrowed from the mapping */
} regnet_block;

typedef struct regnet_model {
    model_base base;                /* base.arch: the regnet_arch */
    regnet_stages stages;
    model_conv stem;                /* SimpleStemIN: 3x3 stride 2 + bn + relu, 3 -> 32 */
    regnet_block *blocks;
    int n_blocks;
} regnet_model;

#endif /* LOOM_VISION_MODELS_REGNET_H */
