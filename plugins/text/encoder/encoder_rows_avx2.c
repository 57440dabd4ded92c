/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_rows_avx2.c - the row kernels of the encoder with AVX2+FMA, 8
** floats a step (encoder_rows.c has the portable ones). exp and erf are
** computed here in vector form:
**  - exp: Cephes' expf, pk_exp_ps of simd_avx2.h; relative error below
**    2 ulp on the clamped range [-87, 88];
**  - erf: the rational approximation of Eigen/XLA (odd degree-13 over even
**    degree-8 polynomial on [-4, 4], erf = +-1 beyond), absolute error
**    below 2e-7 in float.
** LayerNorm sums in eight float lanes (each lane holds n/8 terms), so a row
** of 384 loses under 1e-7 relative to the double sums of the scalar rows.
*/
#include <math.h>

#include "encoder.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "simd_avx2.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline __m256 erf8(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-4.0f)), _mm256_set1_ps(4.0f));
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-2.72614225801306e-10f);
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.77068142495902e-08f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-2.10102402082508e-06f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-5.69250639462346e-05f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-7.34990630326855e-04f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-2.95459980854025e-03f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.60960333262415e-02f));
    p = _mm256_mul_ps(p, x);
    __m256 q = _mm256_set1_ps(-1.45660718464996e-05f);
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-2.13374055278905e-04f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.68282697438203e-03f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-7.37332916720468e-03f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.42647390514189e-02f));
    return _mm256_div_ps(p, q);
}

AVX2 static void ln_avx2(float *y, const float *x, const float *r, const float *s, const float *g, const float *b,
                         int64_t n, float eps)
{
    __m256 acc = _mm256_setzero_ps();
    float tail = 0.0f;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 t = _mm256_loadu_ps(x + i);
        if (r != NULL)
            t = _mm256_add_ps(t, _mm256_loadu_ps(r + i));
        if (s != NULL)
            t = _mm256_add_ps(t, _mm256_loadu_ps(s + i));
        _mm256_storeu_ps(y + i, t);
        acc = _mm256_add_ps(acc, t);
    }
    for (; i < n; i++) {
        float t = x[i] + (r != NULL ? r[i] : 0.0f) + (s != NULL ? s[i] : 0.0f);
        y[i] = t;
        tail += t;
    }
    const float mean = (pk_hsum_ps(acc) + tail) / (float)n;
    const __m256 vm = _mm256_set1_ps(mean);
    acc = _mm256_setzero_ps();
    tail = 0.0f;
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(y + i), vm);
        acc = _mm256_fmadd_ps(d, d, acc);
    }
    for (; i < n; i++)
        tail += (y[i] - mean) * (y[i] - mean);
    const float rstd = 1.0f / sqrtf((pk_hsum_ps(acc) + tail) / (float)n + eps);
    const __m256 vr = _mm256_set1_ps(rstd);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(y + i), vm), vr);
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(d, _mm256_loadu_ps(g + i), _mm256_loadu_ps(b + i)));
    }
    for (; i < n; i++)
        y[i] = (y[i] - mean) * rstd * g[i] + b[i];
}

AVX2 static inline __m256 act8(__m256 v, int act)
{
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    switch (act) {
    case ENC_ACT_GELU_ERF:
        return _mm256_mul_ps(_mm256_mul_ps(half, v),
                             _mm256_add_ps(one, erf8(_mm256_mul_ps(v, _mm256_set1_ps((float)M_SQRT1_2)))));
    case ENC_ACT_GELU_TANH: {
        /* tanh(u) = 1 - 2 / (exp(2u) + 1) */
        __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
        __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f),
                                 _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), v3, v));
        __m256 e = pk_exp_ps(_mm256_add_ps(u, u));
        __m256 th = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
        return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, th));
    }
    case ENC_ACT_RELU:
        return _mm256_max_ps(v, _mm256_setzero_ps());
    default:
        return v;
    }
}

AVX2 static void bias_act_avx2(float *x, const float *bias, int64_t n, int act)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (bias != NULL)
            v = _mm256_add_ps(v, _mm256_loadu_ps(bias + i));
        _mm256_storeu_ps(x + i, act8(v, act));
    }
    if (i < n) {
        /* the tail through the same vector formula, so every element is computed alike */
        float buf[8] = { 0 };
        for (int64_t j = i; j < n; j++)
            buf[j - i] = bias != NULL ? x[j] + bias[j] : x[j];
        _mm256_storeu_ps(buf, act8(_mm256_loadu_ps(buf), act));
        for (int64_t j = i; j < n; j++)
            x[j] = buf[j - i];
    }
}

AVX2 static void softmax_avx2(float *x, int64_t n, float scale, const uint8_t *keep)
{
    if (keep != NULL) {
        /* masked keys (padding kept for pooling none, or a masked token 0) are
        ** rare: the general path, on a row with its masked keys set aside */
        int64_t kept = 0;
        for (int64_t j = 0; j < n; j++)
            kept += keep[j] != 0;
        if (kept == 0) {
            for (int64_t j = 0; j < n; j++)
                x[j] = 1.0f / (float)n;
            return;
        }
        for (int64_t j = 0; j < n; j++)
            if (!keep[j])
                x[j] = -INFINITY;
    }
    const __m256 vs = _mm256_set1_ps(scale);
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    float mx = -INFINITY;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        vmax = _mm256_max_ps(vmax, _mm256_mul_ps(vs, _mm256_loadu_ps(x + j)));
    for (; j < n; j++)
        mx = fmaxf(mx, scale * x[j]);
    mx = fmaxf(mx, pk_hmax_ps(vmax));
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 acc = _mm256_setzero_ps();
    float tail = 0.0f;
    for (j = 0; j + 8 <= n; j += 8) {
        __m256 s = _mm256_fmsub_ps(vs, _mm256_loadu_ps(x + j), vm);
        __m256 e = pk_exp_ps(s);
        /* pk_exp_ps clamps at -87: a masked key (-inf) must still give 0 */
        e = _mm256_and_ps(e, _mm256_cmp_ps(s, _mm256_set1_ps(-87.0f), _CMP_GE_OQ));
        _mm256_storeu_ps(x + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    for (; j < n; j++) {
        float e = expf(scale * x[j] - mx);
        x[j] = e;
        tail += e;
    }
    const float inv = 1.0f / (pk_hsum_ps(acc) + tail);
    const __m256 vi = _mm256_set1_ps(inv);
    for (j = 0; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), vi));
    for (; j < n; j++)
        x[j] *= inv;
}

const enc_rows enc_rows_avx2 = { ln_avx2, bias_act_avx2, softmax_avx2 };

#else
const enc_rows enc_rows_avx2 = { 0 };
#endif
