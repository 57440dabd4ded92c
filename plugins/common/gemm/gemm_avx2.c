/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm_avx2.c - the AVX2+FMA micro-kernels (gemm_kern.h), built with
** -mavx2 -mfma (meson) and called only when the core's CPU features allow
** AVX2 and FMA (gemm.c). 16 ymm registers: 6 x 16 f32 / 6 x 8 f64 tiles,
** 12 accumulators + 2 B vectors + 1 broadcast.
*/
#include <immintrin.h>

#include "gemm.h"
#include "gemm_internal.h"
#include "../simd_avx2.h"

#define KREGS 16

/* f32 */
#define T float
#define VT __m256
#define VL 8
#define KMR 6
#define GK_NAME(x) x##_avx2_f32
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VMUL(a, b) _mm256_mul_ps(a, b)
#define VADD(a, b) _mm256_add_ps(a, b)
#include "gemm_kern.h"

/* f64 */
#define T double
#define VT __m256d
#define VL 4
#define KMR 6
#define GK_NAME(x) x##_avx2_f64
#define VZERO() _mm256_setzero_pd()
#define VLOAD(p) _mm256_loadu_pd(p)
#define VSTORE(p, v) _mm256_storeu_pd(p, v)
#define VBCAST(p) _mm256_broadcast_sd(p)
#define VSET1(x) _mm256_set1_pd(x)
#define VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define VMUL(a, b) _mm256_mul_pd(a, b)
#define VADD(a, b) _mm256_add_pd(a, b)
#include "gemm_kern.h"

/* Six rows of a row-major f32 A into a [k][6] panel: 8 steps of depth at
** a time as one 8 x 8 transpose (two zero rows), stored 4 + 2 per step. */
static void pack_a6_avx2_f32(void *dst_, const void *src_, int64_t sw, int64_t k)
{
    float *dst = dst_;
    const float *src = src_;
    const __m256 z = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= k; p += 8, dst += 48) {
        __m256 r0 = _mm256_loadu_ps(src + p), r1 = _mm256_loadu_ps(src + sw + p);
        __m256 r2 = _mm256_loadu_ps(src + 2 * sw + p), r3 = _mm256_loadu_ps(src + 3 * sw + p);
        __m256 r4 = _mm256_loadu_ps(src + 4 * sw + p), r5 = _mm256_loadu_ps(src + 5 * sw + p);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        __m256 u[8] = {
            _mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
            _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE),
            _mm256_shuffle_ps(t4, z, 0x44), _mm256_shuffle_ps(t4, z, 0xEE),
            _mm256_shuffle_ps(t5, z, 0x44), _mm256_shuffle_ps(t5, z, 0xEE),
        };
        /* step q: rows 0-3 in the low half of u[q % 4], rows 4-5 in u[4 + q % 4]; q >= 4 in the high halves */
        for (int q = 0; q < 8; q++) {
            __m128 lo = q < 4 ? _mm256_castps256_ps128(u[q]) : _mm256_extractf128_ps(u[q - 4], 1);
            __m128 hi = q < 4 ? _mm256_castps256_ps128(u[q + 4]) : _mm256_extractf128_ps(u[q], 1);
            _mm_storeu_ps(dst + q * 6, lo);
            _mm_storel_pi((__m64 *)(void *)(dst + q * 6 + 4), hi);
        }
    }
    for (; p < k; p++, dst += 6)
        for (int i = 0; i < 6; i++)
            dst[i] = src[i * sw + p];
}

/* W lines of f32 (W a multiple of 4), line i at src + i * sw with its depth
** contiguous, into a [k][W] panel: dst[p * W + i] = src[i * sw + p]. Groups
** of 8 lines, 8 steps of depth at a time as one 8 x 8 register transpose,
** then a group of 4 by 4 x 4 transposes (plain copies: the values are the
** same bits as the scalar packing's). */
static void pack_lines_t(float *dst, const float *src, int64_t sw, int64_t k, int64_t W)
{
    int64_t g = 0;
    for (; g + 8 <= W; g += 8) {
        const float *s = src + g * sw;
        float *d = dst + g;
        int64_t p = 0;
        for (; p + 8 <= k; p += 8) {
            __m256 r0 = _mm256_loadu_ps(s + p), r1 = _mm256_loadu_ps(s + sw + p);
            __m256 r2 = _mm256_loadu_ps(s + 2 * sw + p), r3 = _mm256_loadu_ps(s + 3 * sw + p);
            __m256 r4 = _mm256_loadu_ps(s + 4 * sw + p), r5 = _mm256_loadu_ps(s + 5 * sw + p);
            __m256 r6 = _mm256_loadu_ps(s + 6 * sw + p), r7 = _mm256_loadu_ps(s + 7 * sw + p);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *o = d + p * W;
            _mm256_storeu_ps(o + 0 * W, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(o + 1 * W, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(o + 2 * W, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(o + 3 * W, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(o + 4 * W, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(o + 5 * W, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(o + 6 * W, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(o + 7 * W, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (; p < k; p++)
            for (int i = 0; i < 8; i++)
                d[p * W + i] = s[i * sw + p];
    }
    if (g < W) {
        const float *s = src + g * sw;
        float *d = dst + g;
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
            __m128 r0 = _mm_loadu_ps(s + p), r1 = _mm_loadu_ps(s + sw + p);
            __m128 r2 = _mm_loadu_ps(s + 2 * sw + p), r3 = _mm_loadu_ps(s + 3 * sw + p);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(d + p * W, r0);
            _mm_storeu_ps(d + (p + 1) * W, r1);
            _mm_storeu_ps(d + (p + 2) * W, r2);
            _mm_storeu_ps(d + (p + 3) * W, r3);
        }
        for (; p < k; p++)
            for (int i = 0; i < 4; i++)
                d[p * W + i] = s[i * sw + p];
    }
}

void pk_gemm_pack_a12_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k)
{
    pack_lines_t(dst, src, sw, k, 12);
}

void pk_gemm_pack_b16_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k)
{
    pack_lines_t(dst, src, sw, k, 16);
}

void pk_gemm_pack_b32_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k)
{
    pack_lines_t(dst, src, sw, k, 32);
}

/* f32 MC 198 (33 micro-rows, an A block of 198 KB within a 512 KB L2): a
** ViT's 197 tokens are one row of tiles, so B (the weights) is packed slice
** by slice into L1 inside the tiles instead of in a packing phase through
** memory, which at batch 1 is a second pass over 7-9 MB per linear. MC only
** groups rows: the depth order of every sum, hence the bits, is unchanged. */
const pk_gemm_kern pk_gemm_kern_avx2[2] = {
    { "avx2-fma", 6, 16, 8, 256, 198, ukr_avx2_f32, rows_avx2_f32, gemv_avx2_f32, pack_a6_avx2_f32,
      pk_gemm_pack_b16_avx2_f32, pk_gemm_epilogue_f32_avx2 },
    { "avx2-fma", 6, 8, 4, 256, 72, ukr_avx2_f64, rows_avx2_f64, gemv_avx2_f64, NULL, NULL, NULL },
};

/* gemm_internal.h: the vector epilogue of 8 columns at c (bias at bias_col
** for a per-column one, brow for a per-row one; residual at rr or none). */
static inline __m256 epilogue8(const struct pk_gemm_args *g, __m256 v, const float *bias_col, __m256 brow,
                               const float *rr, __m256i m, int full)
{
    const __m256 zero = _mm256_setzero_ps();
    if (g->bias_kind == PK_GEMM_BIAS_COL)
        v = _mm256_add_ps(v, full ? _mm256_loadu_ps(bias_col) : _mm256_maskload_ps(bias_col, m));
    else if (g->bias_kind == PK_GEMM_BIAS_ROW)
        v = _mm256_add_ps(v, brow);
    if (g->act == PK_GEMM_ACT_RELU)
        v = _mm256_max_ps(zero, v);     /* NaN (the second operand) and -0 stay, as v < 0 ? 0 : v */
    else if (g->act == PK_GEMM_ACT_SILU)
        v = _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), pk_exp_ps(_mm256_sub_ps(zero, v))));
    else if (g->act == PK_GEMM_ACT_GELU_ERF)
        v = pk_gelu_erf_ps(v);
    if (rr != NULL)
        v = _mm256_add_ps(v, full ? _mm256_loadu_ps(rr) : _mm256_maskload_ps(rr, m));
    return v;
}

void pk_gemm_epilogue_f32_avx2(const struct pk_gemm_args *g, float *c, int64_t ldc, const float *bias,
                               const float *res, int64_t i0, int64_t j0, int64_t rows, int64_t cols)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), all = _mm256_set1_epi32(-1);
    for (int64_t r = 0; r < rows; r++) {
        float *row = c + r * ldc;
        const float *rr = res != NULL ? res + (i0 + r) * g->ldr + j0 : NULL;
        const float *bc = g->bias_kind == PK_GEMM_BIAS_COL ? bias + j0 : NULL;
        const __m256 brow = g->bias_kind == PK_GEMM_BIAS_ROW ? _mm256_set1_ps(bias[i0 + r]) : _mm256_setzero_ps();
        int64_t j = 0;
        for (; j + 8 <= cols; j += 8)
            _mm256_storeu_ps(row + j, epilogue8(g, _mm256_loadu_ps(row + j), bc != NULL ? bc + j : NULL, brow,
                                                rr != NULL ? rr + j : NULL, all, 1));
        if (j < cols) {     /* the tail through a mask (AMD's masked store is microcoded: only here) */
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols - j)), lane);
            _mm256_maskstore_ps(row + j, m, epilogue8(g, _mm256_maskload_ps(row + j, m), bc != NULL ? bc + j : NULL,
                                                      brow, rr != NULL ? rr + j : NULL, m, 0));
        }
    }
}
