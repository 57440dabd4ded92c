/*
** jagged_gemm.c - see jagged_gemm.h.
**
** f32 and f64: the common GEMM (plugins/common/gemm, pk_gemm_serial) with
** the bias as its per-column epilogue. Their goldens (fbgemm_gpu's f32
** results, an f64 reference) are compared within 2e-5 / 1e-12 (the sum of
** K <= 40 products in another order than fbgemm's), not bit for bit, so
** the common GEMM's order (KC slices, FMA micro-tiles, bias last) keeps
** them.
**
** The 16-bit jagged bmm (jg_gemm_f32_rounded) stays here, outside the
** common GEMM, on purpose: fbgemm's CPU kernel computes each product in the
** 16-bit type (scalar_t * scalar_t, i.e. the f32 product rounded to f16 /
** bf16) and adds it to an f32 sum over k in order. A GEMM that accumulates
** raw f32 products (FMA or not) differs from that in the last bit of the
** 16-bit result on a sizable share of elements, and the goldens of those
** ops are fbgemm's own bits; a product-rounding mode would make every
** micro-kernel of the common GEMM carry a conversion per FMA for one user.
** The loop below is exactly fbgemm's order: for each output row, p = 0..k-1
** in order, c[j] += round16(a * b[j]).
*/
#include "gemm.h"
#include "half.h"
#include "jagged_gemm.h"

const char *jg_gemm_isa(void) { return pk_gemm_isa_name(); }

static pk_gemm_args args_of(int f64, int64_t m, int64_t n, int64_t k, const void *A, int64_t rsa, int64_t csa,
                            const void *B, int64_t ldb, void *C, int64_t ldc, const void *bias)
{
    loom_dtype dt = f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32;
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

size_t jg_gemm_workspace(int f64, int64_t m, int64_t n, int64_t k)
{
    /* the strides do not change the workspace; a transposed A is the worst case of none */
    pk_gemm_args g = args_of(f64, m, n, k, NULL, 1, m, NULL, n, NULL, n, NULL);
    return pk_gemm_serial_workspace(&g);
}

void jg_gemm_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa, const float *B,
                 int64_t ldb, float *C, int64_t ldc, const float *bias, void *work, size_t work_bytes)
{
    pk_gemm_args g = args_of(0, m, n, k, A, rsa, csa, B, ldb, C, ldc, bias);
    (void)pk_gemm_serial(&g, work, work_bytes);   /* the workspace was sized for the largest call */
}

void jg_gemm_f64(int64_t m, int64_t n, int64_t k, const double *A, int64_t rsa, int64_t csa, const double *B,
                 int64_t ldb, double *C, int64_t ldc, const double *bias, void *work, size_t work_bytes)
{
    pk_gemm_args g = args_of(1, m, n, k, A, rsa, csa, B, ldb, C, ldc, bias);
    (void)pk_gemm_serial(&g, work, work_bytes);
}

static float round_f16(float v) { return pk_f16_to_f32(pk_f32_to_f16(v)); }
static float round_bf16(float v) { return pk_bf16_to_f32(pk_f32_to_bf16(v)); }

void jg_gemm_f32_rounded(int round16, int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa,
                         const float *B, int64_t ldb, float *C, int64_t ldc)
{
    float (*round)(float) = round16 == 1 ? round_f16 : round_bf16;
    for (int64_t i = 0; i < m; i++) {
        float *c = C + i * ldc;
        for (int64_t j = 0; j < n; j++)
            c[j] = 0;
        for (int64_t p = 0; p < k; p++) {
            const float a = A[i * rsa + p * csa], *b = B + p * ldb;
            for (int64_t j = 0; j < n; j++)
                c[j] += round(a * b[j]);
        }
    }
}
