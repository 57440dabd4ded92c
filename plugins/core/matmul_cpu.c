/*
** matmul_cpu.c - core.matmul on the CPU: one blocked GEMM (gemm.c) per
** batch element. Inputs may have any strides (transposed views included):
** the packing reads them; the output is written compact row-major.
*/
#include "kernels.h"

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
    size_t es = core_host->dtype_size(dt);
    for (int64_t bi = 0; bi < g.batch; bi++) {
        int64_t aoff, boff;
        core_mm_batch_offsets(&g, bi, &aoff, &boff);
        st = core_gemm(call->ctx, dt, g.m, g.n, g.k,
                       (const char *)loom_data(a) + aoff * (int64_t)es, g.a_rs, g.a_cs,
                       (const char *)loom_data(b) + boff * (int64_t)es, g.b_rs, g.b_cs,
                       (char *)loom_data(out) + bi * g.m * g.n * (int64_t)es);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}
