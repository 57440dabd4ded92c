/*
** tbe_internal.h - what the files of the tbe module share beyond the
** public contract tbe.h: schemas, name tables, the op front end (plan
** building and bounds checks) and the cpu-private object state.
*/
#ifndef LOOM_FBGEMM_TBE_INTERNAL_H
#define LOOM_FBGEMM_TBE_INTERNAL_H

#include <pthread.h>

#include "fbgemm_pack.h"
#include "quantize.h"
#include "tbe.h"

#define FBG_TBE_CLASS "fbgemm.tbe"

extern const loom_op_schema fbg_quantize_rows_schema;
extern const loom_op_schema fbg_dequantize_rows_schema;
extern const loom_op_schema fbg_tbe_schema;
extern const loom_op_schema fbg_tbe_prefetch_schema;
extern const loom_op_schema fbg_tbe_cache_stats_schema;

/* Attribute indices of the fbgemm.tbe op (schema order). */
enum { TBE_ATTR_POOLING = 0, TBE_ATTR_OUTPUT_DTYPE = 1, TBE_ATTR_BOUNDS = 2 };
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
} fbg_tbe_cpu;

/* LOOM_EFORMAT when the object's weights file has shrunk below what its
** tables need since create (a file truncated in place: reading its mapping
** would raise SIGBUS); LOOM_OK otherwise, or when the file is not watched.
** One fstat. Called by fbg_tbe_plan_build, so by every method and backend. */
loom_status fbg_tbe_check_file(const fbg_tbe_state *s, const char *op);

/* cpu kernels (tbe_forward_cpu.c, quantize_ops.c) */
loom_status fbg_tbe_forward_cpu(loom_exec_ctx *ctx, const fbg_tbe_plan *plan);
extern const loom_kernel_desc fbg_quantize_rows_cpu, fbg_dequantize_rows_cpu;

#endif
