/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_rows.c - the portable row kernels of the encoder (encoder.h):
** the reference the AVX2 versions (encoder_rows_avx2.c) are tested
** against, and what runs under LOOM_CPU_MAX_ISA=sse4. Sums are kept in
** double so that these rows are the accurate side of the comparison.
*/
#include <math.h>

#include "cpu.h"
#include "encoder.h"

static void ln_scalar(float *y, const float *x, const float *r, const float *s, const float *g, const float *b,
                      int64_t n, float eps)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float t = x[i];
        if (r != NULL)
            t += r[i];
        if (s != NULL)
            t += s[i];
        y[i] = t;
        sum += t;
    }
    const double mean = sum / (double)n;
    double var = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)y[i] - mean;
        var += d * d;
    }
    const double rstd = 1.0 / sqrt(var / (double)n + (double)eps);   /* biased variance, as torch */
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)(((double)y[i] - mean) * rstd) * g[i] + b[i];
}

static float act_one(float x, int act)
{
    switch (act) {
    case ENC_ACT_GELU_ERF:
        return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));
    case ENC_ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case ENC_ACT_RELU:
        return x > 0.0f ? x : 0.0f;
    default:
        return x;
    }
}

static void bias_act_scalar(float *x, const float *bias, int64_t n, int act)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = act_one(bias != NULL ? x[i] + bias[i] : x[i], act);
}

static void softmax_scalar(float *x, int64_t n, float scale, const uint8_t *keep)
{
    int64_t kept = 0;
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        if (keep == NULL || keep[j]) {
            kept++;
            mx = fmaxf(mx, scale * x[j]);
        }
    if (kept == 0) {
        for (int64_t j = 0; j < n; j++)
            x[j] = 1.0f / (float)n;
        return;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        float e = keep == NULL || keep[j] ? expf(scale * x[j] - mx) : 0.0f;
        x[j] = e;
        sum += e;
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < n; j++)
        x[j] *= inv;
}

const enc_rows enc_rows_scalar = { ln_scalar, bias_act_scalar, softmax_scalar };

const enc_rows *enc_rows_current(void)
{
#if defined(__x86_64__)
    if (pk_cpu_avx2(PK_CPU_FMA))
        return &enc_rows_avx2;
#endif
    return &enc_rows_scalar;
}
