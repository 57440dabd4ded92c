/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pixels.c - packed rgb24 rows to planes (stream_pixels.h).
*/
#include "stream_pixels.h"

#include <immintrin.h>

#include "cpu.h"
#include "loom/plugin.h"

static void deinterleave3_scalar(const uint8_t *s, size_t n, uint8_t *p0, uint8_t *p1, uint8_t *p2)
{
    for (size_t x = 0; x < n; x++) {
        p0[x] = s[3 * x];
        p1[x] = s[3 * x + 1];
        p2[x] = s[3 * x + 2];
    }
}

/* 16 pixels = 48 bytes in three loads; each plane gathers its bytes from
** the three with one shuffle each (-1 lanes give 0) and ORs them. */
__attribute__((target("ssse3"))) static void deinterleave3_ssse3(const uint8_t *s, size_t n, uint8_t *p0, uint8_t *p1,
                                                                 uint8_t *p2)
{
    const __m128i r0 = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i r1 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
    const __m128i r2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
    const __m128i g0 = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i g1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
    const __m128i g2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
    const __m128i b0 = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i b1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
    const __m128i b2 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
    size_t x = 0;
    for (; x + 16 <= n; x += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(s + 3 * x));
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + 3 * x + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(s + 3 * x + 32));
        _mm_storeu_si128((__m128i *)(p0 + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, r0), _mm_shuffle_epi8(b, r1)),
                                                           _mm_shuffle_epi8(c, r2)));
        _mm_storeu_si128((__m128i *)(p1 + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, g0), _mm_shuffle_epi8(b, g1)),
                                                           _mm_shuffle_epi8(c, g2)));
        _mm_storeu_si128((__m128i *)(p2 + x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, b0), _mm_shuffle_epi8(b, b1)),
                                                           _mm_shuffle_epi8(c, b2)));
    }
    deinterleave3_scalar(s + 3 * x, n - x, p0 + x, p1 + x, p2 + x);
}

sp_deinterleave3_fn sp_deinterleave3(void)
{
    /* SSE4.2 implies SSSE3 on every CPU that has it */
    return (pk_cpu_features() & LOOM_CPU_SSE42) ? deinterleave3_ssse3 : deinterleave3_scalar;
}
