/* SPDX-License-Identifier: BSD-3-Clause */
/*
** simd_avx2.h - the horizontal reductions of 256-bit vectors that the packs'
** AVX2 loops end with. Include it only from files whose callers check the
** core's CPU features first (plugins/common/cpu.h): the functions carry
** target("avx2") and are inlined into AVX2 functions only.
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

#endif
#endif
