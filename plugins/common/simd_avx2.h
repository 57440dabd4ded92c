/* SPDX-License-Identifier: BSD-3-Clause */
/*
** simd_avx2.h - the horizontal reductions of 256-bit vectors that the packs'
** AVX2 loops end with, and the vector exp their softmaxes and activations
** share. Include it only from files whose callers check the core's CPU
** features first (plugins/common/cpu.h): the functions carry
** target("avx2") (pk_exp_ps target("avx2,fma")) and are inlined into AVX2
** functions only.
*/
#ifndef LOOM_PACK_SIMD_AVX2_H
#define LOOM_PACK_SIMD_AVX2_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define PK_AVX2_INLINE static inline __attribute__((target("avx2")))

/* The sum of the eight lanes: ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)). */
PK_AVX2_INLINE float pk_hsum_ps(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* The sum of the four lanes: (l0+l2) + (l1+l3). */
PK_AVX2_INLINE double pk_hsum_pd(__m256d v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* The largest of the eight lanes (maxps order: no NaN is expected). */
PK_AVX2_INLINE float pk_hmax_ps(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* exp of eight floats: Cephes' expf (x clamped to [-87, 88], range
** reduction by ln 2 in two parts, a degree-6 polynomial, the exponent built
** in the integer unit); relative error below 2 ulp on that range. */
static inline __attribute__((target("avx2,fma"))) __m256 pk_exp_ps(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* GELU (erf) of eight floats: 0.5 x (1 + erf(x / sqrt 2)), with 1 + erf(z)
** as erfc(-z) for z < 0 and 2 - erfc(z) for z >= 0, so the negative side
** keeps its relative accuracy where 1 + erf is small. erfc(|z|) =
** t exp(-z^2 + P(t)), t = 1 / (1 + |z| / 2) (the Chebyshev fit of Numerical
** Recipes' erfcc, fractional error below 1.2e-7), evaluated in f32 with FMA
** and pk_exp_ps: within 16 ulp of the result for x >= -2, 96 ulp on
** [-6, -2) and 1e-13 absolute below (tests/common/test_simd.c), where libm's
** erff formula loses thousands of ulp to the cancellation in 1 + erf.
** NaN stays NaN; x = +inf gives +inf. */
static inline __attribute__((target("avx2,fma"))) __m256 pk_gelu_erf_ps(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
    __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), one));
    __m256 p = _mm256_set1_ps(0.17087277f);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
    __m256 erfc = _mm256_mul_ps(t, pk_exp_ps(_mm256_fnmadd_ps(z, z, p)));
    __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    __m256 one_plus_erf = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), erfc), erfc, neg);
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), one_plus_erf);
}

#endif
#endif
