/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_schemas.c - the definitions of the tbe module's ops: the row-wise
** quantisers and the methods of the fbgemm.tbe object (forward, prefetch,
** cache statistics). Compiled into fbgemm.so and fbgemm-cuda.so alike, so
** both define the very same schemas. Names are fbgemm_gpu's. The op list
** (FBG_TBE_OPS) and the attribute lists are in tbe_internal.h.
*/
#include "pack.h"
#include "tbe_internal.h"

#define IDX_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define ROW_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F16) | \
                    LOOM_DTYPE_BIT(LOOM_DTYPE_BF16) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))

static const loom_arg_def one_output[] = {
    { .name = "output", .dtypes = 0, .ndim = -1, .doc = "result" },
};

/* ------------------------------------------------------------ quantisers */

PK_ATTR_TABLE(fbg_quantize_rows, FBG_QUANTIZE_ROWS_ATTRS);

static const loom_arg_def quantize_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "f32 [R, D] rows" },
};

PK_SCHEMA(fbg_quantize_rows_schema, "fbgemm.quantize_rows", 1,
          "f32 rows to fbgemm's row format of weight_type: u8 [R, row_bytes] (int8/int4/int2/fp8), "
          "f16/bf16/f32 [R, D] (float types), bit-exact with fbgemm's quantisers",
          PK_INPUTS(quantize_inputs), PK_OUTPUTS(one_output), PK_ATTRS(fbg_quantize_rows_attrs));

PK_ATTR_TABLE(fbg_dequantize_rows, FBG_DEQUANTIZE_ROWS_ATTRS);

static const loom_arg_def dequantize_inputs[] = {
    { .name = "input", .dtypes = ROW_DTYPES, .ndim = 2,
      .doc = "[R, row_bytes] u8, or [R, D] in the float weight type's own dtype" },
};

PK_SCHEMA(fbg_dequantize_rows_schema, "fbgemm.dequantize_rows", 1, "fbgemm rows of weight_type back to f32 [R, D]",
          PK_INPUTS(dequantize_inputs), PK_OUTPUTS(one_output), PK_ATTRS(fbg_dequantize_rows_attrs));

/* ------------------------------------------------------ fbgemm.tbe methods */

static const loom_arg_def tbe_inputs[] = {
    { .name = "indices", .dtypes = IDX_DTYPES, .ndim = 1,
      .doc = "i32|i64 [N]: every feature's bags, feature-major" },
    { .name = "offsets", .dtypes = IDX_DTYPES, .ndim = 1,
      .doc = "same dtype as indices, [T*B+1] (or [sum_f B_f + 1] with VBE)" },
    { .name = "per_sample_weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_OPTIONAL,
      .ndim = 1, .doc = "f32 [N]: weight of each index" },
    { .name = "batch_size_per_feature_per_rank", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
      .flags = LOOM_ARG_OPTIONAL, .ndim = 2, .doc = "i64 [T, R]: VBE batch sizes (host memory)" },
};

PK_ATTR_TABLE(fbg_tbe, FBG_TBE_ATTRS);

static void tbe_cost(const loom_call *call, double *flops, double *bytes)
{
    fbg_tbe_cost(call, flops, bytes);
}

PK_SCHEMA(fbg_tbe_schema, "fbgemm.tbe", 1,
          "table-batched embedding bags (fbgemm_gpu TBE forward): pooled [B, total_D], VBE 1-D rank-major, "
          "or [N, D] with pooling none",
          PK_INPUTS(tbe_inputs), PK_OUTPUTS(one_output), PK_ATTRS(fbg_tbe_attrs), .object_class = FBG_TBE_CLASS,
          .cost = tbe_cost);

PK_SCHEMA(fbg_tbe_prefetch_schema, "fbgemm.tbe_prefetch", 1,
          "bring the rows of the next batch into the object's cache (fbgemm's prefetch); "
          "the next fbgemm.tbe call then skips its own",
          PK_INPUTS(tbe_inputs), .object_class = FBG_TBE_CLASS);

PK_ATTR_TABLE(fbg_tbe_cache_stats, FBG_TBE_CACHE_STATS_ATTRS);

PK_SCHEMA(fbg_tbe_cache_stats_schema, "fbgemm.tbe_cache_stats", 1,
          "i64 [8] cache counters: num_calls, num_requested_indices, num_unique_indices, num_unique_misses, "
          "num_conflict_unique_misses, num_conflict_misses, lookups, lookup_hits (zeros without a cache)",
          PK_OUTPUTS(one_output), PK_ATTRS(fbg_tbe_cache_stats_attrs), .object_class = FBG_TBE_CLASS);

/* --------------------------------------------------- training methods */

static const loom_arg_def tbe_backward_inputs[] = {
    { .name = "grad_output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "f32 [B, total_D]: the gradient of the forward's output" },
    { .name = "indices", .dtypes = IDX_DTYPES, .ndim = 1, .doc = "the forward's indices" },
    { .name = "offsets", .dtypes = IDX_DTYPES, .ndim = 1, .doc = "the forward's offsets [T*B+1]" },
    { .name = "per_sample_weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_OPTIONAL,
      .ndim = 1, .doc = "the forward's per-sample weights" },
};

PK_ATTR_TABLE(fbg_tbe_backward, FBG_TBE_BACKWARD_ATTRS);

PK_SCHEMA(fbg_tbe_backward_schema, "fbgemm.tbe_backward", 1,
          "TBE backward with the object's optimizer fused (fbgemm's exact_sgd, exact_rowwise_adagrad, adam, "
          "partial_rowwise_adam): updates the rows the batch touched and their optimizer state, one step",
          PK_INPUTS(tbe_backward_inputs), PK_ATTRS(fbg_tbe_backward_attrs), .object_class = FBG_TBE_CLASS);

PK_ATTR_TABLE(fbg_tbe_save, FBG_TBE_SAVE_ATTRS);

PK_SCHEMA(fbg_tbe_save_schema, "fbgemm.tbe_save", 1,
          "save a trained object's tables and optimizer state as safetensors (table.<t>, momentum1.<t>, "
          "momentum2.<t>, iter): the weights file a new object resumes from",
          PK_ATTRS(fbg_tbe_save_attrs), .object_class = FBG_TBE_CLASS);

PK_ATTR_TABLE(fbg_tbe_state_op, FBG_TBE_STATE_ATTRS);

PK_SCHEMA(fbg_tbe_state_schema, "fbgemm.tbe_state", 1,
          "a copy of one table (f32/f16 [rows, D]) or its optimizer state (f32 [rows] row-wise, [rows, D] "
          "element-wise) of a trained object, or iter (i64 [1])",
          PK_OUTPUTS(one_output), PK_ATTRS(fbg_tbe_state_op_attrs), .object_class = FBG_TBE_CLASS);

/* the module's ops table, compiled into both packs (tbe_internal.h) */
PK_OPS_DEFINE(fbgemm_tbe_ops, FBG_TBE_OPS);
