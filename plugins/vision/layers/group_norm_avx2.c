/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_avx2.c - the AVX2 loops of vision.group_norm (group_norm.h):
** a group's shifted sums (of x - shift and its square) in double lanes, and
** the f32 affine step. Called only when pk_cpu_avx2(PK_CPU_FMA) allows it; the
** portable loops are in group_norm_cpu.c.
*/
#include <immintrin.h>

#include "group_norm.h"

static inline __attribute__((target("avx2,fma"))) double hsum_pd(__m256d v)
{
    __m128d q = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}

__attribute__((target("avx2,fma"))) void group_norm_moments_avx2(const float *x, int64_t n, double shift, double *s1,
                                                                 double *s2)
{
    const __m256d k = _mm256_set1_pd(shift);
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, q0 = a0, q1 = a0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), k);
        __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), k);
        a0 = _mm256_add_pd(a0, d0);
        a1 = _mm256_add_pd(a1, d1);
        q0 = _mm256_fmadd_pd(d0, d0, q0);
        q1 = _mm256_fmadd_pd(d1, d1, q1);
    }
    double s = hsum_pd(_mm256_add_pd(a0, a1)), q = hsum_pd(_mm256_add_pd(q0, q1));
    for (; i < n; i++) {
        const double d = (double)x[i] - shift;
        s += d;
        q += d * d;
    }
    *s1 = s;
    *s2 = q;
}

__attribute__((target("avx2,fma"))) void group_norm_affine_avx2(const float *x, float scale, float shift, float *y,
                                                                int64_t n)
{
    const __m256 s = _mm256_set1_ps(scale), b = _mm256_set1_ps(shift);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), s, b));
    for (; i < n; i++)
        y[i] = __builtin_fmaf(x[i], scale, shift);
}
