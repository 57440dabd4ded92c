/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_kernels.h - the device kernels of text.bert_encoder on cuda
** (encoder_kernels.cu), called from encoder_cuda.c. Every launch is
** asynchronous on `stream`; each returns a cudaError_t as int (0 = queued).
** Row-major, f32; B sequences of L tokens, N = B * L rows of H values.
*/
#ifndef LOOM_TEXT_ENCODER_KERNELS_H
#define LOOM_TEXT_ENCODER_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x[r] = LayerNorm(word[ids[r]] + pos[r % L] + type[types[r]]) * g + b; types NULL = type 0 */
int enc_cu_embed(float *x, const int64_t *ids, const int64_t *types, const float *word, const float *pos,
                 const float *type, const float *g, const float *b, int64_t N, int64_t L, int64_t H, float eps,
                 void *stream);
/* x[r] = LayerNorm(x[r] + y[r] + bias) * g + b over rows of H */
int enc_cu_add_ln(float *x, const float *y, const float *bias, const float *g, const float *b, int64_t N, int64_t H,
                  float eps, void *stream);
/* x = act(x + bias) over N rows of n; act as enc_act (GELU erf, GELU tanh, ReLU) */
int enc_cu_bias_act(float *x, const float *bias, int64_t N, int64_t n, int act, void *stream);
/* qkv [N, 3H] + bias into q, v [B, heads, L, d] and kt [B, heads, d, L] */
int enc_cu_split_heads(const float *qkv, const float *bias, float *q, float *kt, float *v, int64_t B, int64_t L,
                       int64_t heads, int64_t d, void *stream);
/* s [B, heads, L, L] = softmax(scale * s) over the keys of mask [B, L] (NULL:
** all); a row with no key gets 1/L everywhere, as the -FLT_MAX additive mask */
int enc_cu_softmax(float *s, const int64_t *mask, float scale, int64_t B, int64_t heads, int64_t L, void *stream);
/* o [B, heads, L, d] into ctx [N, H] */
int enc_cu_merge_heads(const float *o, float *ctx, int64_t B, int64_t L, int64_t heads, int64_t d, void *stream);
/* out [B, H]: pooling 0 mean / 1 cls / 2 max over the unmasked rows of x
** [N, H] (mask NULL: all), then L2-normalised when normalize */
int enc_cu_pool(const float *x, const int64_t *mask, float *out, int64_t B, int64_t L, int64_t H, int pooling,
                int normalize, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_TEXT_ENCODER_KERNELS_H */
