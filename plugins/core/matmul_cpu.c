/* SPDX-License-Identifier: BSD-3-Clause */
/*
** matmul_cpu.c - core.matmul on the CPU through the common GEMM (gemm.h).
** Inputs may have any strides (transposed views included): the packing
** reads them; the output is written compact row-major. With at most one
** batch dimension the whole batch is one pk_gemm call (small entries then
** run one per thread); deeper broadcast batches go entry by entry.
*/
#include "kernels.h"
#include "gemm.h"

loom_status core_matmul_cpu(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    core_mm_geom g;
    loom_tensor *out;
    loom_dtype dt = loom_tensor_dtype_of(a);
    /* alloc_output guarantees a compact output, supplied or new. */
    loom_status st = core_matmul_prepare(call, dt, &g, &out);
    if (st != LOOM_OK || out == NULL)
        return st;
    pk_gemm_args ga = PK_GEMM_ARGS_INIT;
    ga.m = g.m;
    ga.n = g.n;
    ga.k = g.k;
    ga.a = (pk_gemm_operand){ .data = loom_data(a), .dtype = dt, .rs = g.a_rs, .cs = g.a_cs };
    ga.b = (pk_gemm_operand){ .data = loom_data(b), .dtype = dt, .rs = g.b_rs, .cs = g.b_cs };
    ga.ldc = g.n;
    ga.c_bs = g.m * g.n;
    if (g.batch_ndim <= 1) {
        ga.batch = g.batch;
        ga.a.bs = g.batch_ndim == 1 ? g.a_bstride[0] : 0;
        ga.b.bs = g.batch_ndim == 1 ? g.b_bstride[0] : 0;
        ga.c = loom_data(out);
        return pk_gemm(call->ctx, &ga);
    }
    size_t es = pk_host->dtype_size(dt);
    for (int64_t bi = 0; bi < g.batch && st == LOOM_OK; bi++) {
        int64_t aoff, boff;
        core_mm_batch_offsets(&g, bi, &aoff, &boff);
        ga.a.data = (const char *)loom_data(a) + aoff * (int64_t)es;
        ga.b.data = (const char *)loom_data(b) + boff * (int64_t)es;
        ga.c = (char *)loom_data(out) + bi * g.m * g.n * (int64_t)es;
        st = pk_gemm(call->ctx, &ga);
    }
    return st;
}
