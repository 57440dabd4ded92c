/* SPDX-License-Identifier: BSD-3-Clause */
/*
** efficientnet.h - the EfficientNetV2 family of
** torchvision/models/efficientnet.py (vision.efficientnet_v2_s, _m, _l):
** the stage settings of _efficientnet_conf and the model state.
*/
#ifndef LOOM_VISION_MODELS_EFFICIENTNET_H
#define LOOM_VISION_MODELS_EFFICIENTNET_H

#include "model_common.h"

#define EFFNET_MAX_STAGES 8

/* One row of torchvision's inverted_residual_setting (width_mult and
** depth_mult 1: the channels are used as given). */
typedef struct effnet_stage {
    int fused;                      /* 1: FusedMBConvConfig, 0: MBConvConfig */
    int expand_ratio, kernel, stride, in, out, layers;
} effnet_stage;

typedef struct effnet_arch {
    const char *name;               /* "vision.efficientnet_v2_s" */
    int n_stages;
    effnet_stage stages[EFFNET_MAX_STAGES];
    int last_channel;               /* 1280 */
} effnet_arch;

/* One block. FusedMBConv: expand (kxk, stride, + bn + silu) then proj (1x1
** + bn), or, without expansion, proj alone (kxk, stride, + bn + silu).
** MBConv: expand (1x1 + bn + silu, when the ratio widens), dw (kxk
** depthwise, stride, + bn + silu), squeeze-excitation (silu, sigmoid;
** max(1, in / 4) channels), proj (1x1 + bn). The residual (stride 1, in ==
** out) is added at the end; stochastic depth is the identity at inference. */
typedef struct effnet_block {
    int fused, has_expand, use_res;
    model_conv expand, dw, proj;
    int64_t se_channels;            /* MBConv only */
    const float *se_w1, *se_b1, *se_w2, *se_b2;     /* borrowed from the mapping */
} effnet_block;

typedef struct effnet_model {
    model_base base;                /* base.arch: &arch */
    effnet_arch arch;               /* the class's, or vision.efficientnet_v2's attributes */
    model_conv stem, head;          /* features.0 (3x3/2, 3 -> stage 1's in), features.<last> (1x1 -> 1280) */
    effnet_block *blocks;
    int n_blocks;
} effnet_model;

const effnet_arch *effnet_arch_of(const char *class_name);

/* vision.efficientnet_v2: the stage list as an attribute, method
** vision.efficientnet_v2. */
extern const loom_object_class vision_efficientnet_v2_class;
extern const loom_op_schema vision_efficientnet_v2_schema;
extern const loom_kernel_desc effnet_generic_kernels[1];

#endif /* LOOM_VISION_MODELS_EFFICIENTNET_H */
