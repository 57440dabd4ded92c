/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_bags.c - see tbe_bags.h. One column block of at most 8 vectors per
** pass over the bag's rows, as an always-inlined template on the vector
** count NV (a compile-time constant in each case of the dispatching
** switch, so the 8 accumulators are registers, never an array in memory);
** a wider row takes several passes, the later ones reading the rows from
** L1/L2 where the first left them. Only the first pass prefetches.
*/
#include <stdint.h>

#include "cpu.h"
#include "tbe_bags.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FBG_X86 1
#endif

#ifdef FBG_X86

/* Every cache line of the `bytes` bytes from r (a row need not be 64-byte
** aligned: an unaligned 512-byte row spans 9 lines). */
static inline __attribute__((always_inline)) void prefetch_lines(const uint8_t *r, int64_t bytes,
                                                                 fbg_prefetch_hint hint)
{
    uintptr_t l = (uintptr_t)r & ~(uintptr_t)63;
    const uintptr_t e = (uintptr_t)r + (uintptr_t)bytes;
    if (hint == FBG_PF_T0)
        for (; l < e; l += 64)
            _mm_prefetch((const char *)l, _MM_HINT_T0);
    else
        for (; l < e; l += 64)
            _mm_prefetch((const char *)l, _MM_HINT_NTA);
}

/* ------------------------------------------------------------- AVX-512 */

#define AVX512 __attribute__((target("avx512f,fma")))

/* Columns [c0, c0 + 16 NV) of the bag. TAIL (compile-time): the last
** vector holds 8 columns (dim a multiple of 8, not of 16) and is read with
** a mask, its other lanes never read; every other vector is a plain load
** that the compiler folds into the add or the fma. WEIGHTED
** (compile-time): fma(w[r], x, acc); else acc + x, the same bits as
** fma(1, x, acc) with no broadcast in the loop. */
AVX512 static inline __attribute__((always_inline)) void block512(float *acc, int init, const uint8_t *const *rows,
                                                                  const float *w, const uint8_t *const *pf, int32_t n,
                                                                  int64_t c0, const int NV, const int TAIL,
                                                                  const int WEIGHTED, int64_t pf_bytes,
                                                                  fbg_prefetch_hint hint)
{
    const __mmask16 tail = (__mmask16)0x00FF;
    __m512 a[8];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) {
        if (init)
            a[v] = _mm512_setzero_ps();
        else
            a[v] = TAIL && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, acc + c0 + 16 * v)
                                       : _mm512_loadu_ps(acc + c0 + 16 * v);
    }
    for (int32_t r = 0; r < n; r++) {
        if (pf != NULL && pf[r] != NULL)
            prefetch_lines(pf[r], pf_bytes, hint);
        const float *x = (const float *)(const void *)rows[r] + c0;
        if (WEIGHTED) {
            const __m512 wv = _mm512_set1_ps(w[r]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) {
                const __m512 xv = TAIL && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, x + 16 * v)
                                                      : _mm512_loadu_ps(x + 16 * v);
                a[v] = _mm512_fmadd_ps(wv, xv, a[v]);
            }
        } else {
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) {
                const __m512 xv = TAIL && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, x + 16 * v)
                                                      : _mm512_loadu_ps(x + 16 * v);
                a[v] = _mm512_add_ps(a[v], xv);
            }
        }
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) {
        if (TAIL && v == NV - 1)
            _mm512_mask_storeu_ps(acc + c0 + 16 * v, tail, a[v]);
        else
            _mm512_storeu_ps(acc + c0 + 16 * v, a[v]);
    }
}

/* One column block of nv vectors: the compile-time variant for this tail
** and weighting. */
#define BLOCK512_NV(NV)                                                                            \
    do {                                                                                           \
        if (tail) {                                                                                \
            if (w != NULL) block512(acc, init, rows, w, p, n, c0, NV, 1, 1, pf_bytes, hint);       \
            else block512(acc, init, rows, w, p, n, c0, NV, 1, 0, pf_bytes, hint);                 \
        } else {                                                                                   \
            if (w != NULL) block512(acc, init, rows, w, p, n, c0, NV, 0, 1, pf_bytes, hint);       \
            else block512(acc, init, rows, w, p, n, c0, NV, 0, 0, pf_bytes, hint);                 \
        }                                                                                          \
    } while (0)

AVX512 static void bag_f32_avx512(float *acc, int init, const uint8_t *const *rows, const float *w,
                                  const uint8_t *const *pf, int32_t n, int64_t dim, int64_t pf_bytes,
                                  fbg_prefetch_hint hint)
{
    for (int64_t c0 = 0; c0 < dim; c0 += 128) {
        const int64_t left = dim - c0 < 128 ? dim - c0 : 128;
        const int nv = (int)((left + 15) / 16);
        const int tail = left % 16 != 0;
        const uint8_t *const *p = c0 == 0 ? pf : NULL;
        switch (nv) {
        case 1: BLOCK512_NV(1); break;
        case 2: BLOCK512_NV(2); break;
        case 3: BLOCK512_NV(3); break;
        case 4: BLOCK512_NV(4); break;
        case 5: BLOCK512_NV(5); break;
        case 6: BLOCK512_NV(6); break;
        case 7: BLOCK512_NV(7); break;
        default: BLOCK512_NV(8); break;
        }
    }
}
#undef BLOCK512_NV

/* ---------------------------------------------------------------- AVX2 */

#define AVX2 __attribute__((target("avx2,fma")))

/* Columns [c0, c0 + 8 NV) of the bag (dim a multiple of 8: no tail). */
AVX2 static inline __attribute__((always_inline)) void block256(float *acc, int init, const uint8_t *const *rows,
                                                                const float *w, const uint8_t *const *pf, int32_t n,
                                                                int64_t c0, const int NV, int64_t pf_bytes,
                                                                fbg_prefetch_hint hint)
{
    __m256 a[8];
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++)
        a[v] = init ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + c0 + 8 * v);
    for (int32_t r = 0; r < n; r++) {
        if (pf != NULL && pf[r] != NULL)
            prefetch_lines(pf[r], pf_bytes, hint);
        const float *x = (const float *)(const void *)rows[r] + c0;
        const __m256 wv = _mm256_set1_ps(w != NULL ? w[r] : 1.0f);
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            a[v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + 8 * v), a[v]);
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++)
        _mm256_storeu_ps(acc + c0 + 8 * v, a[v]);
}

AVX2 static void bag_f32_avx2(float *acc, int init, const uint8_t *const *rows, const float *w,
                              const uint8_t *const *pf, int32_t n, int64_t dim, int64_t pf_bytes,
                              fbg_prefetch_hint hint)
{
    for (int64_t c0 = 0; c0 < dim; c0 += 64) {
        const int64_t left = dim - c0 < 64 ? dim - c0 : 64;
        const uint8_t *const *p = c0 == 0 ? pf : NULL;
        switch ((int)(left / 8)) {
        case 1: block256(acc, init, rows, w, p, n, c0, 1, pf_bytes, hint); break;
        case 2: block256(acc, init, rows, w, p, n, c0, 2, pf_bytes, hint); break;
        case 3: block256(acc, init, rows, w, p, n, c0, 3, pf_bytes, hint); break;
        case 4: block256(acc, init, rows, w, p, n, c0, 4, pf_bytes, hint); break;
        case 5: block256(acc, init, rows, w, p, n, c0, 5, pf_bytes, hint); break;
        case 6: block256(acc, init, rows, w, p, n, c0, 6, pf_bytes, hint); break;
        case 7: block256(acc, init, rows, w, p, n, c0, 7, pf_bytes, hint); break;
        default: block256(acc, init, rows, w, p, n, c0, 8, pf_bytes, hint); break;
        }
    }
}
#endif /* FBG_X86 */

/* ---------------------------------------------------------------- table */

static fbg_bag_acc_fn f32_bag;
static const char *bag_isa;

void fbg_bags_init(void)
{
    f32_bag = NULL;
    bag_isa = NULL;
#ifdef FBG_X86
    /* only beside the AVX2 row functions (the same cap): a CPU capped below
    ** avx2 runs the portable rows alone */
    if (!pk_cpu_avx2(PK_CPU_FMA | PK_CPU_F16C))
        return;
    if (pk_cpu_features() & LOOM_CPU_AVX512F) {
        f32_bag = bag_f32_avx512;
        bag_isa = "avx512";
    } else {
        f32_bag = bag_f32_avx2;
        bag_isa = "avx2";
    }
#endif
}

fbg_bag_acc_fn fbg_bag_acc(fbg_wtype t, int64_t dim)
{
    return t == FBG_WT_FP32 && dim > 0 && dim % 8 == 0 ? f32_bag : NULL;
}

const char *fbg_bags_isa(void) { return bag_isa; }
