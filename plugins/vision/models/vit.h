/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vit.h - what the files of the ViT classes share (the `vit` module of
** vision.so): torchvision/models/vision_transformer.py's VisionTransformer
** as object classes vision.vit_b_16, vit_b_32, vit_l_16, vit_h_14 and
** vision.vision_transformer (the architecture from attributes, as
** VisionTransformer(...) takes it), each with a method op of its name.
** The forward is a sequence of dispatched ops: vision.conv2d (conv_proj),
** vision.vit_encoder_block per layer, vision.layer_norm (encoder.ln) and
** vision.linear (heads).
*/
#ifndef LOOM_VISION_MODELS_VIT_H
#define LOOM_VISION_MODELS_VIT_H

#include <pthread.h>
#include <stdint.h>

#include "transformer_model.h"
#include "vision_pack.h"

#define VISION_VIT_OPS(X)                                                                          \
    X(vision_vit_b_16_schema) X(vision_vit_b_32_schema) X(vision_vit_l_16_schema)                  \
    X(vision_vit_h_14_schema) X(vision_vision_transformer_schema)
PK_OPS_DECLARE(vision_vit_ops, VISION_VIT_OPS);

/* The tensors of one EncoderBlock, in vision.vit_encoder_block's input
** order after its input (ln_1 ... mlp.3), borrowed from the mapping. */
#define VIT_BLOCK_TENSORS 12

typedef struct vit_plan {
    int64_t n, size;                /* input [n, 3, size, size]; n = 0: none yet */
    int64_t grid, seq;              /* size / patch, grid^2 + 1 */
    float *patches;                 /* conv_proj's output [n, D, grid, grid] */
    float *tokens;                  /* [n, seq, D]: the encoder's state, updated in place */
    float *pos;                     /* [seq, D]: the pos embedding at this grid (interpolated or the file's) */
    float *head_in, *head_mid;      /* [n, D] class rows, then encoder.ln's; [n, rep] pre_logits */
} vit_plan;

typedef struct vit_model {
    transformer_base base;          /* cls, classes, num_params, entry, lock */
    int64_t patch, layers, heads, hidden, mlp;
    int64_t grid0;                  /* the file's grid: pos_embedding is [1, grid0^2 + 1, hidden] */
    int64_t rep;                    /* pre_logits rows (0: none) */
    const loom_tensor *conv_w, *conv_b, *class_token, *pos_embedding;
    const loom_tensor *(*blocks)[VIT_BLOCK_TENSORS];
    const loom_tensor *ln_w, *ln_b, *head_w, *head_b, *pre_w, *pre_b;
    const loom_op *conv2d, *block, *layer_norm, *linear;
    vit_plan plan;
    /* each block's four linear weights packed for the GEMM's micro-kernel
    ** (vit_block_pack; the blocks' 'packed_weights'), made at the first
    ** forward and again when the kernel in use changes: `layers` pieces of
    ** packed_bytes, 64-byte aligned */
    char *packed;
    size_t packed_bytes;
    int packed_isa;                 /* pk_gemm_current_isa() it was made for */
    int64_t packed_shape[1];
} vit_model;

/* torchvision's interpolate_embeddings on the grid part of pos [1 + g0^2, d]
** into out [1 + g^2, d]: F.interpolate(mode="bicubic", align_corners=True)
** as ATen's CPU kernel computes it (f32, A = -0.75, clamped taps); the
** class token's row is copied. */
void vit_interpolate_pos(const float *pos, int64_t g0, int64_t g, int64_t d, float *out);

extern const loom_object_class *const vision_vit_classes[5];
extern const pk_module vision_vit_cpu;

#endif
