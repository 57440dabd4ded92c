/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged.h - what the files of the jagged module share: the op schemas,
** the argument checks every backend runs before a kernel reads anything,
** and the geometry ("plan") those checks produce.
**
** A jagged tensor is values [total_L, inner...] plus offsets [B+1] (int32
** or int64): row b owns values rows offsets[b] .. offsets[b+1]. With
** several jagged dimensions (jagged_to_padded_dense, its backward and
** dense_to_jagged take up to JG_MAX_LEVELS: inputs offsets, offsets_1,
** offsets_2) each level's offsets index the next level's entries, as in
** fbgemm's offsets list: level k has (entries of level k-1) + 1 offsets.
** Offsets are untrusted input: jg_read_offsets checks them in O(B)
** (0 <= offsets[0], non-decreasing, last == the number of entries of the
** next level or of values rows) and converts them to int64 before any
** kernel runs, so a kernel only ever sees offsets that index inside values.
**
** Inner dims are flattened into D (rows of D contiguous elements); a
** padded dense tensor is [B, max_L..., inner...]. Every tensor must be
** compact row-major.
*/
#ifndef LOOM_FBGEMM_JAGGED_H
#define LOOM_FBGEMM_JAGGED_H

#include "dtype_traits.h"
#include "fbgemm_pack.h"
#include "pack.h"

/* The arithmetic ops take the float dtypes (PK_FLOAT_MASK); offsets and
** indices are int32 or int64; the copies move any of these. */
#define JG_INDEX (LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define JG_COPYABLE (PK_FLOAT_MASK | JG_INDEX)
#define JG_MAX_LEVELS 3

/* The module's ops (jagged_schemas.c), in definition order: both packs
** share one ops table made from this list (PK_OPS_DEFINE in jagged_schemas.c). */
#define JG_OPS(X)                                    \
    X(jg_jagged_to_padded_dense_schema)              \
    X(jg_jagged_to_padded_dense_backward_schema)     \
    X(jg_dense_to_jagged_schema)                     \
    X(jg_elementwise_add_schema)                     \
    X(jg_elementwise_add_jagged_output_schema)       \
    X(jg_elementwise_mul_schema)                     \
    X(jg_elementwise_mul_backward_schema)            \
    X(jg_dense_bmm_schema)                           \
    X(jg_jagged_bmm_schema)                          \
    X(jg_permute102_baddbmm_schema)                  \
    X(jg_index_select_dim0_schema)
PK_OPS_DECLARE(fbgemm_jagged_ops, JG_OPS);

/* The attributes of each op: A(op, name, TYPE, default, flags, doc, extra)
** (pack.h). Value constraints are checked by the core: lengths and row
** counts >= 0 (the kernels check them too). padding_value has none: -inf
** and NaN padding are meaningful, and integer outputs check it is
** representable. The two bmm ops share JG_BMM_ATTRS. */
#define JG_TO_PADDED_ATTRS(A, op)                                                                  \
    A(op, max_lengths, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,             \
      "one max length per jagged dim: entries kept per row; longer rows are truncated", )          \
    A(op, padding_value, FLOAT, LOOM_DEFAULT_FLOAT(0.0), 0, "value of the positions past a row's length", )
#define JG_TO_PADDED_BACKWARD_ATTRS(A, op)                                                         \
    A(op, total_L, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,                  \
      "rows of the gradient of values (offsets[B] <= total_L)", )
#define JG_TO_JAGGED_ATTRS(A, op)                                                                  \
    A(op, total_L, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG,                                       \
      "rows of the output (default: the last offset); rows past a dense row's extent are 0", )
#define JG_BMM_ATTRS(A, op)                                                                        \
    A(op, max_L, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,                    \
      "rows of each batch row that take part; later rows give 0", )
#define JG_INDEX_SELECT_ATTRS(A, op)                                                               \
    A(op, consecutive_range_start, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                     \
      "backward hint of fbgemm's GPU path; no effect on the forward", )                            \
    A(op, consecutive_range_length, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                    \
      "backward hint of fbgemm's GPU path; no effect on the forward", )                            \
    A(op, skip_indices_sorting_fwd, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                 \
      "fbgemm's GPU path sorts indices for locality unless set; no effect on the result", )
PK_ATTR_ENUM(jg_to_padded, JG_TO_PADDED_ATTRS);
PK_ATTR_ENUM(jg_to_padded_backward, JG_TO_PADDED_BACKWARD_ATTRS);
PK_ATTR_ENUM(jg_to_jagged, JG_TO_JAGGED_ATTRS);
PK_ATTR_ENUM(jg_bmm, JG_BMM_ATTRS);
PK_ATTR_ENUM(jg_index_select, JG_INDEX_SELECT_ATTRS);

/* Geometry of one call, filled by the jg_prepare_* functions below. */
typedef struct jg_plan {
    loom_dtype dtype;          /* of the values / dense operands */
    size_t es;                 /* bytes per element */
    int64_t B;                 /* batch rows (offsets has B+1 entries) */
    int64_t max_L;             /* padded length (rows kept per batch row); the last level's */
    int64_t D;                 /* elements per jagged row (inner dims flattened) */
    int64_t total_L;           /* rows of the jagged operand or output */
    int64_t M, K, N;           /* bmm: sizes as the op names them */
    const int64_t *off;        /* B+1 validated offsets, host memory (= offs[0]) */
    unsigned char pad[8];      /* jagged_to_padded_dense: the padding element's bytes (es of them) */
    /* jagged dimensions: offsets and max length per level; outer = the
    ** product of the max lengths above the last level (1 with one level) */
    int32_t levels;
    const int64_t *offs[JG_MAX_LEVELS];
    int64_t offs_count[JG_MAX_LEVELS];
    int64_t max_Ls[JG_MAX_LEVELS];
    int64_t outer;
    void *host_owned[JG_MAX_LEVELS];   /* offs a device call allocated: jg_plan_release frees them */
} jg_plan;

/* The last level's entry that outer position q (0 <= q < outer) of batch
** row b reaches, or -1 when a level above is shorter than the position. */
static inline int64_t jg_leaf(const jg_plan *p, int64_t b, int64_t q)
{
    int64_t idx = b, stride = p->outer;
    for (int32_t k = 0; k + 1 < p->levels; k++) {
        stride /= p->max_Ls[k];
        int64_t i = q / stride % p->max_Ls[k];
        if (i >= p->offs[k][idx + 1] - p->offs[k][idx])
            return -1;
        idx = p->offs[k][idx] + i;
    }
    return idx;
}

/* Releases what a jg_prepare_* of a device call allocated on the host. */
void jg_plan_release(jg_plan *p);

/* Read `count` offsets of `t` (int32 or int64) from `host_data` (the tensor
** data, or a host copy of it) into dst as int64, checking that
** 0 <= off[0] <= ... <= off[count-1], and off[count-1] == rows when
** rows >= 0 (else <= -(rows + 1), the largest last offset allowed). */
loom_status jg_read_offsets(const char *arg, const loom_tensor *t, const void *host_data, int64_t rows,
                            int64_t *dst);

/* Checks done before the offsets are read: `t` is 1-D int32/int64 with at
** least one entry, compact. Returns the entry count in *count. */
loom_status jg_check_offsets_tensor(const char *arg, const loom_tensor *t, int64_t *count);

/* `t` is compact and has rank >= min_rank. */
loom_status jg_check_tensor(const char *arg, const loom_tensor *t, int32_t min_rank);

/* Product of t's dims from `from` on; -1 when it overflows an int64. */
int64_t jg_inner(const loom_tensor *t, int32_t from);

/* Bytes of every input and output: the cost of the memory-bound ops. */
void jg_cost_bytes(const loom_call *call, double *flops, double *bytes);

/*
** Per-op preparation shared by every backend: checks shapes, dtypes and
** attributes, reads the offsets through `read` (the cpu path passes
** jg_read_host, the cuda path a function that copies them to the host
** first), and allocates the outputs. On LOOM_OK the plan is complete.
*/
typedef loom_status (*jg_offsets_reader)(loom_call *call, const char *arg, const loom_tensor *t,
                                         int64_t rows, int64_t *dst);
loom_status jg_read_host(loom_call *call, const char *arg, const loom_tensor *t, int64_t rows, int64_t *dst);

loom_status jg_prepare_to_padded(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out);
loom_status jg_prepare_to_padded_backward(loom_call *call, jg_offsets_reader read, jg_plan *p,
                                          loom_tensor **out);
loom_status jg_prepare_to_jagged(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out);
/* add (dense output), add_jagged_output and mul (jagged output). */
loom_status jg_prepare_elementwise(loom_call *call, jg_offsets_reader read, int dense_out, jg_plan *p,
                                   loom_tensor **out);
/* outs[0] = grad of x_values (jagged), outs[1] = grad of y (dense). */
loom_status jg_prepare_mul_backward(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor *outs[2]);
loom_status jg_prepare_dense_bmm(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out);
loom_status jg_prepare_jagged_bmm(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out);
/* permute102: p->B = b, p->M = m, p->K = k, p->N = n. */
loom_status jg_prepare_permute102(loom_call *call, jg_plan *p, loom_tensor **out);
/* index_select_dim0: p->B = number of indices, p->total_L = input rows;
** indices are checked against the input's rows by the backend. */
loom_status jg_prepare_index_select(loom_call *call, jg_plan *p, loom_tensor **out);
/* Checks `count` int32/int64 indices (host memory) lie in [0, rows). */
loom_status jg_check_indices(const loom_tensor *t, const void *host_data, int64_t count, int64_t rows);

/* Padding value as `es` bytes of `dtype` (ints: must be integral and in
** range, as a C conversion would otherwise be undefined). */
loom_status jg_padding_bytes(loom_dtype dtype, double v, unsigned char out[8]);

#endif /* LOOM_FBGEMM_JAGGED_H */
