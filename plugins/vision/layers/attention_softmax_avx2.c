/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention_softmax_avx2.c - the attention's row softmax with AVX2+FMA
** (attention.h: attention_softmax_rows_avx2), called only when the core's
** CPU features allow it (attention_fused.c). Per row: the max, exp(x - max)
** written back with the sum, then one multiply by 1 / sum, as the portable
** loop does. exp is simd_avx2.h's pk_exp_ps (Cephes' expf, within 2 ulp
** on [-87, 88]; the inputs are max-subtracted, so <= 0, and below -87 it
** returns exp(-87), 2e-38, where the exact value is smaller still: nothing
** a row sum of at least 1 can see).
*/
#include <math.h>
#include <stdint.h>

#include "attention.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "simd_avx2.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline float exp_one(float x)
{
    return _mm_cvtss_f32(_mm256_castps256_ps128(pk_exp_ps(_mm256_set1_ps(x))));
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
            __m256 e = pk_exp_ps(_mm256_sub_ps(_mm256_loadu_ps(r + j), bm));
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
