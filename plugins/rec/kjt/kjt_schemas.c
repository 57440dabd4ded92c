/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kjt_schemas.c - definitions of the rec pack's KeyedJaggedTensor ops,
** named after the methods of torchrec.sparse.jagged_tensor.KeyedJaggedTensor
** (torchrec 1.9) and with its field names (docs/rec-kjt.md). The op list,
** the attribute lists and the argument indices are in kjt.h.
*/
#include "kjt.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define I32 LOOM_DTYPE_BIT(LOOM_DTYPE_I32)
#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)

#define VALUES_IN { .name = "values", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[N] ids, key-major, i32 or i64" }
#define WEIGHTS_IN                                                                                 \
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,         \
      .doc = "[N] f32, one per value (a weighted KJT)" }
#define SPKPR_IN                                                                                   \
    { .name = "stride_per_key_per_rank", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, \
      .doc = "VBE: [K, ranks] samples of each key from each rank; key k owns their sum of lengths" }
#define INVERSE_IN                                                                                 \
    { .name = "inverse_indices", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,     \
      .doc = "VBE: [K, B] the row of key k's samples for each sample of the full batch" }

static const loom_arg_def kjt_inputs[] = {
    VALUES_IN,
    { .name = "lengths", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[L] values per sample, key-major (L = K x stride, or the VBE strides' sum)" },
    { .name = "offsets", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[L+1] exclusive cumulative lengths from 0 to N (with lengths: must agree)" },
    WEIGHTS_IN, SPKPR_IN, INVERSE_IN,
};

static const loom_arg_def from_lengths_inputs[] = {
    VALUES_IN,
    { .name = "lengths", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[L] values per sample, key-major" },
    WEIGHTS_IN, SPKPR_IN, INVERSE_IN,
};

static const loom_arg_def from_offsets_inputs[] = {
    VALUES_IN,
    { .name = "offsets", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[L+1] from 0 to N, non-decreasing" },
    WEIGHTS_IN, SPKPR_IN, INVERSE_IN,
};

static const loom_arg_def concat_inputs[] = {
    { .name = "values", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[N] the KJTs' values, one after the other" },
    { .name = "lengths", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[L] the KJTs' lengths, one after the other" },
    { .name = "lengths_offsets", .dtypes = I64, .ndim = 1,
      .doc = "[S+1] where each KJT's lengths start in lengths (0 .. L)" },
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[N] the KJTs' weights (all KJTs weighted, or none)" },
    { .name = "stride_per_key_per_rank", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "VBE: [K, ranks] the KJTs' rows, one after the other (all KJTs VBE, or none)" },
    { .name = "inverse_indices", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2,
      .doc = "[K, B] the KJTs' rows, one after the other (all KJTs have them, or none)" },
};

#define KJT_OUTPUTS REC_KJT_OUTPUT_DEFS

static const loom_arg_def kjt_outputs[] = { KJT_OUTPUTS };

PK_ATTR_TABLE(rec_kjt_sync, REC_KJT_SYNC_ATTRS);
PK_ATTR_TABLE(rec_kjt_permute, REC_KJT_PERMUTE_ATTRS);
PK_ATTR_TABLE(rec_kjt_split, REC_KJT_SPLIT_ATTRS);
PK_ATTR_TABLE(rec_kjt_concat, REC_KJT_CONCAT_ATTRS);

PK_SCHEMA(rec_kjt_from_lengths_sync_schema, "rec.kjt_from_lengths_sync", 1,
          "KeyedJaggedTensor.from_lengths_sync: a checked KJT with its offsets and per-key caches",
          PK_INPUTS(from_lengths_inputs), PK_OUTPUTS(kjt_outputs), PK_ATTRS(rec_kjt_sync_attrs));

PK_SCHEMA(rec_kjt_from_offsets_sync_schema, "rec.kjt_from_offsets_sync", 1,
          "KeyedJaggedTensor.from_offsets_sync: a checked KJT with its lengths and per-key caches",
          PK_INPUTS(from_offsets_inputs), PK_OUTPUTS(kjt_outputs), PK_ATTRS(rec_kjt_sync_attrs));

PK_SCHEMA(rec_kjt_permute_schema, "rec.kjt_permute", 1,
          "KeyedJaggedTensor.permute(indices): the keys (lengths, values, weights, VBE strides) in the order "
          "of indices; inverse_indices are dropped, as torchrec does",
          PK_INPUTS(kjt_inputs), PK_OUTPUTS(kjt_outputs), PK_ATTRS(rec_kjt_permute_attrs));

static const loom_arg_def split_outputs[] = {
    { .name = "keys", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "the key names of all splits" },
    { .name = "keys_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[K'+1]" },
    { .name = "key_splits", .dtypes = I64, .ndim = 1, .doc = "[S+1] split s has keys [key_splits[s], key_splits[s+1])" },
    { .name = "values", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "row s: split s's values" },
    { .name = "values_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[S+1]" },
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .ndim = 1,
      .doc = "the splits' weights at values_offsets, or [0] unweighted" },
    { .name = "lengths", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "row s: split s's lengths" },
    { .name = "lengths_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[S+1]" },
    { .name = "offsets", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "row s: split s's offsets from 0 (lengths + 1 entries; none for a split of 0 keys, as torchrec)" },
    { .name = "offsets_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[S+1]" },
    { .name = "stride_per_key_per_rank", .dtypes = I32, .ndim = -1, .doc = "VBE: [K', ranks] the splits' rows, else [0]" },
    { .name = "inverse_indices", .dtypes = REC_ID_MASK, .ndim = -1,
      .doc = "the input's, when one split holds every key (torchrec returns the KJT itself), else [0]" },
};

PK_SCHEMA(rec_kjt_split_schema, "rec.kjt_split", 1,
          "KeyedJaggedTensor.split(segments): consecutive groups of keys, as one jagged list of KJTs",
          PK_INPUTS(kjt_inputs), PK_OUTPUTS(split_outputs), PK_ATTRS(rec_kjt_split_attrs));

PK_SCHEMA(rec_kjt_concat_schema, "rec.kjt_concat", 1,
          "KeyedJaggedTensor.concat: KJTs (one after the other, their lengths at lengths_offsets) as one KJT",
          PK_INPUTS(concat_inputs), PK_OUTPUTS(kjt_outputs), PK_ATTRS(rec_kjt_concat_attrs));

static const loom_arg_def to_dict_outputs[] = {
    { .name = "keys", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "the dict's keys, in key order" },
    { .name = "keys_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[K+1]" },
    { .name = "values", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "row k: JaggedTensor k's values" },
    { .name = "values_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[K+1] offset_per_key" },
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .ndim = 1,
      .doc = "JaggedTensor k's weights at values_offsets, or [0] unweighted" },
    { .name = "lengths", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "row k: JaggedTensor k's lengths" },
    { .name = "lengths_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "[K+1] lengths_offset_per_key" },
    { .name = "offsets", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "row k: JaggedTensor k's offsets, from 0 (its lengths + 1 entries)" },
    { .name = "offsets_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[K+1]" },
};

PK_SCHEMA(rec_kjt_to_dict_schema, "rec.kjt_to_dict", 1,
          "KeyedJaggedTensor.to_dict: one JaggedTensor per key, as jagged rows in key order",
          PK_INPUTS(kjt_inputs), PK_OUTPUTS(to_dict_outputs), PK_ATTRS(rec_kjt_sync_attrs));

PK_SCHEMA(rec_kjt_dedup_schema, "rec.kjt_dedup", 1,
          "per key, the distinct samples (same ids and weights) in first-seen order as a VBE KJT "
          "(stride_per_key_per_rank [K, 1]) with inverse_indices [K, B] that expand it back",
          PK_INPUTS(kjt_inputs), PK_OUTPUTS(kjt_outputs), PK_ATTRS(rec_kjt_sync_attrs));

PK_OPS_DEFINE(rec_kjt_ops, REC_KJT_OPS);
