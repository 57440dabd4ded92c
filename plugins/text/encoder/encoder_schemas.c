/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_schemas.c - the definition of text.bert_encoder, the method of
** the text.bert_encoder object class. Arguments are named as Hugging Face's
** BertModel.forward names them.
*/
#include "encoder.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def encoder_inputs[] = {
    { .name = "input_ids", .dtypes = I64, .ndim = 2, .doc = "i64 [B, L] token ids in [0, vocab_size)" },
    { .name = "attention_mask", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "i64 [B, L] of 0/1: 0 marks padding (absent: all 1)" },
    { .name = "token_type_ids", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "i64 [B, L] segment ids in [0, type_vocab_size) (absent: all 0)" },
};
static const loom_arg_def encoder_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "f32 [B, hidden] pooled, or [B, L, hidden] with pooling none" },
};
PK_ATTR_TABLE(text_encoder, TEXT_ENCODER_ATTRS);

static const char *const pooling_values[] = { "mean", "cls", "max", "none", NULL };
static const loom_attr_choices encoder_choices[] = {
    { .attr = PK_ATTR(text_encoder, pooling), .values = pooling_values },
};

PK_SCHEMA(text_encoder_schema, TEXT_ENCODER_CLASS, 1,
          "BERT encoder forward (Hugging Face BertModel) with mean, cls or max pooling and optional L2 "
          "normalisation: sentence embeddings [B, hidden], or last_hidden_state [B, L, hidden]",
          PK_INPUTS(encoder_inputs), PK_OUTPUTS(encoder_outputs), PK_ATTRS(text_encoder_attrs),
          PK_CHOICES(encoder_choices), .object_class = TEXT_ENCODER_CLASS, .cost = enc_forward_cost);

PK_OPS_DEFINE(text_encoder_ops, TEXT_ENCODER_OPS);
