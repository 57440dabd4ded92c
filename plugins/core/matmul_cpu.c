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
    loom_status st = core_matmul_check(call, &g);
    if (st == LOOM_OK)
        st = core_host->alloc_output(call, 0, loom_tensor_dtype_of(a), g.out_ndim, g.out_shape, &out);
    if (st != LOOM_OK)
        return st;
    if (!loom_is_contiguous(out))
        return core_host->fail(LOOM_EINVAL, "'output' must be contiguous for core.matmul on the cpu");
    loom_dtype dt = loom_tensor_dtype_of(a);
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
