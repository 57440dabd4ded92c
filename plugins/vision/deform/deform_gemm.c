/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_gemm.c - see deform_gemm.h: thin wrappers over the common GEMM,
** whose micro-kernel (AVX-512F, AVX2+FMA or portable) follows the core's
** CPU features.
*/
#include "deform_gemm.h"

size_t deform_gemm_packed_bytes(loom_dtype dt, int64_t m, int64_t k)
{
    return pk_gemm_pack_bytes(0, dt, m, k);
}

void deform_gemm_pack_weights(pk_gemm_packed *out, void *dst, loom_dtype dt, const void *w, int64_t m, int64_t k)
{
    pk_gemm_operand op = pk_gemm_matrix(w, dt, k, 0);
    pk_gemm_pack(out, dst, 0, &op, m, k);
}

static pk_gemm_args args_of(loom_dtype dt, int64_t m, int64_t n, int64_t k, const pk_gemm_packed *apacked,
                            const void *a, int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs,
                            void *c, int64_t ldc, int accumulate, const void *bias)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = (pk_gemm_operand){ .data = a, .dtype = dt, .rs = ars, .cs = acs, .packed = apacked };
    g.b = (pk_gemm_operand){ .data = b, .dtype = dt, .rs = brs, .cs = bcs };
    g.c = c;
    g.ldc = ldc;
    g.beta = accumulate ? 1.0 : 0.0;
    if (bias != NULL) {
        g.bias_kind = PK_GEMM_BIAS_ROW;
        g.bias = bias;
    }
    return g;
}

size_t deform_gemm_workspace(loom_dtype dt, int64_t m, int64_t n, int64_t k, int a_packed)
{
    pk_gemm_packed fake = { .which = 0, .width = pk_gemm_mr(dt), .mn = m, .k = k, .compute = dt };
    pk_gemm_args g = args_of(dt, m, n, k, a_packed ? &fake : NULL, NULL, k, 1, NULL, 1, k, NULL, n, 0, NULL);
    return pk_gemm_serial_workspace(&g);
}

void deform_gemm(loom_dtype dt, int64_t m, int64_t n, int64_t k, const pk_gemm_packed *apacked, const void *a,
                 int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs, void *c, int64_t ldc,
                 int accumulate, const void *bias, void *work, size_t work_bytes)
{
    pk_gemm_args g = args_of(dt, m, n, k, apacked, a, ars, acs, b, brs, bcs, c, ldc, accumulate, bias);
    (void)pk_gemm_serial(&g, work, work_bytes);   /* the workspace was sized for the largest call */
}
