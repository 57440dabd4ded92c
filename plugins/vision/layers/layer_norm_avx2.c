/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layer_norm_avx2.c - one row of vision.layer_norm with AVX2 (layers.h:
** layer_norm_row_avx2), called only when pk_cpu_avx2(0) allows it.
**
** The same arithmetic as the portable row in rowwise_cpu.c, in the same
** order, hence the same bits: the two sums in double over 8 interleaved
** partial sums (lane k of the two 4-double vectors is partial sum k), the
** tail into a ninth, the fixed tree of layers_ln_reduce; then ((x - mean) * rstd)
** * w + b in f32, each a separate rounding. The target has no "fma" on
** purpose: the compiler may not fuse the products into the adds.
*/
#include <math.h>
#include <immintrin.h>

#include "layers.h"

#define AVX2 __attribute__((target("avx2")))

/* layers_ln_reduce of the 8 lanes of (lo, hi) and the tail. */
static inline AVX2 double reduce8(__m256d lo, __m256d hi, double tail)
{
    double p[LAYERS_LN_LANES];
    _mm256_storeu_pd(p, lo);
    _mm256_storeu_pd(p + 4, hi);
    return layers_ln_reduce(p, tail);
}

AVX2 void layer_norm_row_avx2(const float *x, float *y, const float *w, const float *b, int64_t len, double eps)
{
    __m256d lo = _mm256_setzero_pd(), hi = lo;
    double tail = 0.0;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    for (; i < len; i++)
        tail += (double)x[i];
    const double mean = reduce8(lo, hi, tail) / (double)len;
    const __m256d c = _mm256_set1_pd(mean);
    lo = hi = _mm256_setzero_pd();
    tail = 0.0;
    for (i = 0; i + 8 <= len; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), c);
        __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), c);
        lo = _mm256_add_pd(lo, _mm256_mul_pd(d0, d0));
        hi = _mm256_add_pd(hi, _mm256_mul_pd(d1, d1));
    }
    for (; i < len; i++) {
        double d = (double)x[i] - mean;
        tail += d * d;
    }
    const double var = reduce8(lo, hi, tail) / (double)len;
    const float fm = (float)mean, rstd = (float)(1.0 / sqrt(var + eps));
    const __m256 vm = _mm256_set1_ps(fm), vr = _mm256_set1_ps(rstd), zero = _mm256_setzero_ps();
    for (i = 0; i + 8 <= len; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vr), _mm256_loadu_ps(w + i));
        _mm256_storeu_ps(y + i, _mm256_add_ps(v, b != NULL ? _mm256_loadu_ps(b + i) : zero));
    }
    for (; i < len; i++)
        y[i] = (x[i] - fm) * rstd * w[i] + (b != NULL ? b[i] : 0.0f);
}
