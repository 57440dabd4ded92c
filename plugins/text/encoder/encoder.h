/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder.h - what the files of the encoder module share: the
** text.bert_encoder class and method, the model state built from a
** safetensors checkpoint with Hugging Face's BertModel key names, and the
** row kernels (LayerNorm, bias + activation, masked softmax) in a portable
** and an AVX2+FMA version.
**
** The forward pass (encoder_forward.c) works on the tokens it needs only:
** with pooling, a sequence's padding (attention_mask 0) is never computed,
** because no unmasked token attends to it and the pooling reads unmasked
** tokens only. Every matrix product goes through the core (host->op_call):
** the dense layers through core.linear objects made at create (weights
** packed once; attribute dense=linear, the default) or core.matmul
** (dense=matmul: cpu or onednn as LOOM_BACKENDS says), the attention products
** through core.matmul on cpu. The cuda kernel
** (encoder_cuda.c, text-cuda.so) runs the dense [B, L] batch with the mask
** instead, on the device copy of the weights it keeps per device.
*/
#ifndef LOOM_TEXT_ENCODER_H
#define LOOM_TEXT_ENCODER_H

#include <stdint.h>

#include "text_pack.h"

#define TEXT_ENCODER_CLASS "text.bert_encoder"

/* Class attributes: the hyperparameters the weights do not carry, named as
** in Hugging Face's config.json. Without a default, so that create can tell
** an attribute given on the command line (which wins) from one to take
** from `config`, then from BertConfig's defaults. */
#define TEXT_ENCODER_CLASS_ATTRS(A, op)                                                          \
    A(op, config, STRING, LOOM_DEFAULT_NONE, 0,                                                  \
      "path of a Hugging Face config.json: num_attention_heads, layer_norm_eps and hidden_act "  \
      "from it, and the sizes checked against the weights", )                                   \
    A(op, num_attention_heads, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                       \
      "attention heads; must divide the hidden size (BertConfig default 12)", )                 \
    A(op, layer_norm_eps, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                          \
      "LayerNorm epsilon (BertConfig default 1e-12)", )                                          \
    A(op, hidden_act, STRING, LOOM_DEFAULT_NONE, 0,                                              \
      "feed-forward activation: gelu (erf), gelu_new or gelu_pytorch_tanh (tanh), relu "         \
      "(BertConfig default gelu)", )                                                            \
    A(op, dense, STRING, LOOM_DEFAULT_STRING("linear"), 0,                                       \
      "how the dense layers run on the CPU: linear (a core.linear object per layer, made at "    \
      "create: the weights are packed once for the GEMM) or matmul (core.matmul on every call, " \
      "on the backend LOOM_BACKENDS picks, oneDNN included, which packs the weights each call)", )
PK_ATTR_ENUM(text_encoder_class, TEXT_ENCODER_CLASS_ATTRS);

/* Method attributes. */
#define TEXT_ENCODER_ATTRS(A, op)                                                                \
    A(op, pooling, STRING, LOOM_DEFAULT_STRING("mean"), 0,                                       \
      "mean (over unmasked tokens, as sentence-transformers), cls (token 0), max (over unmasked " \
      "tokens) or none (last_hidden_state [B, L, hidden])", )                                    \
    A(op, normalize, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                              \
      "L2-normalise each pooled vector (torch.nn.functional.normalize, eps 1e-12)", )
PK_ATTR_ENUM(text_encoder, TEXT_ENCODER_ATTRS);

#define TEXT_ENCODER_OPS(X) X(text_encoder_schema)
PK_OPS_DECLARE(text_encoder_ops, TEXT_ENCODER_OPS);

extern const loom_object_class text_encoder_class;

typedef enum enc_act { ENC_ACT_GELU_ERF = 0, ENC_ACT_GELU_TANH, ENC_ACT_RELU } enc_act;
typedef enum enc_pooling { ENC_POOL_MEAN = 0, ENC_POOL_CLS, ENC_POOL_MAX, ENC_POOL_NONE } enc_pooling;

/* One transformer layer. The file's matrices [out, in] and vectors are
** borrowed from the weights mapping (the core keeps it for the object's
** life). dense=matmul adds W^T compact [in, out] copies, the right operand
** of x @ W^T, with q, k and v as one [H, 3H] matrix so one product makes
** all three; dense=linear leaves those NULL and adds core.linear objects. */
typedef struct enc_layer {
    const float *w_q, *w_k, *w_v;  /* [H, H] each: attention.self.{query,key,value}.weight */
    const float *w_o;              /* [H, H] attention.output.dense.weight */
    const float *w_i;              /* [I, H] intermediate.dense.weight */
    const float *w_out;            /* [H, I] output.dense.weight */
    float *wqkv;                   /* [H, 3H]: q | k | v columns */
    float *bqkv;                   /* [3H] */
    float *wo;                     /* [H, H] attention.output.dense^T */
    const float *bo, *ln1_g, *ln1_b;
    float *wi;                     /* [H, I] intermediate.dense^T */
    const float *bi;
    float *wout;                   /* [I, H] output.dense^T */
    const float *bout, *ln2_g, *ln2_b;
    /* dense=linear: core.linear objects over [3H, H] (wqkv_rows, owned), the
    ** file's attention.output.dense, intermediate.dense and output.dense
    ** weights (borrowed from the mapping, which outlives them); else NULL */
    loom_object *lin_qkv, *lin_o, *lin_i, *lin_out;
    float *wqkv_rows;              /* [3H, H]: query | key | value weights, rows */
} enc_layer;

/* The model; immutable after create, so calls may run concurrently. */
typedef struct enc_model {
    int64_t vocab, max_pos, n_types, hidden, inter, n_layers, heads, head_dim;
    float eps;
    enc_act act;
    const float *word, *pos, *type;      /* [V, H], [P, H], [T, H], in the weights file */
    const float *emb_g, *emb_b;          /* embeddings.LayerNorm */
    enc_layer *layers;
    const loom_op *matmul;               /* core.matmul */
    const loom_op *linear;               /* core.linear, with dense=linear */
} enc_model;

/* The W^T layout of layer L's matrices (see enc_layer) into wqkv [H, 3H],
** wo [H, H], wi [H, I] and wout [I, H], which the caller owns. */
void enc_layer_transposed(const enc_layer *L, int64_t H, int64_t I, float *wqkv, float *wo, float *wi, float *wout);

/* Row kernels of one ISA. n is the row length. */
typedef struct enc_rows {
    /* y = LayerNorm(x + r + s) * g + b; r and s may be NULL; y may be x */
    void (*layernorm)(float *y, const float *x, const float *r, const float *s, const float *g, const float *b,
                      int64_t n, float eps);
    /* x = act(x + bias) in place; bias may be NULL (no activation: act < 0) */
    void (*bias_act)(float *x, const float *bias, int64_t n, int act);
    /* x = softmax(scale * x) over the keys whose keep[j] is 1 (0 elsewhere);
    ** keep NULL = all keys. When no key is kept every key gets 1/n, as the
    ** additive -FLT_MAX mask of transformers gives. */
    void (*softmax)(float *x, int64_t n, float scale, const uint8_t *keep);
} enc_rows;

extern const enc_rows enc_rows_scalar;
extern const enc_rows enc_rows_avx2;
/* The kernels LOOM_CPU_MAX_ISA allows. */
const enc_rows *enc_rows_current(void);

/* Fill the hyperparameters of m from the class attributes and the config
** file; sizes the weights give (hidden, vocab...) must already be in m and
** are checked against the file. */
loom_status enc_config_apply(const loom_object_args *args, enc_model *m);

/* What every kernel shares (encoder_checks.c): the pooling attribute; the
** inputs' shapes against each other and the model (B and L out); the
** values of n = B * L ids, mask and types (host memory; mk, ty may be NULL). */
enc_pooling enc_pooling_of(const char *s);
loom_status enc_check_shapes(const loom_call *call, const enc_model *m, int64_t *B, int64_t *L);
loom_status enc_check_values(const enc_model *m, int64_t n, int64_t L, const int64_t *id, const int64_t *mk,
                             const int64_t *ty);
void enc_forward_cost(const loom_call *call, double *flops, double *bytes);

/* The method's cpu kernel (encoder_forward.c). */
loom_status enc_forward_run(loom_call *call);

#endif /* LOOM_TEXT_ENCODER_H */
