/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_optim_update.c - one row's optimizer update (the formulas of
** tbe_optim.h) and the gradient accumulation of the backward, scalar and
** AVX2+FMA+F16C.
**
** Numerics: every multiply-add is one fma (fmaf in the scalar code), the
** divisions and square roots are IEEE (correctly rounded in both), FP16 rows
** are widened exactly and rounded back to nearest even (F16C, pk_f32_to_f16).
** The element-wise parts therefore agree bit for bit between the variants;
** only the row-wise sums of squares (row-wise Adagrad, row-wise Adam) are
** added in another order (eight lanes, then pk_hsum_ps), within 1 ulp per
** term of the scalar sum.
*/
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "half.h"
#include "tbe_optim.h"

#if defined(__x86_64__) || defined(__i386__)
#include "simd_avx2.h"
#define HAVE_X86 1
#define AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

/* ----------------------------------------------------------- scalar */

static void load_row(int32_t wt, const uint8_t *row, float *w, int64_t D)
{
    if (wt == FBG_WT_FP32) {
        memcpy(w, row, (size_t)D * sizeof *w);
        return;
    }
    const uint16_t *h = (const uint16_t *)row;
    for (int64_t d = 0; d < D; d++)
        w[d] = pk_f16_to_f32(h[d]);
}

static void store_row(int32_t wt, uint8_t *row, const float *w, int64_t D)
{
    if (wt == FBG_WT_FP32) {
        memcpy(row, w, (size_t)D * sizeof *w);
        return;
    }
    uint16_t *h = (uint16_t *)row;
    for (int64_t d = 0; d < D; d++)
        h[d] = pk_f32_to_f16(w[d]);
}

/* Bias corrections 1 - b^t in f32, as fbgemm forms them with powf. */
static float bias_correction(float beta, int64_t t)
{
    return 1.0f - powf(beta, (float)t);
}

static float sumsq_scalar(const float *g, const float *w, float wd, int64_t D)
{
    float s = 0.0f;
    if (w != NULL) {
        for (int64_t d = 0; d < D; d++) {
            const float x = fmaf(wd, w[d], g[d]);
            s = fmaf(x, x, s);
        }
    } else {
        for (int64_t d = 0; d < D; d++)
            s = fmaf(g[d], g[d], s);
    }
    return s;
}

/* The element-wise tails shared by both variants (from element d0 on). */
static void sgd_tail(float *w, const float *g, float lr, int64_t d0, int64_t D)
{
    for (int64_t d = d0; d < D; d++)
        w[d] = fmaf(-lr, g[d], w[d]);
}

static void adagrad_tail(float *w, const float *g, float corr, float mult, int64_t d0, int64_t D)
{
    for (int64_t d = d0; d < D; d++)
        w[d] = fmaf(corr, w[d], -mult * g[d]);
}

static void adam_tail(const fbg_optim_params *p, float *w, const float *g, float *m1, float *m2, float bc1,
                      float bc2, int64_t d0, int64_t D)
{
    for (int64_t d = d0; d < D; d++) {
        const float m = fmaf(g[d], 1.0f - p->beta1, m1[d] * p->beta1);
        const float v = fmaf(g[d] * g[d], 1.0f - p->beta2, m2[d] * p->beta2);
        m1[d] = m;
        m2[d] = v;
        const float step = fmaf(p->weight_decay, w[d], m / bc1 / (sqrtf(v / bc2) + p->eps));
        w[d] = fmaf(-p->learning_rate, step, w[d]);
    }
}

static void partial_adam_tail(const fbg_optim_params *p, float *w, const float *g, float *m1, float bc1,
                              float denom, int64_t d0, int64_t D)
{
    for (int64_t d = d0; d < D; d++) {
        const float m = fmaf(g[d], 1.0f - p->beta1, m1[d] * p->beta1);
        m1[d] = m;
        const float step = fmaf(p->weight_decay, w[d], m / bc1 / denom);
        w[d] = fmaf(-p->learning_rate, step, w[d]);
    }
}

/* The row-wise scalars of row-wise Adagrad: m1 updated, mult and corr. */
static void adagrad_scalars(const fbg_optim_params *p, float sumsq, int64_t D, float *m1, float *mult, float *corr)
{
    const float m = *m1 + sumsq / (float)D;
    *m1 = m;
    *mult = p->learning_rate / (sqrtf(m) + p->eps);
    *corr = p->weight_decay_mode == FBG_WD_L2 ? 1.0f - *mult * p->weight_decay
          : p->weight_decay_mode == FBG_WD_DECOUPLE ? 1.0f - p->learning_rate * p->weight_decay : 1.0f;
}

/* partial row-wise Adam: m2 updated; sqrt(vhat) + eps. */
static float partial_adam_denom(const fbg_optim_params *p, float sumsq, int64_t D, float *m2, int64_t t)
{
    const float v = fmaf(sumsq / (float)D, 1.0f - p->beta2, *m2 * p->beta2);
    *m2 = v;
    return sqrtf(v / bias_correction(p->beta2, t)) + p->eps;
}

static void update_scalar(const fbg_optim_params *p, int32_t wt, uint8_t *row, int64_t D, const float *g, float *m1,
                          float *m2, int64_t t, float *w)
{
    load_row(wt, row, w, D);
    switch (p->optimizer) {
    case FBG_OPT_EXACT_SGD:
        sgd_tail(w, g, p->learning_rate, 0, D);
        break;
    case FBG_OPT_EXACT_ROWWISE_ADAGRAD: {
        float mult, corr;
        const float s = sumsq_scalar(g, p->weight_decay_mode == FBG_WD_L2 ? w : NULL, p->weight_decay, D);
        adagrad_scalars(p, s, D, m1, &mult, &corr);
        adagrad_tail(w, g, corr, mult, 0, D);
        break;
    }
    case FBG_OPT_ADAM:
        adam_tail(p, w, g, m1, m2, bias_correction(p->beta1, t), bias_correction(p->beta2, t), 0, D);
        break;
    case FBG_OPT_PARTIAL_ROWWISE_ADAM: {
        const float denom = partial_adam_denom(p, sumsq_scalar(g, NULL, 0.0f, D), D, m2, t);
        partial_adam_tail(p, w, g, m1, bias_correction(p->beta1, t), denom, 0, D);
        break;
    }
    default:
        return;
    }
    store_row(wt, row, w, D);
}

static void axpy_scalar(float *acc, const float *x, float w, int64_t D)
{
    for (int64_t d = 0; d < D; d++)
        acc[d] = fmaf(w, x[d], acc[d]);
}

/* ------------------------------------------------------------- AVX2 */

#ifdef HAVE_X86
AVX2 static void load_row_avx2(int32_t wt, const uint8_t *row, float *w, int64_t D)
{
    if (wt == FBG_WT_FP32) {
        memcpy(w, row, (size_t)D * sizeof *w);
        return;
    }
    const uint16_t *h = (const uint16_t *)row;
    int64_t d = 0;
    for (; d + 8 <= D; d += 8)
        _mm256_storeu_ps(w + d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + d))));
    for (; d < D; d++)
        w[d] = pk_f16_to_f32(h[d]);
}

AVX2 static void store_row_avx2(int32_t wt, uint8_t *row, const float *w, int64_t D)
{
    if (wt == FBG_WT_FP32) {
        memcpy(row, w, (size_t)D * sizeof *w);
        return;
    }
    uint16_t *h = (uint16_t *)row;
    int64_t d = 0;
    for (; d + 8 <= D; d += 8)
        _mm_storeu_si128((__m128i *)(h + d), _mm256_cvtps_ph(_mm256_loadu_ps(w + d), _MM_FROUND_TO_NEAREST_INT));
    for (; d < D; d++)
        h[d] = pk_f32_to_f16(w[d]);
}

AVX2 static float sumsq_avx2(const float *g, const float *w, float wd, int64_t D)
{
    __m256 s = _mm256_setzero_ps();
    const __m256 vwd = _mm256_set1_ps(wd);
    int64_t d = 0;
    for (; d + 8 <= D; d += 8) {
        __m256 x = _mm256_loadu_ps(g + d);
        if (w != NULL)
            x = _mm256_fmadd_ps(vwd, _mm256_loadu_ps(w + d), x);
        s = _mm256_fmadd_ps(x, x, s);
    }
    float r = pk_hsum_ps(s);
    for (; d < D; d++) {
        const float x = w != NULL ? fmaf(wd, w[d], g[d]) : g[d];
        r = fmaf(x, x, r);
    }
    return r;
}

AVX2 static void update_avx2(const fbg_optim_params *p, int32_t wt, uint8_t *row, int64_t D, const float *g,
                             float *m1, float *m2, int64_t t, float *w)
{
    load_row_avx2(wt, row, w, D);
    const __m256 lr = _mm256_set1_ps(p->learning_rate), wd = _mm256_set1_ps(p->weight_decay);
    const __m256 b1 = _mm256_set1_ps(p->beta1), b2 = _mm256_set1_ps(p->beta2);
    const __m256 ob1 = _mm256_set1_ps(1.0f - p->beta1), ob2 = _mm256_set1_ps(1.0f - p->beta2);
    int64_t d = 0;
    switch (p->optimizer) {
    case FBG_OPT_EXACT_SGD: {
        const __m256 nlr = _mm256_set1_ps(-p->learning_rate);
        for (; d + 8 <= D; d += 8)
            _mm256_storeu_ps(w + d, _mm256_fmadd_ps(nlr, _mm256_loadu_ps(g + d), _mm256_loadu_ps(w + d)));
        sgd_tail(w, g, p->learning_rate, d, D);
        break;
    }
    case FBG_OPT_EXACT_ROWWISE_ADAGRAD: {
        float mult, corr;
        const float s = sumsq_avx2(g, p->weight_decay_mode == FBG_WD_L2 ? w : NULL, p->weight_decay, D);
        adagrad_scalars(p, s, D, m1, &mult, &corr);
        const __m256 vc = _mm256_set1_ps(corr), vm = _mm256_set1_ps(mult);
        for (; d + 8 <= D; d += 8) {
            const __m256 ng = _mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(vm, _mm256_loadu_ps(g + d)));
            _mm256_storeu_ps(w + d, _mm256_fmadd_ps(vc, _mm256_loadu_ps(w + d), ng));
        }
        adagrad_tail(w, g, corr, mult, d, D);
        break;
    }
    case FBG_OPT_ADAM: {
        const float bc1 = bias_correction(p->beta1, t), bc2 = bias_correction(p->beta2, t);
        const __m256 vbc1 = _mm256_set1_ps(bc1), vbc2 = _mm256_set1_ps(bc2), eps = _mm256_set1_ps(p->eps);
        const __m256 nlr = _mm256_sub_ps(_mm256_setzero_ps(), lr);
        for (; d + 8 <= D; d += 8) {
            const __m256 gv = _mm256_loadu_ps(g + d), wv = _mm256_loadu_ps(w + d);
            const __m256 m = _mm256_fmadd_ps(gv, ob1, _mm256_mul_ps(_mm256_loadu_ps(m1 + d), b1));
            const __m256 v = _mm256_fmadd_ps(_mm256_mul_ps(gv, gv), ob2, _mm256_mul_ps(_mm256_loadu_ps(m2 + d), b2));
            _mm256_storeu_ps(m1 + d, m);
            _mm256_storeu_ps(m2 + d, v);
            const __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_div_ps(v, vbc2)), eps);
            const __m256 step = _mm256_fmadd_ps(wd, wv, _mm256_div_ps(_mm256_div_ps(m, vbc1), den));
            _mm256_storeu_ps(w + d, _mm256_fmadd_ps(nlr, step, wv));
        }
        adam_tail(p, w, g, m1, m2, bc1, bc2, d, D);
        break;
    }
    case FBG_OPT_PARTIAL_ROWWISE_ADAM: {
        const float denom = partial_adam_denom(p, sumsq_avx2(g, NULL, 0.0f, D), D, m2, t);
        const float bc1 = bias_correction(p->beta1, t);
        const __m256 vbc1 = _mm256_set1_ps(bc1), vden = _mm256_set1_ps(denom);
        const __m256 nlr = _mm256_sub_ps(_mm256_setzero_ps(), lr);
        for (; d + 8 <= D; d += 8) {
            const __m256 gv = _mm256_loadu_ps(g + d), wv = _mm256_loadu_ps(w + d);
            const __m256 m = _mm256_fmadd_ps(gv, ob1, _mm256_mul_ps(_mm256_loadu_ps(m1 + d), b1));
            _mm256_storeu_ps(m1 + d, m);
            const __m256 step = _mm256_fmadd_ps(wd, wv, _mm256_div_ps(_mm256_div_ps(m, vbc1), vden));
            _mm256_storeu_ps(w + d, _mm256_fmadd_ps(nlr, step, wv));
        }
        partial_adam_tail(p, w, g, m1, bc1, denom, d, D);
        break;
    }
    default:
        return;
    }
    store_row_avx2(wt, row, w, D);
}

AVX2 static void axpy_avx2(float *acc, const float *x, float w, int64_t D)
{
    const __m256 vw = _mm256_set1_ps(w);
    int64_t d = 0;
    for (; d + 8 <= D; d += 8)
        _mm256_storeu_ps(acc + d, _mm256_fmadd_ps(vw, _mm256_loadu_ps(x + d), _mm256_loadu_ps(acc + d)));
    for (; d < D; d++)
        acc[d] = fmaf(w, x[d], acc[d]);
}
#endif

/* ------------------------------------------------------------ choice */

static fbg_row_update_fn update_fn = update_scalar;
static fbg_axpy_fn axpy_fn = axpy_scalar;
static const char *isa = "scalar";

void fbg_optim_update_init(void)
{
#ifdef HAVE_X86
    if (pk_cpu_avx2(PK_CPU_FMA | PK_CPU_F16C)) {
        update_fn = update_avx2;
        axpy_fn = axpy_avx2;
        isa = "avx2";
        return;
    }
#endif
    update_fn = update_scalar;
    axpy_fn = axpy_scalar;
    isa = "scalar";
}

fbg_row_update_fn fbg_optim_update_fn(void)
{
    return update_fn;
}

fbg_axpy_fn fbg_optim_axpy_fn(void)
{
    return axpy_fn;
}

const char *fbg_optim_isa(void)
{
    return isa;
}
