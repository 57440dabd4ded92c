/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_internal.h - what the files of the tbe module share beyond the
** public contract tbe.h: schemas, name tables, the op front end (plan
** building and bounds checks) and the cpu-private object state.
*/
#ifndef LOOM_FBGEMM_TBE_INTERNAL_H
#define LOOM_FBGEMM_TBE_INTERNAL_H

#include <pthread.h>

#include "fbgemm_pack.h"
#include "pack.h"
#include "quantize.h"
#include "tbe.h"

#define FBG_TBE_CLASS "fbgemm.tbe"

/* The module's ops (tbe_schemas.c), in definition order: both packs build
** one ops table made from this list (PK_OPS_DEFINE in tbe_schemas.c). */
#define FBG_TBE_OPS(X)               \
    X(fbg_quantize_rows_schema)      \
    X(fbg_dequantize_rows_schema)    \
    X(fbg_tbe_schema)                \
    X(fbg_tbe_prefetch_schema)       \
    X(fbg_tbe_cache_stats_schema)    \
    X(fbg_tbe_backward_schema)       \
    X(fbg_tbe_save_schema)           \
    X(fbg_tbe_state_schema)
PK_OPS_DECLARE(fbgemm_tbe_ops, FBG_TBE_OPS);

/* The attributes of each op and of the class: A(op, name, TYPE, default,
** flags, doc, extra) (pack.h). Value constraints are checked by the core;
** the upper bounds and the rest are the kernels' and create's checks. */

/* The row format of the quantisers: row_alignment and exponent bits > 0,
** bias >= 0. dequantize_rows takes the same list, then dim, so the format
** attributes have the same index in both ops (parse_call reads either). */
#define FBG_FORMAT_ATTRS(A, op)                                                                   \
    A(op, weight_type, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                             \
      "fp32 | fp16 | bf16 | fp8 | int8 | int4 | int2", )                                          \
    A(op, layout, STRING, LOOM_DEFAULT_STRING("tbe"), 0,                                          \
      "tbe: IntNBit TBE rows (f16 scale/bias header first); fused: the standalone "               \
      "FloatToFused8BitRowwiseQuantized / FloatToFusedNBitRowwiseQuantizedSBHalf rows", )         \
    A(op, row_alignment, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE,                            \
      "tbe layout: pad each row to a multiple of this many bytes", )                              \
    A(op, fp8_exponent_bits, INT, LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BITS), LOOM_ATTR_POSITIVE, \
      "fp8: exponent bits", )                                                                     \
    A(op, fp8_exponent_bias, INT, LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BIAS), LOOM_ATTR_NONNEG, \
      "fp8: exponent bias", )
#define FBG_QUANTIZE_ROWS_ATTRS(A, op) FBG_FORMAT_ATTRS(A, op)
#define FBG_DEQUANTIZE_ROWS_ATTRS(A, op)                                                          \
    FBG_FORMAT_ATTRS(A, op)                                                                       \
    A(op, dim, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "elements per row; default: derived from the row bytes", )
/* fbgemm.tbe: each overrides the object's default when set. */
#define FBG_TBE_ATTRS(A, op)                                                                      \
    A(op, pooling_mode, STRING, LOOM_DEFAULT_NONE, 0, "sum | mean | none; default: the object's", ) \
    A(op, output_dtype, STRING, LOOM_DEFAULT_NONE, 0, "fp32 | fp16 | bf16; default: the object's", ) \
    A(op, bounds_check_mode, STRING, LOOM_DEFAULT_NONE, 0,                                        \
      "fatal | warning | ignore | none; default: the object's", )
#define FBG_TBE_CACHE_STATS_ATTRS(A, op)                                                          \
    A(op, reset, BOOL, LOOM_DEFAULT_BOOL(0), 0, "zero the counters after reading them", )
/* The fbgemm.tbe class (tbe_object.c): dims, alignment, exponent bits/bias
** and ways > 0, row counts and table indices >= 0, cache_load_factor
** finite and >= 0. embedding_dims and num_embeddings are adjacent (create
** checks their lengths in one loop). */
#define FBG_TBE_CLASS_ATTRS(A, op)                                                                \
    A(op, weights_tys, STRING, LOOM_DEFAULT_NONE, 0,                                              \
      "weight type per table, comma-separated (fp32,fp16,bf16,fp8,int8,int4,int2); "              \
      "default: from each tensor's dtype (f32/f16/bf16 only)", )                                  \
    A(op, embedding_dims, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                            \
      "D per table; default: from the row bytes (needed for u8 tables with row_alignment > 1)", ) \
    A(op, num_embeddings, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG,                              \
      "rows per table, checked against the file when given", )                                    \
    A(op, feature_table_map, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG,                           \
      "table of each feature; default: one feature per table", )                                  \
    A(op, pooling_mode, STRING, LOOM_DEFAULT_STRING("sum"), 0, "sum | mean | none", )             \
    A(op, output_dtype, STRING, LOOM_DEFAULT_STRING("fp32"), 0, "fp32 | fp16 | bf16", )           \
    A(op, bounds_check_mode, STRING, LOOM_DEFAULT_STRING("warning"), 0,                           \
      "fatal | warning | ignore | none (none repairs silently, as ignore: loom never reads out of bounds)", ) \
    A(op, row_alignment, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE,                            \
      "bytes each row is padded to (fbgemm: 1 on CPU, 16 on GPU)", )                              \
    A(op, fp8_exponent_bits, INT, LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BITS), LOOM_ATTR_POSITIVE, \
      "fp8 tables: exponent bits", )                                                              \
    A(op, fp8_exponent_bias, INT, LOOM_DEFAULT_INT(FBG_FP8_DEFAULT_EXPONENT_BIAS), LOOM_ATTR_POSITIVE, \
      "fp8 tables: exponent bias", )                                                              \
    A(op, cache_load_factor, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, \
      "fraction of all rows cached in memory; 1.0 (or 0) = no cache, rows read from the file mapping", ) \
    A(op, cache_algorithm, STRING, LOOM_DEFAULT_STRING("lru"), 0, "lru | lfu", )                  \
    A(op, cache_assoc, INT, LOOM_DEFAULT_INT(32), LOOM_ATTR_POSITIVE, "ways per cache set", )     \
    A(op, table_memory, STRING, LOOM_DEFAULT_STRING("map"), 0,                                    \
      "map (rows read from the mapped weights file) | hugepage (inference: create copies the tables into " \
      "anonymous memory advised MADV_HUGEPAGE, 2 MB-aligned: fewer TLB misses on large tables, at the " \
      "cost of a private copy)", )                                                                \
    FBG_TBE_OPTIM_ATTRS(A, op)
/* Training (tbe_optim.h): fbgemm's EmbOptimType names and optimizer
** arguments, with its defaults. */
#define FBG_TBE_OPTIM_ATTRS(A, op)                                                                \
    A(op, optimizer, STRING, LOOM_DEFAULT_STRING("none"), 0,                                      \
      "none (inference) | exact_sgd | exact_rowwise_adagrad | adam | partial_rowwise_adam: the optimizer "\
      "fbgemm.tbe_backward fuses into the backward (FP32/FP16 tables)", )                         \
    A(op, learning_rate, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "learning rate", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1.0e-8), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "adagrad / adam epsilon", ) \
    A(op, beta1, FLOAT, LOOM_DEFAULT_FLOAT(0.9), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "adam beta1", ) \
    A(op, beta2, FLOAT, LOOM_DEFAULT_FLOAT(0.999), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "adam beta2", ) \
    A(op, weight_decay, FLOAT, LOOM_DEFAULT_FLOAT(0.0), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "weight decay", ) \
    A(op, weight_decay_mode, STRING, LOOM_DEFAULT_STRING("none"), 0,                              \
      "row-wise adagrad: none | l2 (added to the gradient) | decouple (applied to the row)", )
/* fbgemm.tbe_backward: as the forward's (the same names, so one plan builder). */
#define FBG_TBE_BACKWARD_ATTRS(A, op)                                                             \
    A(op, pooling_mode, STRING, LOOM_DEFAULT_NONE, 0, "sum | mean; default: the object's", )      \
    A(op, bounds_check_mode, STRING, LOOM_DEFAULT_NONE, 0,                                        \
      "fatal | warning | ignore | none; default: the object's", )
#define FBG_TBE_SAVE_ATTRS(A, op)                                                                 \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "safetensors file to write: table.<t>, momentum1.<t>, momentum2.<t>, iter", )
#define FBG_TBE_STATE_ATTRS(A, op)                                                                \
    A(op, name, STRING, LOOM_DEFAULT_STRING("weight"), 0, "weight | momentum1 | momentum2 | iter", ) \
    A(op, table, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "physical table index", )
PK_ATTR_ENUM(fbg_tbe_backward, FBG_TBE_BACKWARD_ATTRS);
PK_ATTR_ENUM(fbg_tbe_save, FBG_TBE_SAVE_ATTRS);
PK_ATTR_ENUM(fbg_tbe_state_op, FBG_TBE_STATE_ATTRS);
PK_ATTR_ENUM(fbg_quantize_rows, FBG_QUANTIZE_ROWS_ATTRS);
PK_ATTR_ENUM(fbg_dequantize_rows, FBG_DEQUANTIZE_ROWS_ATTRS);
PK_ATTR_ENUM(fbg_tbe, FBG_TBE_ATTRS);
PK_ATTR_ENUM(fbg_tbe_cache_stats, FBG_TBE_CACHE_STATS_ATTRS);
PK_ATTR_ENUM(fbg_tbe_class, FBG_TBE_CLASS_ATTRS);

/* Input indices of fbgemm.tbe and fbgemm.tbe_prefetch. */
enum { TBE_IN_INDICES = 0, TBE_IN_OFFSETS = 1, TBE_IN_PSW = 2, TBE_IN_VBE = 3 };

/* "sum" -> FBG_POOL_SUM ...; -1 when unknown. Same for the others. */
int fbg_pooling_from_name(const char *s);
int fbg_bounds_from_name(const char *s);
/* fp32 / fp16 / bf16 -> FBG_WT_*; -1 otherwise. */
int fbg_output_from_name(const char *s);
const char *fbg_pooling_name(int p);
loom_dtype fbg_output_loom_dtype(int wtype);

/* Cost of a forward call (rows read + output written). */
void fbg_tbe_cost(const loom_call *call, double *flops, double *bytes);

/* Index value i of an i32/i64 array. */
static inline int64_t fbg_idx(const void *p, int32_t dtype, int64_t i)
{
    return dtype == LOOM_DTYPE_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* cpu-private part of the object (fbg_tbe_state.cpu_private). */
typedef struct fbg_tbe_cpu {
    pthread_mutex_t lock;       /* serialises cache prefetch + lookup */
    int64_t pending_prefetches; /* prefetches not yet consumed by a forward */
    int warned;                 /* WARNING mode logged already */
    /* The weights file the tables are mapped from, opened again at create
    ** (-1 when it cannot be told, e.g. without /proc), and the file size
    ** the tables need: fbg_tbe_check_file compares them on every call. */
    int file_fd;
    int64_t file_need;
    /* The training state (tbe_optim.h), NULL for optimizer none. */
    struct fbg_tbe_train *train;
} fbg_tbe_cpu;

/* LOOM_EFORMAT when the object's weights file has shrunk below what its
** tables need since create (a file truncated in place: reading its mapping
** would raise SIGBUS); LOOM_OK otherwise, or when the file is not watched.
** One fstat. Called by fbg_tbe_plan_build, so by every method and backend. */
loom_status fbg_tbe_check_file(const fbg_tbe_state *s, const char *op);

/* Where an inference object's tables live (tbe_table_memory.c, the
** attribute table_memory). */
enum { FBG_TABLES_MAP = 0, FBG_TABLES_HUGEPAGE = 1 };
/* "map" / "hugepage" -> *kind; LOOM_EINVAL naming the value otherwise. */
loom_status fbg_table_memory_from_name(const char *name, int *kind);
/* Copy the n tables into one anonymous MADV_HUGEPAGE mapping, each table
** 2 MB-aligned, and point tables[t].base at the copies; *region and
** *region_bytes describe it for fbg_table_memory_free (NULL, 0 when the
** tables hold no bytes). LOOM_ENOMEM (message set) when it cannot be mapped. */
loom_status fbg_table_memory_copy(fbg_tbe_table *tables, int32_t n, void **region, size_t *region_bytes);
void fbg_table_memory_free(void *region, size_t region_bytes);

/* cpu kernels (tbe_forward_cpu.c, quantize_ops.c) and the class (tbe_object.c) */
loom_status fbg_tbe_forward_cpu(loom_exec_ctx *ctx, const fbg_tbe_plan *plan);
loom_status fbg_quantize_rows_cpu(loom_call *call);
loom_status fbg_dequantize_rows_cpu(loom_call *call);
extern const loom_object_class fbg_tbe_class;
/* Training methods (tbe_backward_cpu.c, tbe_optim_state.c). */
loom_status fbg_tbe_backward_cpu(loom_call *call);
loom_status fbg_tbe_save_cpu(loom_call *call);
loom_status fbg_tbe_state_cpu(loom_call *call);

#endif
