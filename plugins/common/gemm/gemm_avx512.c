/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm_avx512.c - the AVX-512F micro-kernels (gemm_kern.h), built with
** -mavx512f -mfma (meson) and called only when the core's CPU features
** include AVX512F (gemm.c), so LOOM_CPU_MAX_ISA=avx2 turns them off. 32 zmm
** registers: 12 x 32 f32 / 12 x 16 f64 tiles, 24 accumulators + 2 B
** vectors + 1 broadcast. The same template as the AVX2 kernels, which this
** project's test machines run; this file is only compiled there (its test
** skips without AVX-512).
*/
#include <immintrin.h>

#include "gemm.h"
#include "gemm_internal.h"
#include "../simd_avx512.h"

#define KREGS 32

/* f32 */
#define T float
#define VT __m512
#define VL 16
#define KMR 12
#define GK_NAME(x) x##_avx512_f32
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VMUL(a, b) _mm512_mul_ps(a, b)
#define VADD(a, b) _mm512_add_ps(a, b)
#include "gemm_kern.h"

/* f64 */
#define T double
#define VT __m512d
#define VL 8
#define KMR 12
#define GK_NAME(x) x##_avx512_f64
#define VZERO() _mm512_setzero_pd()
#define VLOAD(p) _mm512_loadu_pd(p)
#define VSTORE(p, v) _mm512_storeu_pd(p, v)
#define VBCAST(p) _mm512_set1_pd(*(p))
#define VSET1(x) _mm512_set1_pd(x)
#define VFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define VMUL(a, b) _mm512_mul_pd(a, b)
#define VADD(a, b) _mm512_add_pd(a, b)
#include "gemm_kern.h"

/* f32 MC 216 (18 micro-rows): a ViT's 197 tokens (and anything up to 216
** rows) are one row of tiles, so B is packed slice by slice inside the
** tiles instead of through memory, which at batch 1 is the weights' second
** pass over DRAM. KC 768 (an A block of 648 KB and a B piece of 96 KB, both
** within the 1-2 MB L2 of the AVX-512 cores): a transformer's depth of 768
** is one slice, so C is written once instead of read back per slice; with
** the next B piece prefetched (gemm_kern.h), B read from L2 keeps the
** kernel at its L1 rate (197x768x2304 from DRAM: 137 -> 150 GFLOP/s on one
** core of a 200 GFLOP/s Xeon; 1576x768x2304: 129 -> 146). */
const pk_gemm_kern pk_gemm_kern_avx512[2] = {
    { "avx512", 12, 32, 16, 768, 216, ukr_avx512_f32, rows_avx512_f32, gemv_avx512_f32,
      pk_gemm_pack_a12_avx2_f32, pk_gemm_pack_b32_avx2_f32, pk_gemm_epilogue_f32_avx512 },
    { "avx512", 12, 16, 8, 256, 96, ukr_avx512_f64, rows_avx512_f64, gemv_avx512_f64, NULL, NULL, NULL },
};

/* ------------------------------------------------------------ the epilogue */

/* gemm_internal.h: 16 columns of the f32 epilogue, epilogue8 of gemm_avx2.c
** with 16 lanes (the same operations, simd_avx512.h's exp and GELU): the
** bits are the AVX2 epilogue's. m masks the tail (all lanes when full). */
static inline __m512 epilogue16(const struct pk_gemm_args *g, __m512 v, const float *bias_col, __m512 brow,
                                const float *rr, __mmask16 m)
{
    const __m512 zero = _mm512_setzero_ps();
    if (g->bias_kind == PK_GEMM_BIAS_COL)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias_col));
    else if (g->bias_kind == PK_GEMM_BIAS_ROW)
        v = _mm512_add_ps(v, brow);
    if (g->act == PK_GEMM_ACT_RELU)
        v = _mm512_max_ps(zero, v);     /* NaN (the second operand) and -0 stay, as v < 0 ? 0 : v */
    else if (g->act == PK_GEMM_ACT_SILU)
        v = _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), pk_exp_ps512(_mm512_sub_ps(zero, v))));
    else if (g->act == PK_GEMM_ACT_GELU_ERF)
        v = pk_gelu_erf_ps512(v);
    if (rr != NULL)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, rr));
    return v;
}

void pk_gemm_epilogue_f32_avx512(const struct pk_gemm_args *g, float *c, int64_t ldc, const float *bias,
                                 const float *res, int64_t i0, int64_t j0, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        float *row = c + r * ldc;
        const float *rr = res != NULL ? res + (i0 + r) * g->ldr + j0 : NULL;
        const float *bc = g->bias_kind == PK_GEMM_BIAS_COL ? bias + j0 : NULL;
        const __m512 brow = g->bias_kind == PK_GEMM_BIAS_ROW ? _mm512_set1_ps(bias[i0 + r]) : _mm512_setzero_ps();
        for (int64_t j = 0; j < cols; j += 16) {
            /* masked loads and stores: lanes past cols are neither read nor written */
            const __mmask16 m = cols - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (cols - j)) - 1);
            _mm512_mask_storeu_ps(row + j, m, epilogue16(g, _mm512_maskz_loadu_ps(m, row + j),
                                                         bc != NULL ? bc + j : NULL, brow,
                                                         rr != NULL ? rr + j : NULL, m));
        }
    }
}
