/* SPDX-License-Identifier: BSD-3-Clause */
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

/* the defaults of the conv attributes (DEFORM_CONV_ATTRS) */
static const int64_t deform_ones2[2] = { 1, 1 };
static const int64_t deform_zeros2[2] = { 0, 0 };

PK_ATTR_TABLE(deform_conv2d, DEFORM_CONV_ATTRS);
PK_ATTR_TABLE(drop_block, DROP_BLOCK_ATTRS);
PK_ATTR_TABLE(stochastic_depth, STOCHASTIC_DEPTH_ATTRS);

/* ------------------------------------------------------- deform_conv2d */

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

PK_SCHEMA(vision_deform_conv2d_schema, "vision.deform_conv2d", 1,
          "torchvision.ops.deform_conv2d: deformable convolution v1/v2 with zero-padded bilinear sampling",
          PK_INPUTS(conv_inputs), PK_OUTPUTS(conv_outputs), PK_ATTRS(deform_conv2d_attrs),
          .cost = deform_conv_cost);

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

PK_SCHEMA(vision_deform_conv2d_backward_schema, "vision.deform_conv2d_backward", 1,
          "torchvision::_deform_conv2d_backward: gradients of deform_conv2d w.r.t. every input",
          PK_INPUTS(back_inputs), PK_OUTPUTS(back_outputs), PK_ATTRS(deform_conv2d_attrs),
          .cost = deform_conv_backward_cost);

/* ------------------------------------------- drop_block, stochastic_depth */

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

PK_SCHEMA(vision_drop_block2d_schema, "vision.drop_block2d", 1,
          "torchvision.ops.drop_block2d: zero bs x bs blocks around Bernoulli(gamma) seeds, rescale",
          PK_INPUTS(drop_block2d_inputs), PK_OUTPUTS(same_output), PK_ATTRS(drop_block_attrs));
PK_SCHEMA(vision_drop_block3d_schema, "vision.drop_block3d", 1,
          "torchvision.ops.drop_block3d: zero bs^3 blocks around Bernoulli(gamma) seeds, rescale",
          PK_INPUTS(drop_block3d_inputs), PK_OUTPUTS(same_output), PK_ATTRS(drop_block_attrs));

static const loom_arg_def stochastic_depth_inputs[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[N, ...], rank >= 1" },
    { .name = "noise", .dtypes = VISION_FLOATS, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "the Bernoulli(1-p) draw: [N, 1, ...] for mode row, [1, 1, ...] for mode batch" },
};

PK_SCHEMA(vision_stochastic_depth_schema, "vision.stochastic_depth", 1,
          "torchvision.ops.stochastic_depth: zero whole rows (or the batch), scale survivors by 1/(1-p)",
          PK_INPUTS(stochastic_depth_inputs), PK_OUTPUTS(same_output), PK_ATTRS(stochastic_depth_attrs));

PK_OPS_DEFINE(vision_deform_ops, VISION_DEFORM_OPS);
