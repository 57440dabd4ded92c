/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention_schemas.c - the definitions of the attention module's ops
** (attention.h lists them), with torchvision's module and key names.
*/
#include "attention.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

PK_ATTR_TABLE(vit_block, VIT_BLOCK_ATTRS);

static const loom_arg_def vit_block_inputs[] = {
    { .name = "input", .dtypes = F32, .ndim = 3, .doc = "[N, S, D]: batch, tokens, hidden_dim" },
    { .name = "ln_1_weight", .dtypes = F32, .ndim = 1, .doc = "[D] ln_1.weight" },
    { .name = "ln_1_bias", .dtypes = F32, .ndim = 1, .doc = "[D] ln_1.bias" },
    { .name = "in_proj_weight", .dtypes = F32, .ndim = 2,
      .doc = "[3D, D] self_attention.in_proj_weight: q, k, v packed (nn.MultiheadAttention)" },
    { .name = "in_proj_bias", .dtypes = F32, .ndim = 1, .doc = "[3D] self_attention.in_proj_bias" },
    { .name = "out_proj_weight", .dtypes = F32, .ndim = 2, .doc = "[D, D] self_attention.out_proj.weight" },
    { .name = "out_proj_bias", .dtypes = F32, .ndim = 1, .doc = "[D] self_attention.out_proj.bias" },
    { .name = "ln_2_weight", .dtypes = F32, .ndim = 1, .doc = "[D] ln_2.weight" },
    { .name = "ln_2_bias", .dtypes = F32, .ndim = 1, .doc = "[D] ln_2.bias" },
    { .name = "mlp_0_weight", .dtypes = F32, .ndim = 2, .doc = "[mlp_dim, D] mlp.0.weight" },
    { .name = "mlp_0_bias", .dtypes = F32, .ndim = 1, .doc = "[mlp_dim] mlp.0.bias" },
    { .name = "mlp_3_weight", .dtypes = F32, .ndim = 2, .doc = "[D, mlp_dim] mlp.3.weight" },
    { .name = "mlp_3_bias", .dtypes = F32, .ndim = 1, .doc = "[D] mlp.3.bias" },
    { .name = "packed_weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "the four weights above packed once for the GEMM's micro-kernel (a ViT model makes it at its "
             "first forward); absent: packed on every call" },
};
static const loom_arg_def vit_block_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = 3, .doc = "[N, S, D] (may be the input tensor itself)" },
};

static void vit_block_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[VIT_X], *fc1 = call->inputs[VIT_FC1_W];
    double n = (double)x->shape[0], s = (double)x->shape[1], d = (double)x->shape[2];
    double m = (double)fc1->shape[0];
    /* q,k,v and out projections, the MLP, and Q K^T plus P V */
    *flops = 2.0 * n * s * (4.0 * d * d + 2.0 * d * m) + 4.0 * n * s * s * d;
    *bytes = 4.0 * (2.0 * n * s * d + 4.0 * d * d + 2.0 * d * m);
}

PK_SCHEMA(vision_vit_encoder_block_schema, "vision.vit_encoder_block", 1,
          "torchvision ViT EncoderBlock (eval): x + self_attention(ln_1(x)), then + MLP(ln_2(.)) with GELU; "
          "fused attention (softmax in f32, scale 1/sqrt(head_dim) as SDPA)",
          PK_INPUTS(vit_block_inputs), PK_OUTPUTS(vit_block_outputs), PK_ATTRS(vit_block_attrs),
          .cost = vit_block_cost);

/* --------------------------------------------------------------- Swin */

const int64_t attention_zeros2[2] = { 0, 0 };
PK_ATTR_TABLE(swin_attn, SWIN_ATTN_ATTRS);
PK_ATTR_TABLE(swin_merge, SWIN_MERGE_ATTRS);
PK_ATTR_TABLE(swin_mlp, SWIN_MLP_ATTRS);

static const loom_arg_def swin_attn_inputs[] = {
    { .name = "input", .dtypes = F32, .ndim = 4, .doc = "[B, H, W, C] (channels last, as torchvision's Swin)" },
    { .name = "qkv_weight", .dtypes = F32, .ndim = 2, .doc = "[3C, C] attn.qkv.weight" },
    { .name = "qkv_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[3C] attn.qkv.bias" },
    { .name = "proj_weight", .dtypes = F32, .ndim = 2, .doc = "[C, C] attn.proj.weight" },
    { .name = "proj_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] attn.proj.bias" },
    { .name = "relative_position_bias_table", .dtypes = F32, .ndim = 2,
      .doc = "[(2 wh - 1) (2 ww - 1), num_heads] attn.relative_position_bias_table" },
    { .name = "relative_position_index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[(wh ww)^2] attn.relative_position_index (the buffer): rows of the table" },
    { .name = "residual", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 4,
      .doc = "[B, H, W, C] added to the result (a Swin block's x + attn(norm1(x)); may be the output)" },
    { .name = "packed_weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "the block's qkv, proj, mlp.0 and mlp.3 weights packed once for the GEMM's micro-kernel "
             "(vit_block_pack with D = C; a Swin model makes it at its first forward, and vision.swin_mlp takes "
             "the same one); qkv and proj are read from it; refused if made for other sizes or another "
             "micro-kernel; absent: packed on every call" },
};
static const loom_arg_def swin_attn_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = 4, .doc = "[B, H, W, C] (may be the input or the residual tensor)" },
};
PK_SCHEMA(vision_swin_window_attention_schema, "vision.swin_window_attention", 1,
          "torchvision ShiftedWindowAttention (eval): windows padded to multiples, cyclic shift with its -100 mask, "
          "relative position bias, fused attention (softmax in f32)",
          PK_INPUTS(swin_attn_inputs), PK_OUTPUTS(swin_attn_outputs), PK_ATTRS(swin_attn_attrs));

static const loom_arg_def swin_merge_inputs[] = {
    { .name = "input", .dtypes = F32, .ndim = 4, .doc = "[B, H, W, C]" },
    { .name = "norm_weight", .dtypes = F32, .ndim = 1, .doc = "[4C] norm.weight" },
    { .name = "norm_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[4C] norm.bias" },
    { .name = "reduction_weight", .dtypes = F32, .ndim = 2, .doc = "[2C, 4C] reduction.weight (no bias)" },
};
static const loom_arg_def swin_merge_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = 4, .doc = "[B, ceil(H/2), ceil(W/2), 2C]" },
};
PK_SCHEMA(vision_swin_patch_merging_schema, "vision.swin_patch_merging", 1,
          "torchvision PatchMerging: pad to even, cat of the 2x2 neighbours, LayerNorm(4C), Linear(4C, 2C)",
          PK_INPUTS(swin_merge_inputs), PK_OUTPUTS(swin_merge_outputs), PK_ATTRS(swin_merge_attrs));

static const loom_arg_def swin_mlp_inputs[] = {
    { .name = "input", .dtypes = F32, .ndim = -1, .doc = "[..., C] (a Swin block's tokens [B, H, W, C])" },
    { .name = "norm2_weight", .dtypes = F32, .ndim = 1, .doc = "[C] norm2.weight" },
    { .name = "norm2_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] norm2.bias" },
    { .name = "mlp_0_weight", .dtypes = F32, .ndim = 2, .doc = "[hidden, C] mlp.0.weight (hidden = 4C in Swin)" },
    { .name = "mlp_0_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[hidden] mlp.0.bias" },
    { .name = "mlp_3_weight", .dtypes = F32, .ndim = 2, .doc = "[C, hidden] mlp.3.weight" },
    { .name = "mlp_3_bias", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] mlp.3.bias" },
    { .name = "packed_weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "the block's vit_block_pack (D = C, mlp_dim = hidden), the one vision.swin_window_attention takes; "
             "mlp.0 and mlp.3 are read from it; refused if made for other sizes or another micro-kernel; absent: "
             "packed on every call" },
};
static const loom_arg_def swin_mlp_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = -1, .doc = "the input's shape (may be the input tensor itself)" },
};
PK_SCHEMA(vision_swin_mlp_schema, "vision.swin_mlp", 1,
          "torchvision SwinTransformerBlock's x + mlp(norm2(x)) (eval): LayerNorm, Linear, GELU (erf), Linear; GELU "
          "and the residual in the GEMM's epilogues",
          PK_INPUTS(swin_mlp_inputs), PK_OUTPUTS(swin_mlp_outputs), PK_ATTRS(swin_mlp_attrs));

PK_OPS_DEFINE(vision_attention_ops, VISION_ATTENTION_OPS);
