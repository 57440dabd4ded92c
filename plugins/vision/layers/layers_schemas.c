/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_schemas.c - the definitions of the layers module's ops (names and
** arguments of torch.nn.functional; layers.h lists them).
*/
#include "layers.h"

const int64_t layers_ones2[2] = { 1, 1 };
const int64_t layers_zeros2[2] = { 0, 0 };

PK_ATTR_TABLE(conv2d, CONV2D_ATTRS);
PK_ATTR_TABLE(batch_norm, BATCH_NORM_ATTRS);
PK_ATTR_TABLE(gelu, GELU_ATTRS);
PK_ATTR_TABLE(max_pool2d, MAX_POOL2D_ATTRS);
PK_ATTR_TABLE(avg_pool2d, AVG_POOL2D_ATTRS);
PK_ATTR_TABLE(adaptive_pool, ADAPTIVE_POOL_ATTRS);
PK_ATTR_TABLE(softmax, SOFTMAX_ATTRS);
PK_ATTR_TABLE(layer_norm, LAYER_NORM_ATTRS);

static const loom_arg_def same_output[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "the shape of input" },
};
static const loom_arg_def one_input[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "any shape" },
};
static const loom_arg_def map_input[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, C, H, W]" },
};
static const loom_arg_def map_output[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, C, Ho, Wo]" },
};

/* ------------------------------------------------------------- conv2d */

static const char *const pad_modes[] = { "zeros", "reflect", "replicate", "circular", NULL };
static const char *const conv_acts[] = { "none", "relu", "silu", "gelu", NULL };
static const loom_attr_choices conv2d_choices[] = {
    { PK_ATTR(conv2d, padding_mode), pad_modes },
    { PK_ATTR(conv2d, activation), conv_acts },
};
static const loom_arg_def conv2d_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, Cin, H, W]" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[Cout, Cin/groups, kh, kw]" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[Cout]" },
    { .name = "residual", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[N, Cout, Ho, Wo], added before the activation: act(conv + bias + residual), a ResNet block's "
             "end (may be the output tensor itself)" },
};
static const loom_arg_def conv2d_outputs[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, Cout, Ho, Wo]" },
};

static void conv2d_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[CONV_INPUT], *w = call->inputs[CONV_WEIGHT];
    /* an estimate at stride 1 without padding is enough for ordering */
    double k = (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
    double out = (double)x->shape[0] * (double)w->shape[0] * (double)x->shape[2] * (double)x->shape[3];
    *flops = 2.0 * k * out;
    *bytes = 4.0 * ((double)loom_numel(x) + (double)loom_numel(w) + out);
}

PK_SCHEMA(vision_conv2d_schema, "vision.conv2d", 1,
          "F.conv2d (nn.Conv2d's padding_mode), grouped/depthwise/dilated, with a fused activation",
          PK_INPUTS(conv2d_inputs), PK_OUTPUTS(conv2d_outputs), PK_ATTRS(conv2d_attrs), PK_CHOICES(conv2d_choices),
          .cost = conv2d_cost);

/* --------------------------------------------------------- batch_norm */

static const loom_arg_def bn_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[N, C, ...], rank >= 2" },
    { .name = "running_mean", .dtypes = LAYERS_DTYPES, .ndim = 1, .doc = "[C]" },
    { .name = "running_var", .dtypes = LAYERS_DTYPES, .ndim = 1, .doc = "[C]" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] (gamma; 1)" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] (beta; 0)" },
};
PK_SCHEMA(vision_batch_norm_schema, "vision.batch_norm", 1,
          "F.batch_norm(training=False): (x - running_mean) / sqrt(running_var + eps) * weight + bias",
          PK_INPUTS(bn_inputs), PK_OUTPUTS(same_output), PK_ATTRS(batch_norm_attrs));

/* -------------------------------------------------------- activations */

PK_SCHEMA(vision_relu_schema, "vision.relu", 1, "F.relu: max(x, 0)", PK_INPUTS(one_input), PK_OUTPUTS(same_output));
PK_SCHEMA(vision_relu6_schema, "vision.relu6", 1, "F.relu6: min(max(x, 0), 6)", PK_INPUTS(one_input),
          PK_OUTPUTS(same_output));
PK_SCHEMA(vision_silu_schema, "vision.silu", 1, "F.silu: x * sigmoid(x)", PK_INPUTS(one_input),
          PK_OUTPUTS(same_output));
static const char *const gelu_modes[] = { "none", "tanh", NULL };
static const loom_attr_choices gelu_choices[] = { { PK_ATTR(gelu, approximate), gelu_modes } };
PK_SCHEMA(vision_gelu_schema, "vision.gelu", 1, "F.gelu: x * Phi(x) (erf), or its tanh approximation",
          PK_INPUTS(one_input), PK_OUTPUTS(same_output), PK_ATTRS(gelu_attrs), PK_CHOICES(gelu_choices));
PK_SCHEMA(vision_hardswish_schema, "vision.hardswish", 1, "F.hardswish: x * relu6(x + 3) / 6",
          PK_INPUTS(one_input), PK_OUTPUTS(same_output));
PK_SCHEMA(vision_sigmoid_schema, "vision.sigmoid", 1, "torch.sigmoid: 1 / (1 + exp(-x))", PK_INPUTS(one_input),
          PK_OUTPUTS(same_output));

/* -------------------------------------------------------------- pools */

PK_SCHEMA(vision_max_pool2d_schema, "vision.max_pool2d", 1, "F.max_pool2d (NaN propagates, as in torch)",
          PK_INPUTS(map_input), PK_OUTPUTS(map_output), PK_ATTRS(max_pool2d_attrs));
PK_SCHEMA(vision_avg_pool2d_schema, "vision.avg_pool2d", 1, "F.avg_pool2d", PK_INPUTS(map_input),
          PK_OUTPUTS(map_output), PK_ATTRS(avg_pool2d_attrs));
PK_SCHEMA(vision_adaptive_avg_pool2d_schema, "vision.adaptive_avg_pool2d", 1,
          "F.adaptive_avg_pool2d: bins [floor(i*H/Ho), ceil((i+1)*H/Ho))", PK_INPUTS(map_input),
          PK_OUTPUTS(map_output), PK_ATTRS(adaptive_pool_attrs));

/* ------------------------------------------- linear, softmax, layer_norm */

static const loom_arg_def linear_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[..., in_features], rank >= 1" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .ndim = 2, .doc = "[out_features, in_features]" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[out_features]" },
};
static const loom_arg_def linear_outputs[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[..., out_features]" },
};
PK_SCHEMA(vision_linear_schema, "vision.linear", 1, "F.linear: input @ weight^T + bias", PK_INPUTS(linear_inputs),
          PK_OUTPUTS(linear_outputs));
PK_SCHEMA(vision_softmax_schema, "vision.softmax", 1, "F.softmax(dim): exp(x - max) / sum, along dim",
          PK_INPUTS(one_input), PK_OUTPUTS(same_output), PK_ATTRS(softmax_attrs));
static const loom_arg_def ln_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[..., *normalized_shape]" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .ndim = -1,
      .doc = "normalized_shape: the trailing dims of input normalised together" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "the shape of weight (0 when absent)" },
};
PK_SCHEMA(vision_layer_norm_schema, "vision.layer_norm", 1,
          "F.layer_norm(normalized_shape = weight.shape): (x - mean) / sqrt(var + eps) * weight + bias",
          PK_INPUTS(ln_inputs), PK_OUTPUTS(same_output), PK_ATTRS(layer_norm_attrs));

PK_OPS_DEFINE(vision_layers_ops, VISION_LAYERS_OPS);
