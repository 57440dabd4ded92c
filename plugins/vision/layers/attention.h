/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention.h - the vision `attention` module: the transformer blocks of
** the classification models, each an op of its own (inference only):
**   vision.vit_encoder_block   torchvision's ViT EncoderBlock (ln_1,
**                              nn.MultiheadAttention with packed q,k,v,
**                              residual, ln_2, MLP with GELU, residual)
**   vision.swin_window_attention  torchvision's ShiftedWindowAttention
**                              (shifted_window_attention: padding to window
**                              multiples, the cyclic shift and its mask, the
**                              relative position bias), plus an optional
**                              residual added to its output
**   vision.swin_patch_merging  torchvision's PatchMerging (pad to even,
**                              2x2 gather, LayerNorm(4C), reduction 4C -> 2C)
** and the fused scaled-dot-product attention they share
** (attention_fused.c): softmax(q k^T * scale + bias + mask) v per head,
** cache-blocked over query rows, on the shared GEMM.
*/
#ifndef LOOM_VISION_ATTENTION_H
#define LOOM_VISION_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"
#include "layers.h"
#include "gemm/gemm.h"

#define VISION_ATTENTION_OPS(X)                                                                    \
    X(vision_vit_encoder_block_schema) X(vision_swin_window_attention_schema)                      \
    X(vision_swin_patch_merging_schema) X(vision_swin_mlp_schema)
PK_OPS_DECLARE(vision_attention_ops, VISION_ATTENTION_OPS);

/* vit_encoder_block's inputs, in torchvision's state_dict order. */
enum {
    VIT_X = 0, VIT_LN1_W, VIT_LN1_B, VIT_IN_W, VIT_IN_B, VIT_OUT_W, VIT_OUT_B, VIT_LN2_W, VIT_LN2_B,
    VIT_FC1_W, VIT_FC1_B, VIT_FC2_W, VIT_FC2_B, VIT_N_INPUTS,
    VIT_PACKED = VIT_N_INPUTS       /* optional 'packed_weights' after the weights */
};

/* vit_encoder_block's optional 'packed_weights' input: the four linears'
** weights (in_proj, out_proj, mlp.0, mlp.3) packed once for the GEMM's
** micro-kernel (pk_gemm_pack), so a model's calls skip repacking them. A u8
** [vit_block_packed_bytes(D, mlp_dim)] tensor, 64-byte aligned, that
** vit_block_pack filled from the same weights the call passes; it is tied
** to the micro-kernel in use when it was made (a header records it and the
** sizes, and the op refuses one that does not match). */
size_t vit_block_packed_bytes(int64_t d, int64_t mlp);
void vit_block_pack(void *dst, const float *in_w, const float *out_w, const float *fc1_w, const float *fc2_w,
                    int64_t d, int64_t mlp);

/* The four packed operands (in_proj or qkv, out_proj or proj, mlp.0, mlp.3)
** of a 'packed_weights' t, after checking that it is one vit_block_pack
** made for D d and mlp_dim mlp (mlp < 0: whatever mlp_dim it was made for)
** and the micro-kernel in use; the message names the input `name`. A Swin
** block's four linears have the same shapes (D = C, mlp_dim = 4C), so
** vision.swin_window_attention and vision.swin_mlp share one such pack. */
loom_status transformer_packed_get(const loom_tensor *t, const char *name, int64_t d, int64_t mlp,
                                   pk_gemm_packed out[4]);

#define VIT_BLOCK_ATTRS(A, op)                                                                     \
    A(op, num_heads, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,              \
      "attention heads: hidden_dim is a multiple of it", )                                         \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-6), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "ln_1 and ln_2's eps (torchvision's ViT: 1e-6)", )
PK_ATTR_ENUM(vit_block, VIT_BLOCK_ATTRS);

/* swin_window_attention's inputs. */
enum {
    SWA_X = 0, SWA_QKV_W, SWA_QKV_B, SWA_PROJ_W, SWA_PROJ_B, SWA_TABLE, SWA_INDEX, SWA_RESIDUAL, SWA_N_INPUTS,
    SWA_PACKED = SWA_N_INPUTS       /* optional 'packed_weights' (a vit_block_pack of the block) */
};

/* swin_mlp's inputs: x + mlp(norm2(x)) of a Swin block. */
enum {
    SMLP_X = 0, SMLP_NORM_W, SMLP_NORM_B, SMLP_FC1_W, SMLP_FC1_B, SMLP_FC2_W, SMLP_FC2_B, SMLP_N_INPUTS,
    SMLP_PACKED = SMLP_N_INPUTS     /* optional 'packed_weights' (a vit_block_pack of the block) */
};
#define SWIN_MLP_ATTRS(A, op)                                                                      \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "norm2's eps (torchvision's Swin: 1e-5)", )
PK_ATTR_ENUM(swin_mlp, SWIN_MLP_ATTRS);
#define SWIN_ATTN_ATTRS(A, op)                                                                     \
    A(op, window_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "(wh, ww) or one value for both", )                                                          \
    A(op, shift_size, INTS, LAYERS_INTS_DEFAULT(attention_zeros2, 2), LOOM_ATTR_NONNEG,            \
      "(sh, sw) or one value for both; each below its window; 0 on an axis whose padded size the " \
      "window covers, as torchvision does", )                                                      \
    A(op, num_heads, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,              \
      "attention heads: C is a multiple of it", )
PK_ATTR_ENUM(swin_attn, SWIN_ATTN_ATTRS);
#define SWIN_MERGE_ATTRS(A, op)                                                                    \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "the norm's eps (torchvision's Swin: 1e-5)", )
PK_ATTR_ENUM(swin_merge, SWIN_MERGE_ATTRS);
extern const int64_t attention_zeros2[2];

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

/* softmax of each of rows rows of len scores in place, AVX2+FMA
** (attention_softmax_avx2.c; x86 only, called when pk_cpu_avx2(PK_CPU_FMA)). */
void attention_softmax_rows_avx2(float *s, int64_t rows, int64_t len);

/* The GEMM of nn.Linear: c[m, n] = a[m, k] w[n, k]^T (+ bias[n]), act in
** the epilogue, then + residual[m, n] when not NULL (attention_cpu.c). */
loom_status attention_linear(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w, int64_t n,
                             const float *bias, int act, const float *residual, float *c);
/* The same with w taken from wp (packed, as transformer_packed_get gives
** it) when wp is not NULL. */
loom_status attention_linear_packed(loom_exec_ctx *ctx, const float *a, int64_t m, int64_t k, const float *w,
                                    const pk_gemm_packed *wp, int64_t n, const float *bias, int act,
                                    const float *residual, float *c);

/* y[rows, d] = layer_norm(x) over the last dim (eps), through the dispatched
** vision.layer_norm; bias may be NULL. */
loom_status attention_layer_norm(loom_exec_ctx *ctx, const float *x, const float *w, const float *b, float *y,
                                 int64_t rows, int64_t d, double eps);

/* Each input f32 (or i64 where i64_mask has its bit), contiguous, every
** dim below 2^31; the message names the argument. */
loom_status attention_check_inputs(const loom_call *call, uint32_t i64_mask);

/* One expected shape: input `input` is [s0] (ndim 1) or [s0, s1] (ndim 2). */
typedef struct attention_shape {
    int input;
    int32_t ndim;
    int64_t s0, s1;
} attention_shape;
/* Each of the n inputs of want that the call passes has its shape, else
** "'name' <its shape> must be [s0] (or [s0, s1]) for <context>". */
loom_status attention_check_shapes(const loom_call *call, const attention_shape *want, size_t n, const char *context);

/* The kernels of the Swin ops (window_attention_cpu.c, patch_merging_cpu.c, swin_mlp_cpu.c). */
loom_status swin_window_attention_run_cpu(loom_call *call);
loom_status swin_patch_merging_run_cpu(loom_call *call);
loom_status swin_mlp_run_cpu(loom_call *call);

extern const pk_module vision_attention_cpu;

#endif /* LOOM_VISION_ATTENTION_H */
