/* SPDX-License-Identifier: BSD-3-Clause */
/*
** activation_cpu.c - the element-wise layers on the cpu backend:
** vision.relu, relu6, silu, gelu, hardswish, sigmoid (torch's formulas in
** f32, as ATen's CPU kernels compute them) and vision.batch_norm at
** inference (per channel scale and shift, in f32 as ATen's
** batch_norm_cpu_collect_linear_and_constant_terms does: alpha =
** weight / sqrt(var + eps), beta = bias - mean * alpha, y = x * alpha + beta).
** Threaded over the elements (activations) or the (n, c) planes (batch_norm).
** gelu (erf) runs activation_avx2.c's vector loop when the core's CPU
** features allow AVX2+FMA (an erfc-based 1 + erf: simd_avx2.h).
*/
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "layers.h"

typedef enum { ACT_RELU, ACT_RELU6, ACT_SILU, ACT_GELU_ERF, ACT_GELU_TANH, ACT_HARDSWISH, ACT_SIGMOID } act_kind;

typedef struct act_job {
    act_kind kind;
    const float *x;
    float *y;
    int avx2;               /* gelu (erf) may run activation_avx2.c's loop */
} act_job;

static void act_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const act_job *j = user;
    const float *x = j->x;
    float *y = j->y;
    switch (j->kind) {
    case ACT_RELU:
        for (int64_t i = begin; i < end; i++)
            y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f);        /* NaN stays NaN */
        break;
    case ACT_RELU6:
        for (int64_t i = begin; i < end; i++)
            y[i] = x[i] != x[i] ? x[i] : x[i] < 0.0f ? 0.0f : x[i] > 6.0f ? 6.0f : x[i];
        break;
    case ACT_SILU:
        for (int64_t i = begin; i < end; i++)
            y[i] = x[i] / (1.0f + expf(-x[i]));
        break;
    case ACT_GELU_ERF:
#if defined(__x86_64__) || defined(__i386__)
        if (j->avx2) {
            layers_gelu_erf_avx2(x + begin, y + begin, end - begin);
            break;
        }
#endif
        for (int64_t i = begin; i < end; i++)
            y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
        break;
    case ACT_GELU_TANH:
        for (int64_t i = begin; i < end; i++) {
            float v = x[i];
            y[i] = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
        }
        break;
    case ACT_HARDSWISH:
        for (int64_t i = begin; i < end; i++) {
            float r = x[i] + 3.0f;
            r = r != r ? r : r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
            y[i] = x[i] * r / 6.0f;
        }
        break;
    case ACT_SIGMOID:
        for (int64_t i = begin; i < end; i++)
            y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    }
}

static loom_status act_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK || (st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &out)) != LOOM_OK
        || loom_numel(out) == 0)
        return st;
    act_kind kind = (act_kind)(intptr_t)call->kernel->user;
    if (kind == ACT_GELU_ERF && strcmp(call->attrs[PK_ATTR(gelu, approximate)].u.s, "tanh") == 0)
        kind = ACT_GELU_TANH;
    act_job job = { kind, loom_data(x), loom_data(out), pk_cpu_avx2(PK_CPU_FMA) };
    return pk_host->parallel_for(call->ctx, loom_numel(out), 16384, act_range, &job);
}

/* ------------------------------------------------------------ batch_norm */

typedef struct bn_job {
    const float *x, *alpha, *beta;
    float *y;
    int64_t c, inner;
} bn_job;

static void bn_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const bn_job *j = user;
    for (int64_t p = begin; p < end; p++) {
        float a = j->alpha[p % j->c], b = j->beta[p % j->c];
        const float *x = j->x + p * j->inner;
        float *y = j->y + p * j->inner;
        for (int64_t i = 0; i < j->inner; i++)
            y[i] = x[i] * a + b;
    }
}

static loom_status bn_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[BN_INPUT];
    loom_tensor *out;
    loom_status st = layers_check_batch_norm(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t c = x->shape[1];
    float *ab = pk_host->scratch(call->ctx, 2 * (size_t)c * sizeof(float));
    if (ab == NULL)
        return pk_host->fail(LOOM_ENOMEM, "batch_norm: no scratch for %lld channels", (long long)c);
    const float *mean = loom_data(call->inputs[BN_MEAN]), *var = loom_data(call->inputs[BN_VAR]);
    const float *w = call->inputs[BN_WEIGHT] ? loom_data(call->inputs[BN_WEIGHT]) : NULL;
    const float *b = call->inputs[BN_BIAS] ? loom_data(call->inputs[BN_BIAS]) : NULL;
    float eps = (float)call->attrs[PK_ATTR(batch_norm, eps)].u.f;
    for (int64_t i = 0; i < c; i++) {
        float inv = 1.0f / sqrtf(var[i] + eps);
        ab[i] = w != NULL ? w[i] * inv : inv;
        ab[c + i] = (b != NULL ? b[i] : 0.0f) - mean[i] * ab[i];
    }
    int64_t inner = loom_numel(x) / (x->shape[0] * c);
    bn_job job = { loom_data(x), ab, ab + c, loom_data(out), c, inner };
    return pk_host->parallel_for(call->ctx, x->shape[0] * c, 1 + 16384 / (inner > 0 ? inner : 1), bn_planes, &job);
}

#define ACT_KERNEL(schema, kind) \
    PK_KERNEL_CPU(schema, "cpu:elementwise", LAYERS_DTYPES, act_run_cpu, .user = (void *)(intptr_t)(kind))
const loom_kernel_desc layers_activation_cpu_kernels[7] = {
    ACT_KERNEL(vision_relu_schema, ACT_RELU),
    ACT_KERNEL(vision_relu6_schema, ACT_RELU6),
    ACT_KERNEL(vision_silu_schema, ACT_SILU),
    ACT_KERNEL(vision_gelu_schema, ACT_GELU_ERF),
    ACT_KERNEL(vision_hardswish_schema, ACT_HARDSWISH),
    ACT_KERNEL(vision_sigmoid_schema, ACT_SIGMOID),
    PK_KERNEL_CPU(vision_batch_norm_schema, "cpu:per-channel", LAYERS_DTYPES, bn_run_cpu),
};
