/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_ways.c - the per-set primitives: finding a linear index among the
** ways of a set, and ordering the ways by cost as fbgemm does.
**
** Way search returns the lowest way that holds the index, like fbgemm's
** lxu_cache_lookup (ballot + ffs). A set never holds an index twice (only
** misses are inserted), so "lowest" only matters for empty tags.
**
** Way order: fbgemm sorts the 32 (64 on AMD) per-lane costs of a set with
** a warp bitonic network (fbgemm_gpu/utils/bitonic_sort.cuh: merges of
** size L = 1, 2, 4, ... whose first stage pairs lane i with i ^ (2L-1),
** then strides L/2 .. 1; a pair swaps only when the lower lane's cost is
** strictly greater). The network is not stable, and equal costs are the
** rule (every way inserted by one prefetch shares its timestamp), so the
** network is replayed exactly here: which way is evicted among equally old
** ones, and hence which rows stay cached, is fbgemm's. Other set sizes are
** padded to the next power of two with INT64_MAX costs, which sort last.
*/
#include <string.h>
#include <stdlib.h>

#include "cpu.h"
#include "cache_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#define FBG_CACHE_X86 1
#include <immintrin.h>
#endif

static int32_t find_portable(const int64_t *tags, int32_t assoc, int64_t v)
{
    for (int32_t w = 0; w < assoc; w++)
        if (tags[w] == v)
            return w;
    return -1;
}

#ifdef FBG_CACHE_X86
__attribute__((target("avx2")))
static int32_t find_avx2(const int64_t *tags, int32_t assoc, int64_t v)
{
    const __m256i x = _mm256_set1_epi64x(v);
    int32_t w = 0;
#define FBG_EQ4(o) ((uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(                   \
        _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(tags + w + (o))), x))))
    for (; w + 16 <= assoc; w += 16) {
        uint32_t m = FBG_EQ4(0) | FBG_EQ4(4) << 4 | FBG_EQ4(8) << 8 | FBG_EQ4(12) << 12;
        if (m != 0)
            return w + __builtin_ctz(m);
    }
    for (; w + 4 <= assoc; w += 4) {
        uint32_t m = FBG_EQ4(0);
        if (m != 0)
            return w + __builtin_ctz(m);
    }
#undef FBG_EQ4
    for (; w < assoc; w++)
        if (tags[w] == v)
            return w;
    return -1;
}
#endif

fbg_cache_find_fn fbg_cache__pick_find(void)
{
#ifdef FBG_CACHE_X86
    if (pk_cpu_avx2(0))
        return find_avx2;
#endif
    return find_portable;
}

/* The network on packed entries (cost + 1) << WAY_BITS | way: a compare-
** exchange looks at the cost bits only, so equal costs never swap (ties are
** not broken by way), and moves cost and way together without branches. */
#define WAY_BITS 7
#define COST_MAX ((UINT64_C(1) << (64 - WAY_BITS)) - 1)

static inline void cmpx(uint64_t *p, int i, int j)
{
    uint64_t a = p[i], b = p[j];
    int swap = (a >> WAY_BITS) > (b >> WAY_BITS);
    p[i] = swap ? b : a;
    p[j] = swap ? a : b;
}

static inline void network(uint64_t *p, int n)
{
    for (int L = 1; L < n; L <<= 1) {
        /* first stage of the merge: i against the mirror lane (i ^ (2L-1)) */
        for (int b = 0; b < n; b += 2 * L)
            for (int o = 0; o < L; o++)
                cmpx(p, b + o, b + 2 * L - 1 - o);
        for (int s = L / 2; s > 0; s /= 2)
            for (int b = 0; b < n; b += 2 * s)
                for (int o = 0; o < s; o++)
                    cmpx(p, b + o, b + o + s);
    }
}

#ifdef FBG_CACHE_X86
/* The 32-lane network in eight AVX2 registers, entry e in register e / 4,
** lane e % 4. A stride of 4 or more pairs whole registers lane by lane; a
** stride of 1 or 2 and the mirror stages (partner e ^ (2L-1)) pair lanes
** through a permute. Same compare rule as cmpx: swap on a strictly greater
** cost (the costs fit 57 bits, so the signed compare is exact). */
#define PERM_PAIR1 0xB1     /* lanes 1 0 3 2 */
#define PERM_PAIR2 0x4E     /* lanes 2 3 0 1 */
#define PERM_REV 0x1B       /* lanes 3 2 1 0 */

__attribute__((target("avx2"))) static inline __m256i gt_mask(__m256i a, __m256i b)
{
    return _mm256_cmpgt_epi64(_mm256_srli_epi64(a, WAY_BITS), _mm256_srli_epi64(b, WAY_BITS));
}

/* a keeps the smaller, b the larger of each lane pair */
__attribute__((target("avx2"))) static inline void minmax(__m256i *a, __m256i *b)
{
    __m256i m = gt_mask(*a, *b);
    __m256i lo = _mm256_blendv_epi8(*a, *b, m);
    *b = _mm256_blendv_epi8(*b, *a, m);
    *a = lo;
}

/* Within one register: partner = permute(r); the lanes in LOW_MASK (32-bit
** blend mask) keep the smaller value, the others the larger; on equal
** costs every lane keeps its own entry. */
#define IN_REG(NAME, PERM, LOW_MASK)                                                    \
    __attribute__((target("avx2"))) static inline __m256i NAME(__m256i r)               \
    {                                                                                   \
        __m256i o = _mm256_permute4x64_epi64(r, PERM);                                  \
        __m256i lo = _mm256_blendv_epi8(r, o, gt_mask(r, o)); /* partner if smaller */  \
        __m256i hi = _mm256_blendv_epi8(r, o, gt_mask(o, r)); /* partner if larger */   \
        return _mm256_blend_epi32(hi, lo, LOW_MASK);                                    \
    }
IN_REG(stage_pair1, PERM_PAIR1, 0x33)   /* lanes 0, 2 low */
IN_REG(stage_pair2, PERM_PAIR2, 0x0F)   /* lanes 0, 1 low */
IN_REG(stage_mirror3, PERM_REV, 0x0F)   /* lanes 0, 1 low (partner l ^ 3) */
#undef IN_REG

/* Registers a < b with partner lane l ^ 3 in the other register. */
__attribute__((target("avx2"))) static inline void mirror_regs(__m256i *a, __m256i *b)
{
    __m256i rb = _mm256_permute4x64_epi64(*b, PERM_REV);
    minmax(a, &rb);
    *b = _mm256_permute4x64_epi64(rb, PERM_REV);
}

__attribute__((target("avx2"))) static void network32_avx2(uint64_t *p)
{
    __m256i r[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_si256((const __m256i *)(p + 4 * i));
    for (int L = 1; L < 32; L <<= 1) {
        /* mirror stage */
        if (L == 1) {
            for (int i = 0; i < 8; i++)
                r[i] = stage_pair1(r[i]);
        } else if (L == 2) {
            for (int i = 0; i < 8; i++)
                r[i] = stage_mirror3(r[i]);
        } else {
            int span = L / 4;           /* registers per half block */
            for (int b = 0; b < 8; b += 2 * span)
                for (int o = 0; o < span; o++)
                    mirror_regs(&r[b + o], &r[b + 2 * span - 1 - o]);
        }
        for (int s = L / 2; s > 0; s /= 2) {
            if (s == 1) {
                for (int i = 0; i < 8; i++)
                    r[i] = stage_pair1(r[i]);
            } else if (s == 2) {
                for (int i = 0; i < 8; i++)
                    r[i] = stage_pair2(r[i]);
            } else {
                int rs = s / 4;
                for (int b = 0; b < 8; b += 2 * rs)
                    for (int o = 0; o < rs; o++)
                        minmax(&r[b + o], &r[b + o + rs]);
            }
        }
    }
    for (int i = 0; i < 8; i++)
        _mm256_storeu_si256((__m256i *)(p + 4 * i), r[i]);
}
#endif

int fbg_cache__have_avx2(void)
{
#ifdef FBG_CACHE_X86
    return fbg_cache__pick_find() != find_portable;
#else
    return 0;
#endif
}

void fbg_cache__order_ways(const int64_t *cost, int32_t assoc, int avx2, uint8_t *order, int64_t *sorted_cost)
{
    uint64_t p[FBG_CACHE_MAX_ASSOC];
    int n = 1;
    while (n < assoc)
        n <<= 1;
    for (int i = 0; i < n; i++) {
        /* costs are >= -1 (LFU's empty way); saturate far beyond any timestep or count */
        uint64_t c = i >= assoc ? COST_MAX : cost[i] < -1 ? 0 : (uint64_t)(cost[i] + 1);
        p[i] = (c < COST_MAX ? c : COST_MAX) << WAY_BITS | (uint64_t)i;
    }
#ifdef FBG_CACHE_X86
    if (n == 32 && avx2)
        network32_avx2(p);
    else
#endif
        network(p, n);
    (void)avx2;
    for (int i = 0; i < assoc; i++) {
        order[i] = (uint8_t)(p[i] & ((1u << WAY_BITS) - 1));
        sorted_cost[i] = (int64_t)(p[i] >> WAY_BITS) - 1;
    }
}
