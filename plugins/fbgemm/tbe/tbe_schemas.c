/*
** tbe_schemas.c - the definitions of the tbe module's ops: the row-wise
** quantisers and the methods of the fbgemm.tbe object (forward, prefetch,
** cache statistics). Compiled into fbgemm.so and fbgemm-cuda.so alike, so
** both define the very same schemas. Names are fbgemm_gpu's.
*/
#include "tbe_internal.h"

#define IDX_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define ROW_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F16) | \
                    LOOM_DTYPE_BIT(LOOM_DTYPE_BF16) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32))

static const loom_arg_def one_output[] = {
    { .name = "output", .dtypes = 0, .ndim = -1, .doc = "result" },
};

/* ------------------------------------------------------------ quantisers */

/* Value constraints (checked by the core; the upper bounds are the
** kernels' checks): row_alignment and exponent bits > 0, bias >= 0. */
#define FORMAT_ATTRS                                                                             \
    { .name = "weight_type", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED,              \
      .dflt = LOOM_DEFAULT_NONE, .doc = "fp32 | fp16 | bf16 | fp8 | int8 | int4 | int2" },        \
    { .name = "layout", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("tbe"),           \
      .doc = "tbe: IntNBit TBE rows (f16 scale/bias header first); fused: the standalone "       \
             "FloatToFused8BitRowwiseQuantized / FloatToFusedNBitRowwiseQuantizedSBHalf rows" },  \
    { .name = "row_alignment", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE,              \
      .dflt = LOOM_DEFAULT_INT(1), .doc = "tbe layout: pad each row to a multiple of this many bytes" }, \
    { .name = "fp8_exponent_bits", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE,           \
      .dflt = LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BITS), .doc = "fp8: exponent bits" },     \
    { .name = "fp8_exponent_bias", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_NONNEG,             \
      .dflt = LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BIAS), .doc = "fp8: exponent bias" }

static const loom_attr_def quantize_attrs[] = { FORMAT_ATTRS };

static const loom_arg_def quantize_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "f32 [R, D] rows" },
};

const loom_op_schema fbg_quantize_rows_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.quantize_rows",
    .version = 1,
    .doc = "f32 rows to fbgemm's row format of weight_type: u8 [R, row_bytes] (int8/int4/int2/fp8), "
           "f16/bf16/f32 [R, D] (float types), bit-exact with fbgemm's quantisers",
    .n_inputs = 1, .inputs = quantize_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = sizeof quantize_attrs / sizeof quantize_attrs[0], .attrs = quantize_attrs,
};

static const loom_attr_def dequantize_attrs[] = {
    FORMAT_ATTRS,
    { .name = "dim", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_NONE,
      .doc = "elements per row; default: derived from the row bytes" },
};

static const loom_arg_def dequantize_inputs[] = {
    { .name = "input", .dtypes = ROW_DTYPES, .ndim = 2,
      .doc = "[R, row_bytes] u8, or [R, D] in the float weight type's own dtype" },
};

const loom_op_schema fbg_dequantize_rows_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.dequantize_rows",
    .version = 1,
    .doc = "fbgemm rows of weight_type back to f32 [R, D]",
    .n_inputs = 1, .inputs = dequantize_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = sizeof dequantize_attrs / sizeof dequantize_attrs[0], .attrs = dequantize_attrs,
};

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

static const loom_attr_def tbe_call_attrs[] = {
    { .name = "pooling_mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,
      .doc = "sum | mean | none; default: the object's" },
    { .name = "output_dtype", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,
      .doc = "fp32 | fp16 | bf16; default: the object's" },
    { .name = "bounds_check_mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,
      .doc = "fatal | warning | ignore | none; default: the object's" },
};

static void tbe_cost(const loom_call *call, double *flops, double *bytes)
{
    fbg_tbe_cost(call, flops, bytes);
}

const loom_op_schema fbg_tbe_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.tbe",
    .version = 1,
    .doc = "table-batched embedding bags (fbgemm_gpu TBE forward): pooled [B, total_D], VBE 1-D rank-major, "
           "or [N, D] with pooling none",
    .n_inputs = sizeof tbe_inputs / sizeof tbe_inputs[0], .inputs = tbe_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = sizeof tbe_call_attrs / sizeof tbe_call_attrs[0], .attrs = tbe_call_attrs,
    .object_class = FBG_TBE_CLASS,
    .cost = tbe_cost,
};

const loom_op_schema fbg_tbe_prefetch_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.tbe_prefetch",
    .version = 1,
    .doc = "bring the rows of the next batch into the object's cache (fbgemm's prefetch); "
           "the next fbgemm.tbe call then skips its own",
    .n_inputs = sizeof tbe_inputs / sizeof tbe_inputs[0], .inputs = tbe_inputs,
    .n_outputs = 0, .outputs = NULL,
    .n_attrs = 0, .attrs = NULL,
    .object_class = FBG_TBE_CLASS,
};

static const loom_attr_def stats_attrs[] = {
    { .name = "reset", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0),
      .doc = "zero the counters after reading them" },
};

const loom_op_schema fbg_tbe_cache_stats_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.tbe_cache_stats",
    .version = 1,
    .doc = "i64 [8] cache counters: num_calls, num_requested_indices, num_unique_indices, num_unique_misses, "
           "num_conflict_unique_misses, num_conflict_misses, lookups, lookup_hits (zeros without a cache)",
    .n_inputs = 0, .inputs = NULL,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = stats_attrs,
    .object_class = FBG_TBE_CLASS,
};

const loom_op_schema *const fbgemm_tbe_ops[] = {
    &fbg_quantize_rows_schema, &fbg_dequantize_rows_schema, &fbg_tbe_schema,
    &fbg_tbe_prefetch_schema, &fbg_tbe_cache_stats_schema,
};
const size_t fbgemm_tbe_n_ops = sizeof fbgemm_tbe_ops / sizeof fbgemm_tbe_ops[0];
