/* SPDX-License-Identifier: BSD-3-Clause */
/*
** depthwise_avx2.c - the AVX2+FMA loops of vision.conv2d's depthwise kernel
** (depthwise.h): eight outputs per vector along a row of the padded plane,
** four vectors in flight (an FMA chain per tap would otherwise wait on its
** latency). At stride 1 the output is computed over the padded width, so the
** rows join into one flat run (a 7x7 map is 63 positions, not 7 runs of 7);
** at stride 2 sixteen inputs are loaded and their even lanes kept. Called
** only when pk_cpu_avx2(PK_CPU_FMA) allows it.
*/
#include <immintrin.h>

#include "depthwise.h"
#include "simd_avx2.h"

#define TAPS_PRELOADED 49           /* up to 7x7 kernels keep their weights in registers / on the stack */

__attribute__((target("avx2,fma"))) void depthwise_taps_s1_avx2(const conv2d_geom *g, const float *P, int64_t wp,
                                                                const float *wk, float bias, float *T)
{
    const int64_t taps = g->kh * g->kw, n = g->ho * wp;
    int64_t off[TAPS_PRELOADED];
    __m256 wv[TAPS_PRELOADED];
    const int pre = taps <= TAPS_PRELOADED;
    if (pre)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++) {
                off[ki * g->kw + kj] = ki * g->dh * wp + kj * g->dw;
                wv[ki * g->kw + kj] = _mm256_set1_ps(wk[ki * g->kw + kj]);
            }
    const __m256 b = _mm256_set1_ps(bias);
    int64_t q = 0;
    if (pre) {
        for (; q + 32 <= n; q += 32) {
            __m256 a0 = b, a1 = b, a2 = b, a3 = b;
            for (int64_t t = 0; t < taps; t++) {
                const float *p = P + q + off[t];
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(p), wv[t], a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 8), wv[t], a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 16), wv[t], a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 24), wv[t], a3);
            }
            _mm256_storeu_ps(T + q, a0);
            _mm256_storeu_ps(T + q + 8, a1);
            _mm256_storeu_ps(T + q + 16, a2);
            _mm256_storeu_ps(T + q + 24, a3);
        }
        for (; q < n; q += 8) {
            __m256 a = b;
            for (int64_t t = 0; t < taps; t++)
                a = _mm256_fmadd_ps(_mm256_loadu_ps(P + q + off[t]), wv[t], a);
            _mm256_storeu_ps(T + q, a);
        }
        return;
    }
    for (; q < n; q += 8) {
        __m256 a = b;
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++)
                a = _mm256_fmadd_ps(_mm256_loadu_ps(P + q + ki * g->dh * wp + kj * g->dw),
                                    _mm256_set1_ps(wk[ki * g->kw + kj]), a);
        _mm256_storeu_ps(T + q, a);
    }
}

/* The even lanes of p[0..16): p[0], p[2], ..., p[14]. */
static inline __attribute__((target("avx2,fma"))) __m256 load_even(const float *p)
{
    __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

__attribute__((target("avx2,fma"))) void depthwise_taps_s2_avx2(const conv2d_geom *g, const float *P, int64_t wp,
                                                                const float *wk, float bias, float *T, int64_t tw)
{
    const __m256 b = _mm256_set1_ps(bias);
    for (int64_t oy = 0; oy < g->ho; oy++) {
        const float *row = P + oy * 2 * wp;
        for (int64_t ox = 0; ox < tw; ox += 8) {
            __m256 a = b;
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++)
                    a = _mm256_fmadd_ps(load_even(row + ki * g->dh * wp + ox * 2 + kj * g->dw),
                                        _mm256_set1_ps(wk[ki * g->kw + kj]), a);
            _mm256_storeu_ps(T + oy * tw + ox, a);
        }
    }
}

static inline __attribute__((target("avx2,fma"))) __m256 act_ps(__m256 v, int act)
{
    switch (act) {
    case PK_GEMM_ACT_RELU: return _mm256_max_ps(_mm256_setzero_ps(), v);     /* NaN (the second operand) stays */
    case PK_GEMM_ACT_SILU:
        return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), pk_exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), v))));
    case PK_GEMM_ACT_NONE: return v;
    default: {                      /* the gelus: torch's libm formulas, lane by lane */
        float l[8];
        _mm256_storeu_ps(l, v);
        for (int i = 0; i < 8; i++)
            l[i] = layers_act_scalar(l[i], act);
        return _mm256_loadu_ps(l);
    }
    }
}

static inline __attribute__((target("avx2,fma"))) __m256 epilogue_ps(__m256 v, __m256 r, int act, int after)
{
    if (!after)
        v = _mm256_add_ps(v, r);
    v = act_ps(v, act);
    return after ? _mm256_add_ps(v, r) : v;
}

__attribute__((target("avx2,fma"))) void depthwise_epilogue_avx2(const float *t, const float *r, float *y, int64_t n,
                                                                 int act, int after)
{
    const __m256 zero = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, epilogue_ps(_mm256_loadu_ps(t + i), r != NULL ? _mm256_loadu_ps(r + i) : zero,
                                            act, after));
    if (i < n) {    /* the tail through a mask (AMD's masked store is microcoded: only here), the same arithmetic */
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 v = epilogue_ps(_mm256_maskload_ps(t + i, m), r != NULL ? _mm256_maskload_ps(r + i, m) : zero, act,
                               after);
        _mm256_maskstore_ps(y + i, m, v);
    }
}
