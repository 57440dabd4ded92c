/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_gemm.c - see jagged_gemm.h.
**
** The common GEMM (plugins/common/gemm, pk_gemm_serial) with the bias as
** its per-column epilogue. The goldens of the f32 and f64 bmm ops
** (fbgemm_gpu's f32 results, an f64 reference) are compared within 2e-5 /
** 1e-12 (the sum of K <= 40 products in another order than fbgemm's), not
** bit for bit, so the common GEMM's order (KC slices, FMA micro-tiles,
** bias last) keeps them. The 16-bit jagged bmm, whose goldens are fbgemm's
** own bits, has its own loop (jagged_bmm_tmpl.h).
*/
#include "gemm.h"
#include "jagged_gemm.h"

static pk_gemm_args args_of(loom_dtype dt, int64_t m, int64_t n, int64_t k, const void *A, int64_t rsa,
                            int64_t csa, const void *B, int64_t ldb, void *C, int64_t ldc, const void *bias)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = (pk_gemm_operand){ .data = A, .dtype = dt, .rs = rsa, .cs = csa };
    g.b = pk_gemm_matrix(B, dt, ldb, 0);
    g.c = C;
    g.ldc = ldc;
    if (bias != NULL) {
        g.bias_kind = PK_GEMM_BIAS_COL;
        g.bias = bias;
    }
    return g;
}

size_t jg_gemm_workspace(loom_dtype compute, int64_t m, int64_t n, int64_t k)
{
    /* the strides do not change the workspace; a transposed A is the worst case of none */
    pk_gemm_args g = args_of(compute, m, n, k, NULL, 1, m, NULL, n, NULL, n, NULL);
    return pk_gemm_serial_workspace(&g);
}

void jg_gemm(loom_dtype compute, int64_t m, int64_t n, int64_t k, const void *A, int64_t rsa, int64_t csa,
             const void *B, int64_t ldb, void *C, int64_t ldc, const void *bias, void *work, size_t work_bytes)
{
    pk_gemm_args g = args_of(compute, m, n, k, A, rsa, csa, B, ldb, C, ldc, bias);
    (void)pk_gemm_serial(&g, work, work_bytes);   /* the workspace was sized for the largest call */
}
