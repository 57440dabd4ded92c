/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deinterleave_avx2.c - the AVX2 loop that splits 3-channel 8-bit
** interleaved pixels (RGB rows: a JPEG decode's result, a channels-last
** image) into three planes: 32 pixels per step, each 128-bit lane splitting
** 16 interleaved pixels into their R, G and B bytes with three byte
** shuffles per plane. The caller does the tail (and every other layout).
*/
#include <immintrin.h>
#include <stdint.h>

#include "deinterleave.h"

/* For each plane, the shuffles of the three 16-byte blocks of 16 pixels
** (48 bytes): where each output byte comes from in its block, 0x80 = none.
** R: stream bytes 0, 3, .. 45; G: 1, 4, .. 46; B: 2, 5, .. 47. */
#define X 0x80
static const uint8_t deint_masks[3][3][16] __attribute__((aligned(16))) = {
    { { 0, 3, 6, 9, 12, 15, X, X, X, X, X, X, X, X, X, X },
      { X, X, X, X, X, X, 2, 5, 8, 11, 14, X, X, X, X, X },
      { X, X, X, X, X, X, X, X, X, X, X, 1, 4, 7, 10, 13 } },
    { { 1, 4, 7, 10, 13, X, X, X, X, X, X, X, X, X, X, X },
      { X, X, X, X, X, 0, 3, 6, 9, 12, 15, X, X, X, X, X },
      { X, X, X, X, X, X, X, X, X, X, X, 2, 5, 8, 11, 14 } },
    { { 2, 5, 8, 11, 14, X, X, X, X, X, X, X, X, X, X, X },
      { X, X, X, X, X, 1, 4, 7, 10, 13, X, X, X, X, X, X },
      { X, X, X, X, X, X, X, X, X, X, 0, 3, 6, 9, 12, 15 } },
};
#undef X

__attribute__((target("avx2"))) int64_t pk_deinterleave3_u8_avx2(const uint8_t *src, uint8_t *r, uint8_t *g,
                                                                   uint8_t *b, int64_t n)
{
    __m256i m[3][3];
    for (int p = 0; p < 3; p++)
        for (int k = 0; k < 3; k++)
            m[p][k] = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)deint_masks[p][k]));
    int64_t x = 0;
    for (; x + 32 <= n; x += 32) {
        const uint8_t *s = src + 3 * x;
        /* lane 0: pixels x .. x+15, lane 1: pixels x+16 .. x+31 */
        const __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)s)),
                                                  _mm_loadu_si128((const __m128i *)(s + 48)), 1);
        const __m256i bb = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s + 16))),
                                                   _mm_loadu_si128((const __m128i *)(s + 64)), 1);
        const __m256i c = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s + 32))),
                                                  _mm_loadu_si128((const __m128i *)(s + 80)), 1);
        uint8_t *dst[3] = { r, g, b };
        for (int p = 0; p < 3; p++) {
            const __m256i v = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a, m[p][0]),
                                                              _mm256_shuffle_epi8(bb, m[p][1])),
                                              _mm256_shuffle_epi8(c, m[p][2]));
            _mm256_storeu_si256((__m256i *)(dst[p] + x), v);
        }
    }
    return x;
}
