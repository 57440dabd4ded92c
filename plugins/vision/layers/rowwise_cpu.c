/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rowwise_cpu.c - vision.linear (on the shared GEMM, bias in its epilogue),
** vision.softmax (max, exp(x - max), sum, scale: ATen's three passes) and
** vision.layer_norm (mean and variance of each row in double, over 8
** interleaved partial sums, then (x - mean) * rstd * weight + bias in f32),
** on the cpu backend.
*/
#include <math.h>

#include "cpu.h"
#include "gemm/gemm.h"
#include "layers.h"


static loom_status linear_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1], *b = call->inputs[2];
    loom_tensor *out;
    loom_status st = layers_check_linear(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t k = w->shape[1], n = w->shape[0], m = loom_numel(out) / n;
    float *y = loom_data(out);
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                y[i * n + j] = b != NULL ? ((const float *)loom_data(b))[j] : 0.0f;
        return LOOM_OK;
    }
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(loom_data(x), LOOM_DTYPE_F32, k, 0);
    g.b = pk_gemm_matrix(loom_data(w), LOOM_DTYPE_F32, k, 1);
    g.c = y;
    g.ldc = n;
    if (b != NULL) {
        g.bias_kind = PK_GEMM_BIAS_COL;
        g.bias = loom_data(b);
    }
    return pk_gemm(call->ctx, &g);
}

/* ---------------------------------------------------------------- softmax */

typedef struct softmax_job {
    const float *x;
    float *y;
    int64_t len, inner;             /* along dim; the stride of dim */
} softmax_job;

static void softmax_lines(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const softmax_job *j = user;
    for (int64_t l = begin; l < end; l++) {
        int64_t o = l / j->inner, i = l % j->inner;
        const float *x = j->x + o * j->len * j->inner + i;
        float *y = j->y + o * j->len * j->inner + i;
        float m = -INFINITY;
        for (int64_t t = 0; t < j->len; t++)
            m = x[t * j->inner] > m || x[t * j->inner] != x[t * j->inner] ? x[t * j->inner] : m;
        float s = 0.0f;
        for (int64_t t = 0; t < j->len; t++) {
            float e = expf(x[t * j->inner] - m);
            y[t * j->inner] = e;
            s += e;
        }
        float inv = 1.0f / s;
        for (int64_t t = 0; t < j->len; t++)
            y[t * j->inner] *= inv;
    }
}

static loom_status softmax_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    int64_t len, inner;
    loom_tensor *out;
    loom_status st = layers_check_softmax(call, &len, &inner, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    softmax_job job = { loom_data(x), loom_data(out), len, inner };
    int64_t lines = loom_numel(x) / len;
    return pk_host->parallel_for(call->ctx, lines, 1 + 16384 / len, softmax_lines, &job);
}

/* ------------------------------------------------------------- layer_norm */

typedef struct ln_job {
    const float *x, *w, *b;
    float *y;
    int64_t len;
    double eps;
    int avx2;                       /* layer_norm_row_avx2: the same bits, 3x faster */
} ln_job;

/* The sum of x[0..n) and of (x[i] - c)^2, each in double over 8
** interleaved partial sums (element i goes to sum i % 8; the tail to a
** ninth), added in a fixed tree: no loop-carried dependency, so the
** compiler vectorises the loops, and the result depends on n and the data
** alone (never on the thread count, which only splits rows). Double keeps
** the rounding far below f32's for any row length a model has. */
static double ln_sum(const float *x, int64_t n)
{
    double p[LAYERS_LN_LANES] = { 0 }, tail = 0.0;
    int64_t i = 0;
    for (; i + LAYERS_LN_LANES <= n; i += LAYERS_LN_LANES)
        for (int k = 0; k < LAYERS_LN_LANES; k++)
            p[k] += (double)x[i + k];
    for (; i < n; i++)
        tail += (double)x[i];
    return layers_ln_reduce(p, tail);
}

static double ln_sum_sq_dev(const float *x, int64_t n, double c)
{
    double p[LAYERS_LN_LANES] = { 0 }, tail = 0.0;
    int64_t i = 0;
    for (; i + LAYERS_LN_LANES <= n; i += LAYERS_LN_LANES)
        for (int k = 0; k < LAYERS_LN_LANES; k++) {
            double d = (double)x[i + k] - c;
            p[k] += d * d;
        }
    for (; i < n; i++) {
        double d = (double)x[i] - c;
        tail += d * d;
    }
    return layers_ln_reduce(p, tail);
}

static void ln_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const ln_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->len;
        float *y = j->y + r * j->len;
#if defined(__x86_64__) || defined(__i386__)
        if (j->avx2) {
            layer_norm_row_avx2(x, y, j->w, j->b, j->len, j->eps);
            continue;
        }
#endif
        double mean = ln_sum(x, j->len) / (double)j->len;
        double var = ln_sum_sq_dev(x, j->len, mean) / (double)j->len;
        float fm = (float)mean, rstd = (float)(1.0 / sqrt(var + j->eps));
        for (int64_t i = 0; i < j->len; i++)
            y[i] = (x[i] - fm) * rstd * j->w[i] + (j->b != NULL ? j->b[i] : 0.0f);
    }
}

static loom_status layer_norm_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1], *b = call->inputs[2];
    loom_tensor *out;
    loom_status st = layers_check_layer_norm(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t len = loom_numel(w);
    ln_job job = { loom_data(x), loom_data(w), b != NULL ? loom_data(b) : NULL, loom_data(out), len,
                   call->attrs[PK_ATTR(layer_norm, eps)].u.f, pk_cpu_avx2(0) };
    return pk_host->parallel_for(call->ctx, loom_numel(x) / len, 1 + 16384 / len, ln_rows, &job);
}

const loom_kernel_desc layers_rowwise_cpu_kernels[3] = {
    PK_KERNEL_CPU(vision_linear_schema, "cpu:gemm", LAYERS_DTYPES, linear_run_cpu),
    PK_KERNEL_CPU(vision_softmax_schema, "cpu:three-pass", LAYERS_DTYPES, softmax_run_cpu),
    PK_KERNEL_CPU(vision_layer_norm_schema, "cpu:rowwise", LAYERS_DTYPES, layer_norm_run_cpu),
};
