/* SPDX-License-Identifier: BSD-3-Clause */
/*
** blocks_schemas.c - the definitions of vision.squeeze_excitation and
** vision.channel_shuffle (blocks.h), with torchvision's and torch's names.
*/
#include "blocks.h"

PK_ATTR_TABLE(squeeze_excitation, SQUEEZE_EXCITATION_ATTRS);
PK_ATTR_TABLE(channel_shuffle, CHANNEL_SHUFFLE_ATTRS);

static const char *const se_acts[] = { "relu", "silu", NULL };
static const char *const se_scale_acts[] = { "sigmoid", "hardsigmoid", NULL };
static const loom_attr_choices se_choices[] = {
    { PK_ATTR(squeeze_excitation, activation), se_acts },
    { PK_ATTR(squeeze_excitation, scale_activation), se_scale_acts },
};
static const loom_arg_def se_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, C, H, W], H * W > 0" },
    { .name = "fc1_weight", .dtypes = LAYERS_DTYPES, .ndim = -1,
      .doc = "[S, C, 1, 1] (the state_dict's fc1.weight) or [S, C]" },
    { .name = "fc1_bias", .dtypes = LAYERS_DTYPES, .ndim = 1, .doc = "[S]" },
    { .name = "fc2_weight", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[C, S, 1, 1] or [C, S]" },
    { .name = "fc2_bias", .dtypes = LAYERS_DTYPES, .ndim = 1, .doc = "[C]" },
};
static const loom_arg_def se_outputs[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = 4,
      .doc = "[N, C, H, W]: input * scale (may be the input tensor itself)" },
};

static void se_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[SE_INPUT], *w = call->inputs[SE_FC1_WEIGHT];
    double numel = (double)loom_numel(x);
    *flops = 2.0 * numel + 4.0 * (double)x->shape[0] * (double)loom_numel(w);
    *bytes = 8.0 * numel;
}

PK_SCHEMA(vision_squeeze_excitation_schema, "vision.squeeze_excitation", 1,
          "torchvision.ops.SqueezeExcitation: input * scale_act(fc2(act(fc1(adaptive_avg_pool2d(input, 1)))))",
          PK_INPUTS(se_inputs), PK_OUTPUTS(se_outputs), PK_ATTRS(squeeze_excitation_attrs), PK_CHOICES(se_choices),
          .cost = se_cost);

static const loom_arg_def shuffle_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPES_ALL, .ndim = -1, .doc = "[N, C, *], rank >= 3; any strides" },
    { .name = "other", .dtypes = LOOM_DTYPES_ALL, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "[N, C2, *]: cat([input, other], 1) is shuffled (ShuffleNetV2's block end); any strides" },
};
static const loom_arg_def shuffle_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPES_ALL, .ndim = -1,
      .doc = "[N, C (+ C2), *], C (+ C2) a multiple of groups: output[:, j * groups + i] = x[:, i * (C / groups) + j] "
             "of x = input (or cat([input, other], 1)); not an input" },
};
PK_SCHEMA(vision_channel_shuffle_schema, "vision.channel_shuffle", 1,
          "F.channel_shuffle: input (cat with other) viewed as [N, groups, C/groups, *], dims 1 and 2 swapped",
          PK_INPUTS(shuffle_inputs), PK_OUTPUTS(shuffle_outputs), PK_ATTRS(channel_shuffle_attrs));
