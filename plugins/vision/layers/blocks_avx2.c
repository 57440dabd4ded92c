/* SPDX-License-Identifier: BSD-3-Clause */
/*
** blocks_avx2.c - the AVX2 loops of vision.squeeze_excitation (blocks.h):
** a plane's sum for the average pool and the plane times its scale. Called
** only when pk_cpu_avx2(PK_CPU_FMA) allows it; the portable loops are in
** squeeze_excitation_cpu.c.
*/
#include <immintrin.h>

#include "blocks.h"

__attribute__((target("avx2,fma"))) float blocks_sum_avx2(const float *x, int64_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    float total = _mm_cvtss_f32(q);
    for (; i < n; i++)
        total += x[i];
    return total;
}

__attribute__((target("avx2,fma"))) void blocks_scale_avx2(const float *x, float s, float *y, int64_t n)
{
    const __m256 v = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), v));
    for (; i < n; i++)
        y[i] = x[i] * s;
}
