/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_sort.c - LSD radix sort of the prefetch keys (set << shift | linear),
** 11 bits per pass over only the significant bits, all digit histograms
** taken in one read. Stable and O(n): for the benchmark's 524k keys of ~40
** bits that is four scatter passes.
*/
#include <string.h>

#include "cache_internal.h"

#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)
#define MAX_PASSES ((64 + DIGIT_BITS - 1) / DIGIT_BITS)

void fbg_cache__sort_keys(uint64_t *keys, uint64_t *tmp, size_t n, int key_bits)
{
    static _Thread_local uint32_t hist[MAX_PASSES][DIGITS];
    int passes = (key_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    if (n < 2 || passes == 0)
        return;
    memset(hist, 0, sizeof hist[0] * (size_t)passes);
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < passes; p++)
            hist[p][(keys[i] >> (p * DIGIT_BITS)) & (DIGITS - 1)]++;

    uint64_t *src = keys, *dst = tmp;
    for (int p = 0; p < passes; p++) {
        uint32_t *h = hist[p];
        /* a digit that every key shares moves nothing */
        if (h[(src[0] >> (p * DIGIT_BITS)) & (DIGITS - 1)] == n)
            continue;
        uint32_t sum = 0;
        for (uint32_t d = 0; d < DIGITS; d++) {
            uint32_t c = h[d];
            h[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = src[i];
            dst[h[(k >> (p * DIGIT_BITS)) & (DIGITS - 1)]++] = k;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *keys);
}
