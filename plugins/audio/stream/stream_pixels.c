/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pixels.c - packed rgb24 rows to planes and back (stream_pixels.h).
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

static void interleave3_scalar(const uint8_t *p0, const uint8_t *p1, const uint8_t *p2, size_t n, uint8_t *d)
{
    for (size_t x = 0; x < n; x++) {
        d[3 * x] = p0[x];
        d[3 * x + 1] = p1[x];
        d[3 * x + 2] = p2[x];
    }
}

/* The inverse: 16 bytes of each plane in; each of the three 16-byte
** outputs gathers its bytes from the planes with one shuffle each. */
__attribute__((target("ssse3"))) static void interleave3_ssse3(const uint8_t *p0, const uint8_t *p1,
                                                               const uint8_t *p2, size_t n, uint8_t *d)
{
    /* output bytes 0..15: pixels 0..5 (5 has only its first byte) */
    const __m128i a0 = _mm_setr_epi8(0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5);
    const __m128i a1 = _mm_setr_epi8(-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1);
    const __m128i a2 = _mm_setr_epi8(-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1);
    /* bytes 16..31: pixels 5..10 */
    const __m128i b0 = _mm_setr_epi8(-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1);
    const __m128i b1 = _mm_setr_epi8(5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10);
    const __m128i b2 = _mm_setr_epi8(-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1);
    /* bytes 32..47: pixels 10..15 */
    const __m128i c0 = _mm_setr_epi8(-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1);
    const __m128i c1 = _mm_setr_epi8(-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1);
    const __m128i c2 = _mm_setr_epi8(10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15);
    size_t x = 0;
    for (; x + 16 <= n; x += 16) {
        const __m128i r = _mm_loadu_si128((const __m128i *)(p0 + x));
        const __m128i g = _mm_loadu_si128((const __m128i *)(p1 + x));
        const __m128i b = _mm_loadu_si128((const __m128i *)(p2 + x));
        _mm_storeu_si128((__m128i *)(d + 3 * x), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, a0), _mm_shuffle_epi8(g, a1)),
                                                              _mm_shuffle_epi8(b, a2)));
        _mm_storeu_si128((__m128i *)(d + 3 * x + 16), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, b0),
                                                                                _mm_shuffle_epi8(g, b1)),
                                                                   _mm_shuffle_epi8(b, b2)));
        _mm_storeu_si128((__m128i *)(d + 3 * x + 32), _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, c0),
                                                                                _mm_shuffle_epi8(g, c1)),
                                                                   _mm_shuffle_epi8(b, c2)));
    }
    interleave3_scalar(p0 + x, p1 + x, p2 + x, n - x, d + 3 * x);
}

sp_interleave3_fn sp_interleave3(void)
{
    return (pk_cpu_features() & LOOM_CPU_SSE42) ? interleave3_ssse3 : interleave3_scalar;
}

sp_deinterleave3_fn sp_deinterleave3(void)
{
    /* SSE4.2 implies SSSE3 on every CPU that has it */
    return (pk_cpu_features() & LOOM_CPU_SSE42) ? deinterleave3_ssse3 : deinterleave3_scalar;
}
