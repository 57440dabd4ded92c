/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kjt.h - TorchRec's KeyedJaggedTensor (torchrec/sparse/jagged_tensor.py)
** as the rec pack's ops see it. docs/rec-kjt.md is the contract; in short:
**
**   a KJT is key-major: lengths = [key 0: samples 0..S0-1, key 1: ...],
**   values (and per-value weights) concatenated in the same order. S_k is
**   the stride (batch size) for every key, or with VBE the sum over ranks
**   of stride_per_key_per_rank[k] (i32/i64 [K, R]). inverse_indices
**   [K, B] maps each sample of the full batch to a row of key k's
**   deduplicated samples.
**
** Inputs of an op carry the KJT as tensors named after torchrec's fields
** (values, lengths, offsets, weights, stride_per_key_per_rank,
** inverse_indices) and the attributes `keys` (the feature names joined by
** ",") and `stride` (-1: computed as torchrec's _maybe_compute_stride_kjt).
** A KJT result is the output block REC_KJT_OUTPUTS: the keys as jagged
** strings, the fields, and the caches torchrec computes on sync (stride,
** stride_per_key, length_per_key, offset_per_key).
*/
#ifndef LOOM_REC_KJT_H
#define LOOM_REC_KJT_H

#include <stdint.h>

#include "dtype_traits.h"
#include "rec_pack.h"

#define REC_ID_MASK (LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define REC_WEIGHT_MASK LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

/* ------------------------------------------------------------ attributes */

#define REC_KJT_KEY_ATTRS(A, op)                                                                  \
    A(op, keys, STRING, LOOM_DEFAULT_STRING(""), 0,                                              \
      "the feature names in key order, joined by ',' (\"f1,f2\"); \"\" for no keys", )           \
    A(op, stride, INT, LOOM_DEFAULT_INT(-1), 0,                                                  \
      "samples per key; -1: from inverse_indices, stride_per_key_per_rank or the lengths "       \
      "(torchrec's _maybe_compute_stride_kjt)", )

#define REC_KJT_SYNC_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_ENUM(rec_kjt_sync, REC_KJT_SYNC_ATTRS);

#define REC_KJT_PERMUTE_ATTRS(A, op)                                                              \
    REC_KJT_KEY_ATTRS(A, op)                                                                     \
    A(op, indices, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                  \
      "the key of each output key, by index (repeats and subsets allowed)", )
PK_ATTR_ENUM(rec_kjt_permute, REC_KJT_PERMUTE_ATTRS);

#define REC_KJT_SPLIT_ATTRS(A, op)                                                                \
    REC_KJT_KEY_ATTRS(A, op)                                                                     \
    A(op, segments, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,              \
      "keys per split, in order; their sum may be less than the number of keys", )
PK_ATTR_ENUM(rec_kjt_split, REC_KJT_SPLIT_ATTRS);

#define REC_KJT_CONCAT_ATTRS(A, op)                                                               \
    REC_KJT_KEY_ATTRS(A, op)                                                                     \
    A(op, key_segments, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,          \
      "keys of each concatenated KJT, in order; they sum to the number of keys", )
PK_ATTR_ENUM(rec_kjt_concat, REC_KJT_CONCAT_ATTRS);

/* ---------------------------------------------------------------- inputs */

/* The general input block (permute, split, to_dict, dedup) */
enum {
    REC_KJT_IN_VALUES,
    REC_KJT_IN_LENGTHS,
    REC_KJT_IN_OFFSETS,
    REC_KJT_IN_WEIGHTS,
    REC_KJT_IN_SPKPR,
    REC_KJT_IN_INVERSE,
    REC_KJT_N_INPUTS
};

/* The output block of an op that returns a KJT */
enum {
    REC_KJT_OUT_KEYS,            /* u8, the key names concatenated (jagged strings) */
    REC_KJT_OUT_KEYS_OFFSETS,    /* i64 [K+1] */
    REC_KJT_OUT_VALUES,          /* values' dtype [N] */
    REC_KJT_OUT_LENGTHS,         /* the lengths' (or offsets') dtype [L] */
    REC_KJT_OUT_OFFSETS,         /* same dtype [L+1] */
    REC_KJT_OUT_WEIGHTS,         /* f32 [N], or f32 [0] unweighted */
    REC_KJT_OUT_SPKPR,           /* i32 [K, R] with VBE, else i32 [0] */
    REC_KJT_OUT_INVERSE,         /* [K, B] when the result has them, else i64 [0] */
    REC_KJT_OUT_STRIDE,          /* i64 [1] */
    REC_KJT_OUT_STRIDE_PER_KEY,  /* i64 [K] */
    REC_KJT_OUT_LENGTH_PER_KEY,  /* i64 [K] */
    REC_KJT_OUT_OFFSET_PER_KEY,  /* i64 [K+1] */
    REC_KJT_N_OUTPUTS
};

/* The output definitions of that block, in order (for the schemas of
** every op that returns a KJT). */
#define REC_KJT_OUTPUT_DEFS                                                                                         \
    { .name = "keys", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "the key names, UTF-8" },   \
    { .name = "keys_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[K+1]" },       \
    { .name = "values", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[N] values' dtype" },                   \
    { .name = "lengths", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[L] the lengths' (or offsets') dtype" }, \
    { .name = "offsets", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[L+1] lengths' dtype" },              \
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .ndim = 1, .doc = "[N], or [0] for an unweighted KJT" }, \
    { .name = "stride_per_key_per_rank", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I32), .ndim = -1,                                      \
      .doc = "i32 [K, ranks] (torch.IntTensor) for a VBE KJT, else [0]" },                               \
    { .name = "inverse_indices", .dtypes = REC_ID_MASK, .ndim = -1, .doc = "[K, B], or [0] when none" },  \
    { .name = "stride", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[1] stride()" },                                   \
    { .name = "stride_per_key", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[K] stride_per_key()" },              \
    { .name = "length_per_key", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[K] length_per_key(): values per key" }, \
    { .name = "offset_per_key", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[K+1] offset_per_key()" }

/* ------------------------------------------------------------ a read KJT */

/* A checked KJT. Arrays live in the call's scratch memory. */
typedef struct rec_kjt {
    int64_t n_keys;
    const char **keys;               /* [n_keys], NUL-terminated names */
    const loom_tensor *values;       /* 1-D, i32/i64 */
    const loom_tensor *weights;      /* 1-D f32 of values' size, or NULL */
    loom_dtype lengths_dtype;        /* of the lengths (or offsets) given */
    int64_t n_lengths;
    int64_t *lengths;                /* [n_lengths], >= 0 */
    int64_t *offsets;                /* [n_lengths + 1], offsets[0] = 0, last = numel(values) */
    int64_t stride;
    int variable_stride;             /* stride_per_key_per_rank given (VBE) */
    int64_t n_ranks;
    int64_t *stride_per_key_per_rank; /* [n_keys * n_ranks] with VBE, else NULL */
    int64_t *stride_per_key;         /* [n_keys] */
    int64_t *lengths_offset_per_key; /* [n_keys + 1]: key k's lengths are [lopk[k], lopk[k+1]) */
    int64_t *length_per_key;         /* [n_keys]: values per key */
    int64_t *offset_per_key;         /* [n_keys + 1] */
    const loom_tensor *inverse_indices; /* [n_keys, B] (checked in range), or NULL */
} rec_kjt;

/* The tensors of one KJT in an op's inputs (any may be NULL but values). */
typedef struct rec_kjt_inputs {
    const loom_tensor *values, *lengths, *offsets, *weights, *stride_per_key_per_rank, *inverse_indices;
} rec_kjt_inputs;

/* The general input block of the call. */
rec_kjt_inputs rec_kjt_inputs_of(const loom_call *call);

/* Reads and checks a KJT: keys (the `keys` string), values, lengths and/or
** offsets (both: they must agree), weights, VBE strides and inverse
** indices, stride (< 0: computed). Every refusal names the argument and,
** where one is at fault, the feature. */
loom_status rec_kjt_read(loom_call *call, const rec_kjt_inputs *in, const char *keys, int64_t stride,
                         rec_kjt *kjt);

/* What an op returns as a KJT: the output block starting at output `first`. */
typedef struct rec_kjt_result {
    int64_t n_keys;
    const char *const *keys;
    loom_dtype values_dtype;
    int64_t n_values;
    const void *values;               /* n_values elements of values_dtype */
    const float *weights;             /* n_values, or NULL */
    loom_dtype lengths_dtype;
    int64_t n_lengths;
    const int64_t *lengths;
    int64_t stride;
    int64_t n_ranks;                  /* > 0: VBE */
    const int64_t *stride_per_key_per_rank; /* [n_keys * n_ranks] */
    const int64_t *stride_per_key;    /* [n_keys] */
    const loom_tensor *inverse_indices; /* copied to the output, or NULL */
    const int64_t *inverse_i64;       /* [n_keys * inverse_b] instead of a tensor, or NULL */
    int64_t inverse_b;
} rec_kjt_result;

loom_status rec_kjt_write(loom_call *call, int32_t first, const rec_kjt_result *r);

/* Scratch memory of the running call, carved from few large blocks of
** host->scratch (the core allows a call only a few blocks beyond its
** arena). rec_scratch_begin starts a kernel's run; blocks are released
** with the call. 64-byte aligned; NULL (error set) when out of memory. */
void rec_scratch_begin(void);
void *rec_scratch(loom_call *call, size_t nbytes);

/* An i32/i64 element as int64 */
static inline int64_t rec_get_index(const loom_tensor *t, int64_t i)
{
    return loom_tensor_dtype_of(t) == LOOM_DTYPE_I32 ? ((const int32_t *)loom_data(t))[i]
                                                      : ((const int64_t *)loom_data(t))[i];
}

/* An int64 vector into a new output of dtype i32/i64 */
loom_status rec_write_index(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                            const int64_t *src);

/* ------------------------------------------------------------ the ops */

#define REC_KJT_OPS(X)                                                                            \
    X(rec_kjt_from_lengths_sync_schema) X(rec_kjt_from_offsets_sync_schema)                      \
    X(rec_kjt_permute_schema) X(rec_kjt_split_schema) X(rec_kjt_concat_schema)                   \
    X(rec_kjt_to_dict_schema) X(rec_kjt_dedup_schema)
PK_OPS_DECLARE(rec_kjt_ops, REC_KJT_OPS);

/* The inputs of from_lengths_sync / from_offsets_sync: values, lengths or
** offsets, weights, stride_per_key_per_rank, inverse_indices */
enum { REC_SYNC_IN_VALUES, REC_SYNC_IN_JAGGED, REC_SYNC_IN_WEIGHTS, REC_SYNC_IN_SPKPR, REC_SYNC_IN_INVERSE };
/* The inputs of concat */
enum { REC_CONCAT_IN_VALUES, REC_CONCAT_IN_LENGTHS, REC_CONCAT_IN_LENGTHS_OFFSETS, REC_CONCAT_IN_WEIGHTS,
       REC_CONCAT_IN_SPKPR, REC_CONCAT_IN_INVERSE };
/* The outputs of split */
enum { REC_SPLIT_OUT_KEYS, REC_SPLIT_OUT_KEYS_OFFSETS, REC_SPLIT_OUT_KEY_SPLITS, REC_SPLIT_OUT_VALUES,
       REC_SPLIT_OUT_VALUES_OFFSETS, REC_SPLIT_OUT_WEIGHTS, REC_SPLIT_OUT_LENGTHS, REC_SPLIT_OUT_LENGTHS_OFFSETS,
       REC_SPLIT_OUT_OFFSETS, REC_SPLIT_OUT_OFFSETS_OFFSETS, REC_SPLIT_OUT_SPKPR, REC_SPLIT_OUT_INVERSE };
/* The outputs of to_dict */
enum { REC_DICT_OUT_KEYS, REC_DICT_OUT_KEYS_OFFSETS, REC_DICT_OUT_VALUES, REC_DICT_OUT_VALUES_OFFSETS,
       REC_DICT_OUT_WEIGHTS, REC_DICT_OUT_LENGTHS, REC_DICT_OUT_LENGTHS_OFFSETS, REC_DICT_OUT_OFFSETS,
       REC_DICT_OUT_OFFSETS_OFFSETS };

#endif /* LOOM_REC_KJT_H */
