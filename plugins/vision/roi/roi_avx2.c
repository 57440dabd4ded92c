/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_avx2.c - AVX2 loops of the RoI ops over the channels of an NHWC f32
** image, chosen at run time (roi_have_avx2: cpuid has AVX2 and
** LOOM_CPU_MAX_ISA does not cap below it); roi_cpu_tmpl.h has the portable
** loops they replace. roi_cpu_isa_init runs once, at the pack's init.
**
** roi_align bin: 32 channels per step in four accumulators, each sample's
** four corner rows weighted and summed in torchvision's order
** ((w0 v0 + w1 v1) + w2 v2) + w3 v3, added to the bin's sum, divided by
** count at the end. Multiplies and adds stay separate (no FMA: the
** functions are compiled for avx2 only), so every lane is bit-identical
** to torchvision's scalar code.
**
** roi_align bins of one 32-channel block: the same per bin, the bins taken
** eight at a time so that the results leave in 8 x 8 transposes, each
** channel's eight bins in one store.
**
** roi_pool bin: the running maximum per channel with torchvision's strict
** `v > max` in scan order (row by row), so ties keep the first pixel and
** NaN is never taken; the argmax lane follows the same mask.
**
** NHWC rows: one image row at a time in 8 x 8 register transposes, into
** blocks of cb channels (roi_align's row cache) or all of them (roi_pool).
*/
#include <float.h>
#include <stdlib.h>

#include "cpu.h"
#include "roi_cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

static int avx2_ok;             /* set once by roi_cpu_isa_init, before any kernel runs */

void roi_cpu_isa_init(void)
{
    avx2_ok = pk_cpu_avx2(0);
}

int roi_have_avx2(void) { return avx2_ok; }

/* in-register transpose of the 8 x 8 block r[0..7] */
__attribute__((target("avx2")))
static inline void transpose8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* ((w0 v0 + w1 v1) + w2 v2) + w3 v3 over the 8 channels at the four taps */
__attribute__((target("avx2")))
static inline __m256 taps8(const float *q0, const float *q1, const float *q2, const float *q3, __m256 w0, __m256 w1,
                           __m256 w2, __m256 w3)
{
    __m256 t = _mm256_add_ps(_mm256_mul_ps(w0, _mm256_loadu_ps(q0)), _mm256_mul_ps(w1, _mm256_loadu_ps(q1)));
    t = _mm256_add_ps(t, _mm256_mul_ps(w2, _mm256_loadu_ps(q2)));
    return _mm256_add_ps(t, _mm256_mul_ps(w3, _mm256_loadu_ps(q3)));
}

__attribute__((target("avx2")))
static inline __m256 sample8(const roi_sample_f32 *s, __m256 w0, __m256 w1, __m256 w2, __m256 w3, const float *x,
                             int64_t c)
{
    return taps8(x + s->off[0] + c, x + s->off[1] + c, x + s->off[2] + c, x + s->off[3] + c, w0, w1, w2, w3);
}

__attribute__((target("avx2")))
void roi_sweep_nhwc_avx2(const float *x, int64_t nc, const roi_sample_f32 *s, int64_t ns, float count,
                         float *out, int64_t ostride)
{
    const __m256 vc = _mm256_set1_ps(count);
    float tmp[32];
    int64_t c = 0;
    for (; c + 32 <= nc; c += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t i = 0; i < ns; i++) {
            const __m256 w0 = _mm256_set1_ps(s[i].w[0]), w1 = _mm256_set1_ps(s[i].w[1]);
            const __m256 w2 = _mm256_set1_ps(s[i].w[2]), w3 = _mm256_set1_ps(s[i].w[3]);
            const float *q0 = x + c + s[i].off[0], *q1 = x + c + s[i].off[1];
            const float *q2 = x + c + s[i].off[2], *q3 = x + c + s[i].off[3];
            a0 = _mm256_add_ps(a0, taps8(q0, q1, q2, q3, w0, w1, w2, w3));
            a1 = _mm256_add_ps(a1, taps8(q0 + 8, q1 + 8, q2 + 8, q3 + 8, w0, w1, w2, w3));
            a2 = _mm256_add_ps(a2, taps8(q0 + 16, q1 + 16, q2 + 16, q3 + 16, w0, w1, w2, w3));
            a3 = _mm256_add_ps(a3, taps8(q0 + 24, q1 + 24, q2 + 24, q3 + 24, w0, w1, w2, w3));
        }
        _mm256_storeu_ps(tmp, _mm256_div_ps(a0, vc));
        _mm256_storeu_ps(tmp + 8, _mm256_div_ps(a1, vc));
        _mm256_storeu_ps(tmp + 16, _mm256_div_ps(a2, vc));
        _mm256_storeu_ps(tmp + 24, _mm256_div_ps(a3, vc));
        for (int i = 0; i < 32; i++)
            out[(c + i) * ostride] = tmp[i];
    }
    for (; c + 8 <= nc; c += 8) {
        __m256 a0 = _mm256_setzero_ps();
        for (int64_t i = 0; i < ns; i++)
            a0 = _mm256_add_ps(a0, sample8(&s[i], _mm256_set1_ps(s[i].w[0]), _mm256_set1_ps(s[i].w[1]),
                                           _mm256_set1_ps(s[i].w[2]), _mm256_set1_ps(s[i].w[3]), x, c));
        _mm256_storeu_ps(tmp, _mm256_div_ps(a0, vc));
        for (int i = 0; i < 8; i++)
            out[(c + i) * ostride] = tmp[i];
    }
    for (; c < nc; c++) {
        float acc = 0;
        for (int64_t i = 0; i < ns; i++) {
            const float *p = x + c;
            float t = s[i].w[0] * p[s[i].off[0]] + s[i].w[1] * p[s[i].off[1]];
            t = t + s[i].w[2] * p[s[i].off[2]];
            acc = acc + (t + s[i].w[3] * p[s[i].off[3]]);
        }
        out[c * ostride] = acc / count;
    }
}

__attribute__((target("avx2")))
void roi_sweep_bins_avx2(const float *x, const roi_sample_f32 *s, int64_t nbins, int64_t ns, float count,
                         float *out, int64_t ostride)
{
    const __m256 vc = _mm256_set1_ps(count);
    float tmp[8][32];
    for (int64_t b0 = 0; b0 < nbins; b0 += 8) {
        const int64_t nb = nbins - b0 < 8 ? nbins - b0 : 8;
        for (int64_t b = 0; b < nb; b++) {
            const roi_sample_f32 *sb = s + (b0 + b) * ns;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (int64_t i = 0; i < ns; i++) {
                const __m256 w0 = _mm256_set1_ps(sb[i].w[0]), w1 = _mm256_set1_ps(sb[i].w[1]);
                const __m256 w2 = _mm256_set1_ps(sb[i].w[2]), w3 = _mm256_set1_ps(sb[i].w[3]);
                const float *q0 = x + sb[i].off[0], *q1 = x + sb[i].off[1];
                const float *q2 = x + sb[i].off[2], *q3 = x + sb[i].off[3];
                a0 = _mm256_add_ps(a0, taps8(q0, q1, q2, q3, w0, w1, w2, w3));
                a1 = _mm256_add_ps(a1, taps8(q0 + 8, q1 + 8, q2 + 8, q3 + 8, w0, w1, w2, w3));
                a2 = _mm256_add_ps(a2, taps8(q0 + 16, q1 + 16, q2 + 16, q3 + 16, w0, w1, w2, w3));
                a3 = _mm256_add_ps(a3, taps8(q0 + 24, q1 + 24, q2 + 24, q3 + 24, w0, w1, w2, w3));
            }
            _mm256_storeu_ps(tmp[b], _mm256_div_ps(a0, vc));
            _mm256_storeu_ps(tmp[b] + 8, _mm256_div_ps(a1, vc));
            _mm256_storeu_ps(tmp[b] + 16, _mm256_div_ps(a2, vc));
            _mm256_storeu_ps(tmp[b] + 24, _mm256_div_ps(a3, vc));
        }
        if (nb < 8) {
            for (int64_t c = 0; c < 32; c++)
                for (int64_t b = 0; b < nb; b++)
                    out[c * ostride + b0 + b] = tmp[b][c];
            continue;
        }
        /* 8 bins x 8 channels at a time: each channel's 8 bins are adjacent in out */
        for (int c0 = 0; c0 < 32; c0 += 8) {
            __m256 r[8];
            for (int b = 0; b < 8; b++)
                r[b] = _mm256_loadu_ps(tmp[b] + c0);
            transpose8(r);
            for (int c = 0; c < 8; c++)
                _mm256_storeu_ps(out + (c0 + c) * ostride + b0, r[c]);
        }
    }
}

__attribute__((target("avx2")))
void roi_maxpool_nhwc_avx2(const float *x, int64_t nc, int64_t w, int64_t hs, int64_t he, int64_t ws, int64_t we,
                           float *out, int32_t *argmax, int64_t ostride)
{
    const int empty = he <= hs || we <= ws;
    float tv[8];
    int32_t ti[8];
    int64_t c = 0;
    for (; c + 8 <= nc; c += 8) {
        __m256 m = _mm256_set1_ps(empty ? 0.0f : -FLT_MAX);
        __m256i mi = _mm256_set1_epi32(-1);
        for (int64_t y = hs; y < he; y++)
            for (int64_t px = ws; px < we; px++) {
                const int64_t pix = y * w + px;
                const __m256 v = _mm256_loadu_ps(x + pix * nc + c);
                const __m256 gt = _mm256_cmp_ps(v, m, _CMP_GT_OQ);
                m = _mm256_blendv_ps(m, v, gt);
                mi = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(mi),
                                                          _mm256_castsi256_ps(_mm256_set1_epi32((int32_t)pix)), gt));
            }
        _mm256_storeu_ps(tv, m);
        _mm256_storeu_si256((__m256i *)(void *)ti, mi);
        for (int i = 0; i < 8; i++) {
            out[(c + i) * ostride] = tv[i];
            argmax[(c + i) * ostride] = ti[i];
        }
    }
    for (; c < nc; c++) {
        float m = empty ? 0.0f : -FLT_MAX;
        int32_t mi = -1;
        for (int64_t y = hs; y < he; y++)
            for (int64_t px = ws; px < we; px++)
                if (x[(y * w + px) * nc + c] > m) {
                    m = x[(y * w + px) * nc + c];
                    mi = (int32_t)(y * w + px);
                }
        out[c * ostride] = m;
        argmax[c * ostride] = mi;
    }
}

__attribute__((target("avx2")))
void roi_nhwc_row_avx2(const float *in, float *out, int64_t nc, int64_t hw, int64_t w, int64_t cb)
{
    int64_t c0 = 0;
    for (; c0 + 8 <= nc; c0 += 8) {
        float *o = out + (c0 / cb) * w * cb + c0 % cb;
        int64_t x0 = 0;
        for (; x0 + 8 <= w; x0 += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; i++)
                r[i] = _mm256_loadu_ps(in + (c0 + i) * hw + x0);
            transpose8(r);
            for (int i = 0; i < 8; i++)
                _mm256_storeu_ps(o + (x0 + i) * cb, r[i]);
        }
        for (; x0 < w; x0++)
            for (int64_t c = 0; c < 8; c++)
                o[x0 * cb + c] = in[(c0 + c) * hw + x0];
    }
    for (int64_t x = 0; x < w; x++)
        for (int64_t c = c0; c < nc; c++)
            out[(c / cb) * w * cb + x * cb + c % cb] = in[c * hw + x];
}

#else

void roi_cpu_isa_init(void) {}

int roi_have_avx2(void) { return 0; }

void roi_maxpool_nhwc_avx2(const float *x, int64_t nc, int64_t w, int64_t hs, int64_t he, int64_t ws, int64_t we,
                           float *out, int32_t *argmax, int64_t ostride)
{
    (void)x; (void)nc; (void)w; (void)hs; (void)he; (void)ws; (void)we; (void)out; (void)argmax; (void)ostride;
}

void roi_nhwc_row_avx2(const float *in, float *out, int64_t nc, int64_t hw, int64_t w, int64_t cb)
{
    (void)in; (void)out; (void)nc; (void)hw; (void)w; (void)cb;
}

void roi_sweep_nhwc_avx2(const float *x, int64_t nc, const roi_sample_f32 *s, int64_t ns, float count,
                         float *out, int64_t ostride)
{
    (void)x; (void)nc; (void)s; (void)ns; (void)count; (void)out; (void)ostride;
}

void roi_sweep_bins_avx2(const float *x, const roi_sample_f32 *s, int64_t nbins, int64_t ns, float count,
                         float *out, int64_t ostride)
{
    (void)x; (void)s; (void)nbins; (void)ns; (void)count; (void)out; (void)ostride;
}

#endif
