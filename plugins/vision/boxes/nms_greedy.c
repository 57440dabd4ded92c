/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nms_greedy.c - the greedy NMS pass (contract in nms_greedy.h).
**
** Work is organised in tiles of 256 boxes in visiting order: inside a tile
** the boxes are decided one by one (each kept box suppresses the rest of
** the tile), then the tile's kept boxes suppress every later tile, spread
** over the core's threads. A suppression bit per box, 8 per byte, is
** written by one thread only, and no two threads write the same cache
** line: the later groups are handed out in whole 64-byte lines of the mask
** (counted from the mask's address, so any alignment of `bits` is right;
** nms passes a 64-byte aligned mask). Chunks that started mid line let
** two threads rewrite a boundary line for every kept box of the tile
** (false sharing): 2 threads were slower than 1 on a Sapphire Rapids VM
** (10k boxes); on a Zen 3 VM, where it cost less, the split by lines gave
** 1.79x on 2 threads against 1.73x. A line's 512 boxes (5 x 2 KB of f32
** coordinates) stay in L1 while the tile's kept boxes pass over it.
**
** The f32 kernel uses AVX2 (8 boxes per instruction) when pk_cpu_avx2
** says so (the core's cpuid, capped by LOOM_CPU_MAX_ISA). _mm256_max_ps(b, a)
** is (b > a ? b : a), which is exactly std::max(a, b) = (a < b ? b : a)
** including NaN operands;
** likewise _mm256_min_ps(b, a) = std::min(a, b). The double threshold is
** replaced by the largest float not above it, which gives the same answer
** for every float IoU as torchvision's float-to-double comparison.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"
#include "nms_greedy.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BX_X86 1
#endif

#define TILE_GROUPS 32      /* 256 boxes decided serially per tile */
#define LINE_BYTES 64       /* mask bytes (groups of 8 boxes) per cache line: the unit of work */

size_t bx_soa_layout(bx_soa *s, loom_dtype dtype, int64_t count, void *buf)
{
    s->dtype = dtype;
    const size_t es = bx_soa_esize(s);
    size_t one = ((size_t)(count + 8) * es + 63) & ~(size_t)63;
    if (buf != NULL) {
        char *p = buf;
        s->x1 = p;
        s->y1 = p + one;
        s->x2 = p + 2 * one;
        s->y2 = p + 3 * one;
        s->area = p + 4 * one;
        for (int k = 0; k < 5; k++)      /* padding lanes: defined values */
            memset(p + k * one + (size_t)count * es, 0, 8 * es);
    }
    return 5 * one;
}

void bx_soa_set(const bx_soa *s, int64_t p, const double b[4])
{
    if (s->dtype == LOOM_DTYPE_F64) {
        ((double *)s->x1)[p] = b[0];
        ((double *)s->y1)[p] = b[1];
        ((double *)s->x2)[p] = b[2];
        ((double *)s->y2)[p] = b[3];
        ((double *)s->area)[p] = (b[2] - b[0]) * (b[3] - b[1]);
    } else {
        float x1 = (float)b[0], y1 = (float)b[1], x2 = (float)b[2], y2 = (float)b[3];
        float w = x2 - x1, h = y2 - y1;
        ((float *)s->x1)[p] = x1;
        ((float *)s->y1)[p] = y1;
        ((float *)s->x2)[p] = x2;
        ((float *)s->y2)[p] = y2;
        ((float *)s->area)[p] = w * h;
    }
}

void bx_soa_set_raw(const bx_soa *s, int64_t p, const void *row)
{
    double b[4];
    for (int k = 0; k < 4; k++)
        b[k] = pk_ld_any(s->dtype, row, k);
    bx_soa_set(s, p, b);
}

/* Lanes j <= i of group g must stay untouched: box i and earlier boxes. */
static unsigned later_lanes(int64_t i, int64_t g)
{
    return g == i >> 3 ? ~((2u << (i & 7)) - 1u) & 0xffu : 0xffu;
}

/* Suppression bits of box i against groups [g0, g1), portable code in the
** box dtype T; `thr` compared in double like torchvision. */
#define DEFINE_SUPPRESS(T, SUF)                                                              \
    static void suppress_##SUF(const bx_soa *s, int64_t base, int64_t i, int64_t g0, int64_t g1, \
                               double thr, uint8_t *bits)                                    \
    {                                                                                        \
        const T *x1 = (const T *)s->x1 + base, *y1 = (const T *)s->y1 + base;                \
        const T *x2 = (const T *)s->x2 + base, *y2 = (const T *)s->y2 + base;                \
        const T *area = (const T *)s->area + base;                                           \
        const T ix1 = x1[i], iy1 = y1[i], ix2 = x2[i], iy2 = y2[i], iarea = area[i];         \
        for (int64_t g = g0; g < g1; g++) {                                                  \
            unsigned m = 0;                                                                  \
            for (int l = 0; l < 8; l++) {                                                    \
                int64_t j = 8 * g + l;                                                       \
                T xx1 = ix1 < x1[j] ? x1[j] : ix1, yy1 = iy1 < y1[j] ? y1[j] : iy1;          \
                T xx2 = x2[j] < ix2 ? x2[j] : ix2, yy2 = y2[j] < iy2 ? y2[j] : iy2;          \
                T dw = xx2 - xx1, dh = yy2 - yy1;                                            \
                T w = (T)0 < dw ? dw : (T)0, h = (T)0 < dh ? dh : (T)0;                      \
                T inter = w * h;                                                             \
                T ovr = inter / (iarea + area[j] - inter);                                   \
                m |= (unsigned)((double)ovr > thr) << l;                                     \
            }                                                                                \
            bits[g] |= (uint8_t)(m & later_lanes(i, g));                                     \
        }                                                                                    \
    }
DEFINE_SUPPRESS(float, f32)
DEFINE_SUPPRESS(double, f64)

#ifdef BX_X86
__attribute__((target("avx2"))) static void suppress_f32_avx2(const bx_soa *s, int64_t base, int64_t i,
                                                              int64_t g0, int64_t g1, float thr_f,
                                                              uint8_t *bits)
{
    const float *x1 = (const float *)s->x1 + base, *y1 = (const float *)s->y1 + base;
    const float *x2 = (const float *)s->x2 + base, *y2 = (const float *)s->y2 + base;
    const float *area = (const float *)s->area + base;
    const __m256 ix1 = _mm256_set1_ps(x1[i]), iy1 = _mm256_set1_ps(y1[i]);
    const __m256 ix2 = _mm256_set1_ps(x2[i]), iy2 = _mm256_set1_ps(y2[i]);
    const __m256 iarea = _mm256_set1_ps(area[i]), zero = _mm256_setzero_ps(), thr = _mm256_set1_ps(thr_f);
    for (int64_t g = g0; g < g1; g++) {
        int64_t j = 8 * g;
        __m256 xx1 = _mm256_max_ps(_mm256_loadu_ps(x1 + j), ix1);
        __m256 yy1 = _mm256_max_ps(_mm256_loadu_ps(y1 + j), iy1);
        __m256 xx2 = _mm256_min_ps(_mm256_loadu_ps(x2 + j), ix2);
        __m256 yy2 = _mm256_min_ps(_mm256_loadu_ps(y2 + j), iy2);
        __m256 w = _mm256_max_ps(_mm256_sub_ps(xx2, xx1), zero);
        __m256 h = _mm256_max_ps(_mm256_sub_ps(yy2, yy1), zero);
        __m256 inter = _mm256_mul_ps(w, h);
        __m256 den = _mm256_sub_ps(_mm256_add_ps(iarea, _mm256_loadu_ps(area + j)), inter);
        __m256 ovr = _mm256_div_ps(inter, den);
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(ovr, thr, _CMP_GT_OQ));
        bits[g] |= (uint8_t)(m & later_lanes(i, g));
    }
}
#endif

/* The largest float not above thr: x > it <=> (double)x > thr for every float x. */
static float float_threshold(double thr)
{
    if (isnan(thr))
        return NAN;
    float f = (float)thr;
    if ((double)f > thr)
        f = nextafterf(f, -INFINITY);
    return f;
}

typedef struct greedy_job {
    const bx_soa *s;
    int64_t base, g_first;          /* first group of the later part */
    int64_t g_end;                  /* groups of the pass */
    int64_t line0;                  /* mask line of g_first, counted from a 64-byte boundary */
    int64_t mis;                    /* (uintptr_t)bits % LINE_BYTES */
    const int64_t *kept;            /* kept boxes of the tile */
    int64_t n_kept;
    double thr;
    float thr_f;
    int avx2;
    uint8_t *bits;
} greedy_job;

static void suppress(const greedy_job *j, int64_t i, int64_t g0, int64_t g1)
{
#ifdef BX_X86
    if (j->avx2) {
        suppress_f32_avx2(j->s, j->base, i, g0, g1, j->thr_f, j->bits);
        return;
    }
#endif
    if (j->s->dtype == LOOM_DTYPE_F64)
        suppress_f64(j->s, j->base, i, g0, g1, j->thr, j->bits);
    else
        suppress_f32(j->s, j->base, i, g0, g1, j->thr, j->bits);
}

/* Mask lines [line0 + begin, line0 + end) of the later part (clipped to
** [g_first, g_end)) against the tile's kept boxes, one line at a time. */
static void suppress_later(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const greedy_job *j = user;
    (void)thread_index;
    for (int64_t l = j->line0 + begin; l < j->line0 + end; l++) {
        int64_t g0 = l * LINE_BYTES - j->mis, g1 = g0 + LINE_BYTES;
        g0 = g0 > j->g_first ? g0 : j->g_first;
        g1 = g1 < j->g_end ? g1 : j->g_end;
        for (int64_t k = 0; k < j->n_kept; k++)
            suppress(j, j->kept[k], g0, g1);
    }
}

int64_t bx_nms_greedy(const bx_soa *s, int64_t base, int64_t n, double iou_threshold, uint8_t *bits,
                      int64_t *keep, loom_exec_ctx *ctx)
{
    const int64_t groups = (n + 7) / 8;
    greedy_job j = { .s = s, .base = base, .thr = iou_threshold, .thr_f = float_threshold(iou_threshold),
                     .avx2 = s->dtype == LOOM_DTYPE_F32 && pk_cpu_avx2(0), .bits = bits };
    int64_t nk = 0;
    j.g_end = groups;
    j.mis = (int64_t)((uintptr_t)bits % LINE_BYTES);
    memset(bits, 0, (size_t)groups);
    for (int64_t t0 = 0; t0 < groups; t0 += TILE_GROUPS) {
        int64_t t1 = t0 + TILE_GROUPS < groups ? t0 + TILE_GROUPS : groups, k0 = nk;
        int64_t end = 8 * t1 < n ? 8 * t1 : n;
        for (int64_t i = 8 * t0; i < end; i++) {
            if ((bits[i >> 3] >> (i & 7)) & 1)
                continue;
            keep[nk++] = i;
            suppress(&j, i, i >> 3, t1);
        }
        if (t1 == groups || nk == k0)
            continue;
        j.g_first = t1;
        j.kept = keep + k0;
        j.n_kept = nk - k0;
        j.line0 = (t1 + j.mis) / LINE_BYTES;
        /* mask lines holding groups [t1, groups): each range of them starts on a line */
        int64_t later = groups - t1, lines = (groups - 1 + j.mis) / LINE_BYTES + 1 - j.line0;
        /* threads pay off above ~64k box pairs */
        if (ctx == NULL || ctx->n_threads <= 1 || j.n_kept * later * 8 < 65536
            || pk_host->parallel_for(ctx, lines, 1, suppress_later, &j) != LOOM_OK)
            suppress_later(&j, 0, lines, 0);      /* idempotent: safe after a partial run */
    }
    return nk;
}
