/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mobilenet_v3_body.h - torchvision's MobileNetV3-Large `features` as a
** detector's body (mobilenet_v3_body.c), the one
** fasterrcnn_mobilenet_v3_large_fpn puts under "backbone.body.":
**   <0>        the stem: Conv2dNormActivation(3, C, 3, stride 2, hardswish)
**   <1..15>    the inverted residual blocks of _mobilenet_v3_conf's
**              "mobilenet_v3_large" table, their channels scaled by
**              width_mult (_make_divisible(c * width_mult, 8)), the last three
**              halved with reduced_tail: block.<j> = expand (1x1, when the
**              expanded width differs from the input's), depthwise (k x k,
**              the stride), SqueezeExcitation (fc1 / fc2, relu then
**              hardsigmoid, _make_divisible(expanded / 4, 8) channels) when
**              the row says so, project (1x1, no activation); relu or
**              hardswish; the input added back when stride 1 and in == out
**   <16>       the last conv: 1x1 to 6 x the last block's width, hardswish
** Every batchnorm (FrozenBatchNorm2d in a pretrained file, BatchNorm2d
** otherwise; eps 1e-5 both, as the detector builds the body with
** norm_layer given) is folded into its conv at load. The forward gives the
** outputs of the stages _mobilenet_extractor returns to the FPN by
** default: the last two of stage_indices = [0, the strided blocks, 16],
** i.e. modules 13 and 16 (both at stride 32). Dilated bodies (dilated=True)
** are not supported.
*/
#ifndef LOOM_VISION_MODELS_MOBILENET_V3_BODY_H
#define LOOM_VISION_MODELS_MOBILENET_V3_BODY_H

#include "model_common.h"

#define MNV3_BLOCKS 15          /* mobilenet_v3_large's inverted residual blocks */
#define MNV3_MODULES 17         /* features: stem, the blocks, the last conv */
#define MNV3_RETURNED 2         /* the stages given to the FPN */

/* One row of the block table, channels already scaled. */
typedef struct mnv3_block_conf {
    int64_t in, kernel, expanded, out;
    int use_se, use_hs, stride;
} mnv3_block_conf;

typedef struct mnv3_block {
    mnv3_block_conf conf;
    int has_expand, use_res;
    model_conv expand, dw, project;
    int64_t se_channels;
    const loom_tensor *se_w1, *se_b1, *se_w2, *se_b2;     /* borrowed from the file */
} mnv3_block;

typedef struct mnv3_body {
    double width_mult;
    int reduced_tail;
    model_conv stem, last;
    mnv3_block blocks[MNV3_BLOCKS];
    int returned[MNV3_RETURNED];                /* the modules whose outputs the FPN takes: 13, 16 */
    int64_t returned_channels[MNV3_RETURNED];   /* their widths (in_channels_list) */
    const loom_op *conv2d, *hardswish, *se;
} mnv3_body;

/* The block table of width_mult (> 0) and reduced_tail into b (its convs
** unloaded); LOOM_EINVAL naming cls for a width that gives no channels. */
loom_status mnv3_body_config(const char *cls, double width_mult, int reduced_tail, mnv3_body *b);

/* Loads every key of the body (under L->key_prefix: "backbone.body.<i>."),
** each checked by name, dtype and shape, and finds the ops; num_batches_tracked
** is optional when L->frozen_bn. mnv3_body_config first. */
loom_status mnv3_body_load(model_loader *L, mnv3_body *b);

/* Frees what the body holds (not b). */
void mnv3_body_free(mnv3_body *b);

/* c[k] = the output of module b->returned[k] on the batch x [B, 3, H, W]
** (new tensors, freed by the caller; NULL on failure). */
loom_status mnv3_body_forward(loom_call *call, const mnv3_body *b, const loom_tensor *x,
                              loom_tensor **c);

#endif /* LOOM_VISION_MODELS_MOBILENET_V3_BODY_H */
