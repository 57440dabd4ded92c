/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet.h - the RegNet family of torchvision/models/regnet.py
** (vision.regnet_y_400mf ... regnet_y_128gf, vision.regnet_x_400mf ...
** regnet_x_32gf, and vision.regnet, which takes the architecture as
** attributes): the architectures, their stage tables computed as
** torchvision's BlockParams.from_init_params does, and the model state.
*/
#ifndef LOOM_VISION_MODELS_REGNET_H
#define LOOM_VISION_MODELS_REGNET_H

#include "model_common.h"

#define REGNET_MAX_STAGES 8

/* One architecture: torchvision's from_init_params arguments, RegNet's
** stem_width (32 in every named class) and its bottleneck_multiplier (1). */
typedef struct regnet_arch {
    const char *name;               /* "vision.regnet_y_400mf" */
    int depth;
    int w_0;
    double w_a, w_m;
    int group_width;
    double se_ratio;                /* 0: no squeeze-excitation (the X models) */
    int stem_width;
    double bottleneck_multiplier;
} regnet_arch;

/* The per-stage settings (BlockParams after _adjust_widths_groups_compatibilty;
** stride 2 in every stage): width, depth, group width and the bottleneck
** width int(round(width * bottleneck_multiplier)) of its blocks. */
typedef struct regnet_stages {
    int n;
    int64_t width[REGNET_MAX_STAGES], depth[REGNET_MAX_STAGES], group_width[REGNET_MAX_STAGES];
    int64_t bottleneck[REGNET_MAX_STAGES];
} regnet_stages;

/* The named class's architecture; NULL for any other name. */
const regnet_arch *regnet_arch_of(const char *class_name);

/* vision.regnet's architecture from its attributes (args->attrs in the
** order of the class's attribute table: weights, depth, w_0, w_a, w_m,
** group_width, bottleneck_multiplier, se_ratio, stem_width), named
** args->class_name; LOOM_EINVAL naming the attribute when one is out of
** range. */
loom_status regnet_arch_from_attrs(const loom_object_args *args, regnet_arch *out);

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
    model_base base;                /* base.arch: &arch */
    regnet_arch arch;               /* the class's, or vision.regnet's attributes */
    regnet_stages stages;
    model_conv stem;                /* SimpleStemIN: 3x3 stride 2 + bn + relu, 3 -> stem_width */
    regnet_block *blocks;
    int n_blocks;
} regnet_model;

/* vision.regnet: the architecture as attributes, method vision.regnet. */
extern const loom_object_class vision_regnet_class;
extern const loom_op_schema vision_regnet_schema;
extern const loom_kernel_desc regnet_generic_kernels[1];

#endif /* LOOM_VISION_MODELS_REGNET_H */
