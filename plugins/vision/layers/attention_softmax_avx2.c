/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention_softmax_avx2.c - the attention's row softmax with AVX2+FMA
** (attention.h: attention_softmax_rows_avx2), called only when the core's
** CPU features allow it (attention_fused.c). Per row: the max, exp(x - max)
** written back with the sum, then one multiply by 1 / sum, as the portable
** loop does. exp is Cephes' expf: n = round(x log2 e), r = x - n ln 2 in
** two parts, a degree-5 polynomial, then 2^n in the exponent bits; within
** 2 ulp of expf on [-87, 88] (inputs are max-subtracted, so <= 0; below
** -87 it returns exp(-87), 2e-38, where the exact value is smaller still:
** nothing a row sum of at least 1 can see).
*/
#include <math.h>
#include <stdint.h>

#include "attention.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "simd_avx2.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 exp_ps(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654f), hi = _mm256_set1_ps(88.3762626647949f);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

AVX2 static inline float exp_one(float x)
{
    return _mm_cvtss_f32(_mm256_castps256_ps128(exp_ps(_mm256_set1_ps(x))));
}

AVX2 void attention_softmax_rows_avx2(float *s, int64_t rows, int64_t len)
{
    for (int64_t i = 0; i < rows; i++) {
        float *r = s + i * len;
        int64_t j = 0;
        __m256 vm = _mm256_set1_ps(-INFINITY);
        for (; j + 8 <= len; j += 8)
            vm = _mm256_max_ps(vm, _mm256_loadu_ps(r + j));
        float m = pk_hmax_ps(vm);
        for (; j < len; j++)
            m = r[j] > m ? r[j] : m;
        const __m256 bm = _mm256_set1_ps(m);
        __m256 vs = _mm256_setzero_ps();
        for (j = 0; j + 8 <= len; j += 8) {
            __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(r + j), bm));
            _mm256_storeu_ps(r + j, e);
            vs = _mm256_add_ps(vs, e);
        }
        float sum = pk_hsum_ps(vs);
        for (; j < len; j++) {
            r[j] = exp_one(r[j] - m);
            sum += r[j];
        }
        const __m256 inv = _mm256_set1_ps(1.0f / sum);
        for (j = 0; j + 8 <= len; j += 8)
            _mm256_storeu_ps(r + j, _mm256_mul_ps(_mm256_loadu_ps(r + j), inv));
        for (; j < len; j++)
            r[j] *= 1.0f / sum;
    }
}
#endif
