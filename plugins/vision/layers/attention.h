/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention.h - the vision `attention` module: the transformer blocks of
** the classification models, each an op of its own (inference only):
**   vision.vit_encoder_block   torchvision's ViT EncoderBlock (ln_1,
**                              nn.MultiheadAttention with packed q,k,v,
**                              residual, ln_2, MLP with GELU, residual)
** and the fused scaled-dot-product attention they share
** (attention_fused.c): softmax(q k^T * scale + bias + mask) v per head,
** cache-blocked over query rows, on the shared GEMM.
*/
#ifndef LOOM_VISION_ATTENTION_H
#define LOOM_VISION_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

#define VISION_ATTENTION_OPS(X) X(vision_vit_encoder_block_schema)
PK_OPS_DECLARE(vision_attention_ops, VISION_ATTENTION_OPS);

/* vit_encoder_block's inputs, in torchvision's state_dict order. */
enum {
    VIT_X = 0, VIT_LN1_W, VIT_LN1_B, VIT_IN_W, VIT_IN_B, VIT_OUT_W, VIT_OUT_B, VIT_LN2_W, VIT_LN2_B,
    VIT_FC1_W, VIT_FC1_B, VIT_FC2_W, VIT_FC2_B, VIT_N_INPUTS
};

#define VIT_BLOCK_ATTRS(A, op)                                                                     \
    A(op, num_heads, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,              \
      "attention heads: hidden_dim is a multiple of it", )                                         \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-6), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "ln_1 and ln_2's eps (torchvision's ViT: 1e-6)", )
PK_ATTR_ENUM(vit_block, VIT_BLOCK_ATTRS);

/* One multi-head attention over `units` independent sequences (images, or
** Swin's windows) of `len` tokens. Unit u, head h reads its query, key and
** value rows t at q/k/v + u * unit_stride + t * ld + h * head_dim and writes
** row t of its output at out + u * out_unit_stride + t * ld_out +
** h * head_dim:
**   out = softmax(scale * (q k^T) + bias[h] + mask[u % mask_units]) v
** bias (NULL: none) is [heads, len, len], mask (NULL: none) is
** [mask_units, len, len]. scale multiplies the product q k^T in f32 as
** ATen's CPU flash attention does (pass 1 when q is pre-scaled, as Swin's
** q * head_dim^-0.5). The softmax is f32, max-subtracted. Runs threaded on
** ctx over (unit, head, block of query rows); each task keeps its block's
** scores in a per-thread buffer. out must not overlap q, k or v. */
typedef struct attention_problem {
    int64_t units, heads, len, head_dim;
    const float *q, *k, *v;
    int64_t ld, unit_stride;
    float *out;
    int64_t ld_out, out_unit_stride;
    float scale;
    const float *bias;
    const float *mask;
    int64_t mask_units;
} attention_problem;

loom_status attention_run(loom_exec_ctx *ctx, const attention_problem *p);

extern const pk_module vision_attention_cpu;

#endif /* LOOM_VISION_ATTENTION_H */
