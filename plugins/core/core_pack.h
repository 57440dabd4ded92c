/* SPDX-License-Identifier: BSD-3-Clause */
/*
** core_pack.h - declarations shared by the files of the `core` operator packs
** (core.so and core-cuda.so). Everything here has hidden visibility: the
** packs export only loom_plugin_entry.
**
** Invariant: pk_host (pack.h) is set by the pack's init before any kernel,
** object or device callback can run, and stays valid until the core shuts down.
*/
#ifndef LOOM_CORE_PACK_H
#define LOOM_CORE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"
#include "pack.h"


/* ------------------------------------------------------------ schemas.c */

/* One definition per op, compiled into both packs so they register
** identical schemas. */
extern const loom_op_schema core_matmul_schema;
extern const loom_op_schema core_add_schema;
extern const loom_op_schema core_cast_schema;
extern const loom_op_schema core_linear_schema;
extern const loom_object_class core_linear_class;

/* The attributes of each op: A(op, name, TYPE, default, flags, doc, extra). */
#define CORE_ADD_ATTRS(A, op)                                                                  \
    A(op, alpha, FLOAT, LOOM_DEFAULT_FLOAT(1.0), 0, "multiplier of other (integral for integer dtypes)", )
#define CORE_CAST_ATTRS(A, op)                                                                 \
    A(op, dtype, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                  \
      "target dtype name: f32 f64 f16 bf16 f8e4m3 i8 u8 i16 i32 i64 bool c64 c128", )
PK_ATTR_ENUM(core_add, CORE_ADD_ATTRS);
PK_ATTR_ENUM(core_cast, CORE_CAST_ATTRS);

/* "f32[2,3]" into buf; returns buf. */
char *core_describe(const loom_tensor *t, char *buf, size_t size);

/* ------------------------------------------------------------ checks.c */

/* The broadcast geometry of input[.., M, K] @ other[.., K, N]. Batch
** dimensions broadcast NumPy-style; a_bstride/b_bstride give, per output
** batch dimension, the element stride into each input (0 = broadcast). */
typedef struct core_mm_geom {
    int64_t m, n, k;
    int32_t batch_ndim;
    int64_t batch_shape[LOOM_MAX_NDIM];
    int64_t a_bstride[LOOM_MAX_NDIM], b_bstride[LOOM_MAX_NDIM];
    int64_t batch;                  /* product of batch_shape */
    int64_t a_rs, a_cs, b_rs, b_cs; /* element strides of rows/cols of one matrix */
    int32_t out_ndim;
    int64_t out_shape[LOOM_MAX_NDIM];
} core_mm_geom;

/* Check ranks (>= 2), K agreement, batch broadcasting; fill g. Names the
** arguments `aname`/`bname` in errors. Does not check dtypes. */
loom_status core_mm_geometry(const loom_tensor *a, const loom_tensor *b, const char *aname,
                           const char *bname, core_mm_geom *g);
/* Element offsets of batch index `bi` (row-major over batch_shape). */
void core_mm_batch_offsets(const core_mm_geom *g, int64_t bi, int64_t *aoff, int64_t *boff);

/* Shared cost for core.matmul: 2*B*M*N*K flops; bytes in + out. */
void core_matmul_cost(const loom_call *call, double *flops, double *bytes);

/* ------------------------------------------------------------- gemm.c */

/* Which CPU micro-kernels may run: set once at init from cpuid and
** LOOM_CPU_MAX_ISA. */
typedef enum core_isa { CORE_ISA_SCALAR = 0, CORE_ISA_AVX2 = 1 } core_isa;
extern core_isa core_cpu_isa;
void core_cpu_isa_init(void);
const char *core_cpu_isa_name(void);

/* C[m,n] (compact, ldc = n) = A[m,k] * B[k,n] with arbitrary element
** strides for A and B; elem is LOOM_DTYPE_F32 or LOOM_DTYPE_F64. Blocked and
** threaded with host->parallel_for on ctx. k == 0 writes zeros. */
loom_status core_gemm(loom_exec_ctx *ctx, loom_dtype elem, int64_t m, int64_t n, int64_t k,
                    const void *a, int64_t a_rs, int64_t a_cs,
                    const void *b, int64_t b_rs, int64_t b_cs, void *c);

/* ------------------------------------------------------------ dtypes.c */

/* A value of any loom dtype, kept exactly: integers (and bool) in i,
** real floats in re, complex in re/im. kind says which. Loads leave `from`
** 0; kernels set it to the source dtype (or the compute dtype). */
enum { CORE_KIND_INT = 0, CORE_KIND_FLOAT = 1, CORE_KIND_COMPLEX = 2 };
typedef struct core_value {
    int32_t kind;
    int32_t from;                   /* loom_dtype it came from (NaN encodings depend on it) */
    int64_t i;
    double re, im;
} core_value;

/* One row per dtype: how to read an element into a core_value exactly and
** how to store a core_value with torch's Tensor.to() rules. */
typedef struct core_dtype_row {
    const char *name;
    size_t size;
    int32_t kind;                   /* CORE_KIND_* of the dtype itself */
    int32_t wide;                   /* 1: f64/c128 arithmetic, 0: f32 arithmetic */
    core_value (*load)(const void *p);
    void (*store)(void *p, core_value v);
} core_dtype_row;

/* Fill the names from the host; called by each pack's init before any use. */
void core_dtypes_init(void);
/* NULL for an invalid dtype. */
const core_dtype_row *core_dtype(loom_dtype dtype);

/* Scalar conversions used by the tables and by tests of the pack. */
uint8_t core_f32_to_f8e4m3(float f);
float core_f8e4m3_to_f32(uint8_t v);

/* ------------------------------------------------------------ strided.c */

/* Iterate an N-d index space (the output shape) with one element stride
** per operand per dim (0 = broadcast), in rows of the innermost dim. */
typedef struct core_nd_iter {
    int32_t ndim;                   /* >= 1 after core_nd_setup (scalars become [1]) */
    int64_t shape[LOOM_MAX_NDIM];
    int64_t strides[3][LOOM_MAX_NDIM];
    int32_t n_ops;
} core_nd_iter;

/* Element stride of dim d (computed for compact tensors with NULL strides). */
int64_t core_stride(const loom_tensor *t, int32_t d);
/* Broadcast `in` against out_shape: element strides with 0 on broadcast
** dims. Fails (EINVAL) naming `name` when shapes do not broadcast. */
loom_status core_broadcast_strides(const loom_tensor *in, int32_t out_ndim, const int64_t *out_shape,
                                 const char *name, int64_t *strides);
/* Output shape of broadcasting a and b; fails naming both. */
loom_status core_broadcast_shape(const loom_tensor *a, const loom_tensor *b, int32_t *ndim,
                               int64_t *shape);
/* Set up it over shape[ndim] (ndim 0 becomes [1]) for n_ops <= 3 operands,
** each broadcast against shape; names[] name them in errors. */
loom_status core_iter_setup(core_nd_iter *it, int32_t ndim, const int64_t *shape,
                          const loom_tensor *const *ops, const char *const *names, int32_t n_ops);
/* Element offsets of the start of row `row` (index over all dims but the last). */
void core_nd_row_offsets(const core_nd_iter *it, int64_t row, int64_t *offs);
/* Number of rows (product of all dims but the last) and the row length. */
int64_t core_nd_rows(const core_nd_iter *it);
int64_t core_nd_row_len(const core_nd_iter *it);

#endif /* LOOM_CORE_PACK_H */
