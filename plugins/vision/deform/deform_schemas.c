/*
** deform_schemas.c - the definitions of the deform module's ops, compiled
** into vision.so and vision-cuda.so alike. Names follow torchvision.ops:
**   vision.deform_conv2d          torchvision.ops.deform_conv2d
**   vision.deform_conv2d_backward torch.ops.torchvision._deform_conv2d_backward
**   vision.drop_block2d/3d        torchvision.ops.drop_block2d/3d
**   vision.stochastic_depth       torchvision.ops.stochastic_depth
** groups and offset_groups are inferred from the shapes (groups =
** Cin / weight.shape[1], offset_groups = offset.shape[1] / (2*kh*kw)) and
** use_mask from the presence of `mask`, exactly as the Python wrapper does.
**
** The random ops take a `seed` (same seed, same output, on every backend)
** and an optional `noise` input: the Bernoulli draw itself, in the shape
** torchvision draws it. With `noise` the op is deterministic given the draw,
** which lets a test feed torchvision's own draw and compare exactly.
*/
#include "deform.h"

static const int64_t ones2[2] = { 1, 1 };
static const int64_t zeros2[2] = { 0, 0 };

#define INTS_DEFAULT(arr) { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = (arr) } }

/* Value constraints (checked by the core): stride and dilation > 0, padding >= 0. */
static const loom_attr_def conv_attrs[] = {
    { .name = "stride", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_POSITIVE, .dflt = INTS_DEFAULT(ones2),
      .doc = "(sh, sw) or one value for both; > 0" },
    { .name = "padding", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_NONNEG, .dflt = INTS_DEFAULT(zeros2),
      .doc = "(ph, pw) or one value for both; >= 0 (zeros around the image)" },
    { .name = "dilation", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_POSITIVE, .dflt = INTS_DEFAULT(ones2),
      .doc = "(dh, dw) or one value for both; > 0" },
};

static const loom_arg_def conv_inputs[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, Cin, H, W]" },
    { .name = "offset", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[N, 2*offset_groups*kh*kw, Ho, Wo]: (dy, dx) per offset group and kernel tap" },
    { .name = "weight", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[Cout, Cin/groups, kh, kw]" },
    { .name = "bias", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[Cout]" },
    { .name = "mask", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[N, offset_groups*kh*kw, Ho, Wo]: modulation (DCNv2); absent = DCNv1" },
};
static const loom_arg_def conv_outputs[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, Cout, Ho, Wo]" },
};

const loom_op_schema vision_deform_conv2d_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "vision.deform_conv2d",
    .version = 1,
    .doc = "torchvision.ops.deform_conv2d: deformable convolution v1/v2 with zero-padded bilinear sampling",
    .n_inputs = 5, .inputs = conv_inputs,
    .n_outputs = 1, .outputs = conv_outputs,
    .n_attrs = 3, .attrs = conv_attrs,
    .cost = deform_conv_cost,
};

static const loom_arg_def back_inputs[] = {
    { .name = "grad", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, Cout, Ho, Wo]: gradient of the output" },
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, Cin, H, W]" },
    { .name = "weight", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[Cout, Cin/groups, kh, kw]" },
    { .name = "offset", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, 2*offset_groups*kh*kw, Ho, Wo]" },
    { .name = "mask", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[N, offset_groups*kh*kw, Ho, Wo]; absent = use_mask false" },
    { .name = "bias", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[Cout]; only checked (grad_bias does not depend on it)" },
};
static const loom_arg_def back_outputs[] = {
    { .name = "grad_input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, Cin, H, W]" },
    { .name = "grad_weight", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[Cout, Cin/groups, kh, kw]" },
    { .name = "grad_offset", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, 2*offset_groups*kh*kw, Ho, Wo]" },
    { .name = "grad_mask", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[N, offset_groups*kh*kw, Ho, Wo]; [N, 0, Ho, Wo] without a mask" },
    { .name = "grad_bias", .dtypes = VISION_FLOATS, .ndim = 1, .doc = "[Cout]: grad summed over N, Ho, Wo" },
};

const loom_op_schema vision_deform_conv2d_backward_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "vision.deform_conv2d_backward",
    .version = 1,
    .doc = "torchvision::_deform_conv2d_backward: gradients of deform_conv2d w.r.t. every input",
    .n_inputs = 6, .inputs = back_inputs,
    .n_outputs = 5, .outputs = back_outputs,
    .n_attrs = 3, .attrs = conv_attrs,
    .cost = deform_conv_backward_cost,
};

/* Value constraints (checked by the core; p <= 1 is the kernels' check):
** probabilities finite and >= 0, block_size > 0, eps finite and >= 0; the
** seed is any integer. */
static const loom_attr_def drop_block_attrs[] = {
    { .name = "p", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_NONE, .doc = "probability of an element to be dropped, in [0, 1]" },
    { .name = "block_size", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,
      .dflt = LOOM_DEFAULT_NONE, .doc = "side of the dropped blocks; min(block_size, sizes) must be odd" },
    { .name = "eps", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_FLOAT(1e-6),
      .doc = "added to the kept count in the normalisation" },
    { .name = "training", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(1),
      .doc = "false: identity" },
    { .name = "seed", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(0),
      .doc = "seed of the Bernoulli draw (counter-based: same seed, same output on every backend)" },
};

static const loom_arg_def drop_block2d_inputs[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, C, H, W]" },
    { .name = "noise", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[N, C, H-bs+1, W-bs+1]: the Bernoulli(gamma) draw to use instead of drawing one" },
};
static const loom_arg_def drop_block3d_inputs[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 5, .doc = "[N, C, D, H, W]" },
    { .name = "noise", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = 5,
      .doc = "[N, C, D-bs+1, H-bs+1, W-bs+1]: the Bernoulli(gamma) draw to use instead of drawing one" },
};
static const loom_arg_def same_output[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "shape and dtype of input" },
};

const loom_op_schema vision_drop_block2d_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "vision.drop_block2d",
    .version = 1,
    .doc = "torchvision.ops.drop_block2d: zero bs x bs blocks around Bernoulli(gamma) seeds, rescale",
    .n_inputs = 2, .inputs = drop_block2d_inputs,
    .n_outputs = 1, .outputs = same_output,
    .n_attrs = 5, .attrs = drop_block_attrs,
};

const loom_op_schema vision_drop_block3d_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "vision.drop_block3d",
    .version = 1,
    .doc = "torchvision.ops.drop_block3d: zero bs^3 blocks around Bernoulli(gamma) seeds, rescale",
    .n_inputs = 2, .inputs = drop_block3d_inputs,
    .n_outputs = 1, .outputs = same_output,
    .n_attrs = 5, .attrs = drop_block_attrs,
};

static const loom_arg_def stochastic_depth_inputs[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[N, ...], rank >= 1" },
    { .name = "noise", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "the Bernoulli(1-p) draw: [N, 1, ...] for mode row, [1, 1, ...] for mode batch" },
};
static const loom_attr_def stochastic_depth_attrs[] = {
    { .name = "p", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_NONE,
      .doc = "probability of a row (or the batch) to be zeroed, in [0, 1]" },
    { .name = "mode", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "\"row\" or \"batch\"" },
    { .name = "training", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(1), .doc = "false: identity" },
    { .name = "seed", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(0),
      .doc = "seed of the Bernoulli draw (counter-based: same seed, same output on every backend)" },
};

const loom_op_schema vision_stochastic_depth_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "vision.stochastic_depth",
    .version = 1,
    .doc = "torchvision.ops.stochastic_depth: zero whole rows (or the batch), scale survivors by 1/(1-p)",
    .n_inputs = 2, .inputs = stochastic_depth_inputs,
    .n_outputs = 1, .outputs = same_output,
    .n_attrs = 4, .attrs = stochastic_depth_attrs,
};

const loom_op_schema *const vision_deform_ops[] = {
    &vision_deform_conv2d_schema, &vision_deform_conv2d_backward_schema, &vision_drop_block2d_schema,
    &vision_drop_block3d_schema, &vision_stochastic_depth_schema,
};
const size_t vision_deform_n_ops = sizeof vision_deform_ops / sizeof vision_deform_ops[0];
