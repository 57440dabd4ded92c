/* SPDX-License-Identifier: BSD-3-Clause */
/*
** swin.h - what the files of the Swin classes share (the `swin` module of
** vision.so): torchvision/models/swin_transformer.py's SwinTransformer (V1)
** as object classes vision.swin_t, swin_s, swin_b and vision.swin_transformer
** (the architecture from attributes, as SwinTransformer(...) takes it), each
** with a method op of its name. The forward is a sequence of dispatched
** ops: vision.conv2d and vision.layer_norm (features.0), per block
** vision.layer_norm, vision.swin_window_attention (the residual fused),
** vision.swin_mlp (norm2, mlp.0 with GELU, mlp.3 with the residual; both
** ops reading the block's four linears packed once per model); between
** stages vision.swin_patch_merging; then vision.layer_norm (norm), the mean
** over tokens (avgpool) and vision.linear (head). Stochastic depth is the
** identity at inference.
*/
#ifndef LOOM_VISION_MODELS_SWIN_H
#define LOOM_VISION_MODELS_SWIN_H

#include <pthread.h>
#include <stdint.h>

#include "transformer_model.h"
#include "vision_pack.h"

#define VISION_SWIN_OPS(X)                                                                         \
    X(vision_swin_t_schema) X(vision_swin_s_schema) X(vision_swin_b_schema) X(vision_swin_transformer_schema)
PK_OPS_DECLARE(vision_swin_ops, VISION_SWIN_OPS);

#define SWIN_MAX_STAGES 8

/* One SwinTransformerBlock's tensors, borrowed from the mapping. */
typedef struct swin_block {
    const loom_tensor *norm1_w, *norm1_b, *table, *index, *qkv_w, *qkv_b, *proj_w, *proj_b;
    const loom_tensor *norm2_w, *norm2_b, *fc1_w, *fc1_b, *fc2_w, *fc2_b;
    int64_t dim, heads, shift_h, shift_w;
    size_t packed_off;              /* its vit_block_pack in swin_model.packed */
    int64_t packed_shape[1];        /* [bytes] of it */
} swin_block;

typedef struct swin_merge {
    const loom_tensor *norm_w, *norm_b, *reduction_w;
} swin_merge;

typedef struct swin_plan {
    int64_t n, h, w;                /* input [n, 3, h, w]; n = 0: none yet */
    int64_t th, tw;                 /* the token map after features.0 */
    float *x[2], *a;                /* tokens (ping-pong), normed tokens */
    float *pooled;                  /* [n, features] */
} swin_plan;

typedef struct swin_model {
    transformer_base base;          /* cls, classes, num_params, entry, lock */
    int64_t patch_h, patch_w, embed, stages, depths[SWIN_MAX_STAGES], heads[SWIN_MAX_STAGES];
    int64_t window_h, window_w, features;
    const loom_tensor *stem_w, *stem_b, *stem_norm_w, *stem_norm_b, *norm_w, *norm_b, *head_w, *head_b;
    swin_block *blocks;
    int64_t n_blocks;
    swin_merge merges[SWIN_MAX_STAGES];
    const loom_op *conv2d, *layer_norm, *attention, *mlp, *merging, *linear;
    /* each block's qkv, proj, mlp.0 and mlp.3 weights packed for the GEMM's
    ** micro-kernel (vit_block_pack with D = dim: the 'packed_weights' of
    ** its attention and MLP), made at the first forward and again only if
    ** the micro-kernel changed; blocks at 64-byte aligned packed_off */
    char *packed;
    int packed_isa;                 /* pk_gemm_current_isa() it was made for */
    swin_plan plan;
} swin_model;

extern const loom_object_class *const vision_swin_classes[4];
extern const pk_module vision_swin_cpu;

#endif
