/* SPDX-License-Identifier: BSD-3-Clause */
/*
** collections_schemas.c - the method of rec.embedding_bag_collection:
** EmbeddingBagCollection.forward(features: KeyedJaggedTensor) -> KeyedTensor.
** Its inputs are the KJT of docs/rec-kjt.md.
*/
#include "collections.h"
#include "../kjt/kjt.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def ebc_inputs[] = { REC_EBC_INPUT_DEFS };

static const loom_arg_def ebc_outputs[] = {
    { .name = "values", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "KeyedTensor values [B, sum D]: each feature's pooled embedding, in table then feature order" },
    { .name = "keys", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the KeyedTensor's keys (the embedding names)" },
    { .name = "keys_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
    { .name = "length_per_key", .dtypes = I64, .ndim = 1, .doc = "[F] D of each key" },
    { .name = "offset_per_key", .dtypes = I64, .ndim = 1, .doc = "[F+1] its first column" },
};

#define REC_EBC_FORWARD_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_TABLE(rec_ebc_forward, REC_EBC_FORWARD_ATTRS);

PK_SCHEMA(rec_ebc_forward_schema, "rec.embedding_bag_collection", 1,
          "EmbeddingBagCollection.forward: a KJT's features pooled through their tables (fbgemm.tbe) into a "
          "KeyedTensor [B, sum D]; VBE rows expanded through inverse_indices",
          PK_INPUTS(ebc_inputs), PK_OUTPUTS(ebc_outputs), PK_ATTRS(rec_ebc_forward_attrs),
          .object_class = REC_EBC_CLASS);

static const loom_arg_def ec_outputs[] = {
    { .name = "values", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_JAGGED, .ndim = 2,
      .doc = "[sum L, D]: row f holds JaggedTensor f's values (one embedding per id), in table then feature order" },
    { .name = "values_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
    { .name = "lengths", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "row f: JaggedTensor f's lengths (the feature's, the KJT's dtype)" },
    { .name = "lengths_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
    { .name = "keys", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the dict's keys (embedding names)" },
    { .name = "keys_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
};

PK_ATTR_TABLE(rec_ec_forward, REC_EBC_FORWARD_ATTRS);

PK_SCHEMA(rec_ec_forward_schema, "rec.embedding_collection", 1,
          "EmbeddingCollection.forward: each id of a KJT's features looked up in its table (fbgemm.tbe, pooling "
          "none): one JaggedTensor per feature, as jagged rows",
          PK_INPUTS(ebc_inputs), PK_OUTPUTS(ec_outputs), PK_ATTRS(rec_ec_forward_attrs),
          .object_class = REC_EC_CLASS);

/* ---------------------------------- rec.fused_embedding_bag_collection */

PK_ATTR_TABLE(rec_fused_ebc_forward, REC_EBC_FORWARD_ATTRS);

PK_SCHEMA(rec_fused_ebc_forward_schema, "rec.fused_embedding_bag_collection", 1,
          "FusedEmbeddingBagCollection.forward: as rec.embedding_bag_collection (f32 bags for every table, as "
          "fbgemm's training TBE returns them)",
          PK_INPUTS(ebc_inputs), PK_OUTPUTS(ebc_outputs), PK_ATTRS(rec_fused_ebc_forward_attrs),
          .object_class = REC_FUSED_EBC_CLASS);

/* the KJT of the forward, then the gradient of its output */
static const loom_arg_def fused_backward_inputs[] = {
    REC_EBC_INPUT_DEFS,
    { .name = "grad", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[B, sum D] the gradient of the forward's KeyedTensor values" },
};

PK_ATTR_TABLE(rec_fused_ebc_backward, REC_EBC_FORWARD_ATTRS);

PK_SCHEMA(rec_fused_ebc_backward_schema, "rec.fused_embedding_bag_collection_backward", 1,
          "the backward of FusedEmbeddingBagCollection: one step of the fused optimizer on the rows the KJT "
          "touched (fbgemm.tbe_backward per table group)",
          PK_INPUTS(fused_backward_inputs), PK_ATTRS(rec_fused_ebc_backward_attrs),
          .object_class = REC_FUSED_EBC_CLASS);

#define REC_FUSED_EBC_SAVE_ATTRS(A, op)                                                           \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "safetensors file to write", )
PK_ATTR_TABLE(rec_fused_ebc_save, REC_FUSED_EBC_SAVE_ATTRS);

PK_SCHEMA(rec_fused_ebc_save_schema, "rec.fused_embedding_bag_collection_save", 1,
          "the tables (embedding_bags.<table>.weight), the optimizer state (<table>.weight.momentum_1/_2) and "
          "iter as safetensors, the file the class resumes from",
          PK_ATTRS(rec_fused_ebc_save_attrs), .object_class = REC_FUSED_EBC_CLASS);

PK_OPS_DEFINE(rec_collections_ops, REC_COLLECTIONS_OPS);
