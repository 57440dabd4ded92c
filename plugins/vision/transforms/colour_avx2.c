/* SPDX-License-Identifier: BSD-3-Clause */
/*
** colour_avx2.c - the AVX2+FMA row of vision.adjust_sharpness: eight
** outputs a step, with the portable pixel's operations in its order (the
** nine products added to 0 one by one, row by row, as sharpness_at in
** colour_cpu.c; uint8 rounded half to even; the blend one fused
** multiply-add; the clamp keeping NaN as the portable clampf does), so the
** bits are the same.
*/
#include <immintrin.h>

#include "transforms.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 load8_u8(const uint8_t *s)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s)));
}

/* 8 pixels from s (uint8 or float32) at element x */
AVX2 static inline __m256 load8(int u8, const void *s, int64_t x)
{
    return u8 ? load8_u8((const uint8_t *)s + x) : _mm256_loadu_ps((const float *)s + x);
}

AVX2 int64_t sharpness_row_avx2(int u8, const void *above, const void *row, const void *below, void *dst, int64_t w,
                                float around, float middle, float one_minus_factor)
{
    const void *rows[3] = { above, row, below };
    const __m256 wa = _mm256_set1_ps(around), wm = _mm256_set1_ps(middle), c2 = _mm256_set1_ps(one_minus_factor);
    const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(u8 ? 255.0f : 1.0f);
    int64_t x = 1;
    for (; x + 8 <= w - 1; x += 8) {   /* outputs x .. x + 7 read x - 1 .. x + 8 <= w - 1 */
        __m256 sum = _mm256_setzero_ps();
        for (int dy = 0; dy < 3; dy++)
            for (int dx = -1; dx <= 1; dx++)
                sum = _mm256_add_ps(sum, _mm256_mul_ps(load8(u8, rows[dy], x + dx), dy == 1 && dx == 0 ? wm : wa));
        if (u8)
            sum = _mm256_round_ps(sum, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 v = load8(u8, row, x);
        /* clampf(r, lo, hi): max/min return their second operand when one is NaN */
        const __m256 r = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_fmadd_ps(_mm256_sub_ps(sum, v), c2, v)));
        if (u8) {   /* in [0, 255]: truncation as the portable to_u8 */
            const __m256i q = _mm256_cvttps_epi32(r);
            const __m128i q16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            _mm_storel_epi64((__m128i *)((uint8_t *)dst + x), _mm_packus_epi16(q16, q16));
        } else {
            _mm256_storeu_ps((float *)dst + x, r);
        }
    }
    return x;
}
