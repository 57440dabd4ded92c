/* SPDX-License-Identifier: BSD-3-Clause */
/*
** blocks.h - the model building blocks of the layers module that are more
** than one torch function, and their shared declarations:
**   vision.squeeze_excitation  torchvision.ops.SqueezeExcitation at inference:
**                              s = scale_act(fc2(act(fc1(avgpool(x))))),
**                              y = s * x (fc1, fc2: 1x1 convs with bias)
**   vision.channel_shuffle     F.channel_shuffle / nn.ChannelShuffle (and
**                              torchvision.models.shufflenetv2.channel_shuffle):
**                              [N, g, C/g, *] transposed to [N, C/g, g, *];
**                              with `other`, of cat([input, other], 1), the
**                              end of a ShuffleNetV2 block in one pass
** (vision.stochastic_depth, identity at inference, is the deform module's.)
*/
#ifndef LOOM_VISION_LAYERS_BLOCKS_H
#define LOOM_VISION_LAYERS_BLOCKS_H

#include <stdint.h>

#include "layers.h"

enum { SE_INPUT = 0, SE_FC1_WEIGHT = 1, SE_FC1_BIAS = 2, SE_FC2_WEIGHT = 3, SE_FC2_BIAS = 4 };

#define SQUEEZE_EXCITATION_ATTRS(A, op)                                                            \
    A(op, activation, STRING, LOOM_DEFAULT_STRING("relu"), 0,                                      \
      "delta, after fc1: relu (torchvision's default; RegNet, MNASNet) or silu (EfficientNet)", )  \
    A(op, scale_activation, STRING, LOOM_DEFAULT_STRING("sigmoid"), 0,                             \
      "sigma, after fc2: sigmoid (the default) or hardsigmoid (MobileNetV3)", )
#define CHANNEL_SHUFFLE_ATTRS(A, op)                                                               \
    A(op, groups, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,                 \
      "g: the channels are g groups of C/g, interleaved", )
PK_ATTR_ENUM(squeeze_excitation, SQUEEZE_EXCITATION_ATTRS);
PK_ATTR_ENUM(channel_shuffle, CHANNEL_SHUFFLE_ATTRS);

/* The checks of the cpu and cuda kernels (layers_op_checks.c), with their
** messages; each allocates the output on success (*out; its numel may be
** 0). squeeze_excitation: *squeeze is S, fc1's rows. channel_shuffle: also
** refuses an output that is an input (when the output is not empty). */
loom_status layers_check_squeeze_excitation(loom_call *call, int64_t *squeeze, loom_tensor **out);
loom_status layers_check_shuffle(loom_call *call, loom_tensor **out);

/* The vector loops of squeeze_excitation (blocks_avx2.c, AVX2 + FMA):
** the sum of n floats (8 lanes x 4 accumulators, then the lanes pairwise)
** and y[i] = x[i] * s. */
float blocks_sum_avx2(const float *x, int64_t n);
void blocks_scale_avx2(const float *x, float s, float *y, int64_t n);

#endif /* LOOM_VISION_LAYERS_BLOCKS_H */
