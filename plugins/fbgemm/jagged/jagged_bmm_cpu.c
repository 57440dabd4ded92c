/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_bmm_cpu.c - jagged_dense_bmm, jagged_jagged_bmm and
** permute102_baddbmm_permute102 on the CPU, each a loop of small GEMMs
** (jagged_gemm.h) threaded over batch rows. The kernels of each dtype are
** instantiated from jagged_bmm_tmpl.h (its comment gives the numerics);
** this file holds what does not depend on the dtype: the geometry, the
** task split and the per-dtype table.
**
**   jagged_dense_bmm:  out rows off[b] + l = x rows @ y[b] for l < min(L_b, max_L), 0 past it
**   jagged_jagged_bmm: out[b] = x_b^T @ y_b over the first min(L_b, max_L) rows
**   permute102:        out[i, j, :] = bias[j, :] + A[i, j, :] @ B[j]
*/
#include <string.h>

#include "dtype_traits.h"
#include "jagged.h"
#include "jagged_cpu.h"
#include "jagged_gemm.h"

/* One call: operands and output in the compute type once staged. */
typedef struct jg_bmm_job {
    const jg_plan *p;
    const void *x, *y, *bias;
    void *out;
    int round_products;       /* jagged bmm: 16-bit products rounded (jagged_bmm_tmpl.h) */
    int jagged_out;           /* the output is jagged values (dense_bmm) */
    int64_t m_blocks;         /* permute102: row blocks per batch entry */
    char *work;               /* per thread: the GEMM's workspace (jagged_gemm.h) */
    size_t work_bytes;
} jg_bmm_job;

#define P102_ROWS 128     /* permute102 rows per task: B[j] is packed once per task, A once per row */

#define PK_SFX f32
#include "jagged_bmm_tmpl.h"
#define PK_SFX f64
#include "jagged_bmm_tmpl.h"
#define PK_SFX f16
#include "jagged_bmm_tmpl.h"
#define PK_SFX bf16
#include "jagged_bmm_tmpl.h"

typedef loom_status (*bmm_run_fn)(loom_call *call, jg_bmm_job *j, loom_tensor *out, const int *idx, int n_idx,
                                  int64_t tasks, int64_t grain, int permute102, const int64_t *ws);
/* per dtype, in PK_FLOAT_DTYPES order (pk_float_index) */
#define RUN_ENTRY(sfx, DTYPE, S, C) jg_bmm_run_##sfx,
static const bmm_run_fn bmm_runs[] = { PK_FLOAT_DTYPES(RUN_ENTRY) };

static int64_t grain_for(double flops_per_item)
{
    int64_t g = (int64_t)(1e5 / (flops_per_item > 1 ? flops_per_item : 1));
    return g > 0 ? g : 1;
}

/* dense_bmm (jagged x [L, K] @ dense y [B, K, N] -> jagged [L, N]) and
** jagged_bmm (jagged x [L, M]^T @ jagged y [L, N] -> dense [B, M, N]): one
** task per batch row of 2 * (mean bag length) * inner * N flops, inner
** being K or M. */
static loom_status run_bag_bmm(loom_call *call, int jagged_out)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jagged_out ? jg_prepare_dense_bmm(call, jg_read_host, &p, &out)
                                : jg_prepare_jagged_bmm(call, jg_read_host, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    double per = 2.0 * (double)(p.B > 0 ? p.total_L / p.B : 0) * (double)(jagged_out ? p.K : p.M) * (double)p.N;
    const int args[2] = { 0, jagged_out ? 2 : 1 };   /* x, y */
    int64_t kept_max = 0;
    for (int64_t b = 0; b < p.B; b++) {
        int64_t len = p.off[b + 1] - p.off[b], kept = len < p.max_L ? len : p.max_L;
        kept_max = kept > kept_max ? kept : kept_max;
    }
    const int64_t ws[3] = { jagged_out ? kept_max : p.M, p.N, jagged_out ? p.K : kept_max };
    jg_bmm_job j = { .p = &p, .round_products = 1, .jagged_out = jagged_out };
    return bmm_runs[pk_float_index(p.dtype)](call, &j, out, args, 2, p.B, grain_for(per), 0, ws);
}

loom_status jg_dense_bmm_cpu(loom_call *call)
{
    return run_bag_bmm(call, 1);
}

loom_status jg_jagged_bmm_cpu(loom_call *call)
{
    return run_bag_bmm(call, 0);
}

loom_status jg_permute102_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_permute102(call, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t m_blocks = (p.M + P102_ROWS - 1) / P102_ROWS;
    double per = 2.0 * (double)(p.M < P102_ROWS ? p.M : P102_ROWS) * (double)p.K * (double)p.N;
    /* inputs in slot order x = A, y = B, bias */
    const int64_t ws[3] = { p.M < P102_ROWS ? p.M : P102_ROWS, p.N, p.K };
    jg_bmm_job j = { .p = &p, .m_blocks = m_blocks };
    return bmm_runs[pk_float_index(p.dtype)](call, &j, out, (const int[]){ 1, 2, 0 }, 3, p.B * m_blocks,
                                             grain_for(per), 1, ws);
}
