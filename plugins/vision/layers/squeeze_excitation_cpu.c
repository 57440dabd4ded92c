/* SPDX-License-Identifier: BSD-3-Clause */
/*
** squeeze_excitation_cpu.c - vision.squeeze_excitation on the cpu backend
** (blocks.h): the planes' means (threaded over the N * C planes; AVX2 sums
** when the CPU has them), fc1 and fc2 on the shared GEMM with their bias
** and fc1's activation in its epilogue, the scale activation, then each
** plane times its scale (threaded again). The output may be the input
** itself: every mean is taken before any element is written.
*/
#include <math.h>
#include <string.h>

#include "blocks.h"
#include "cpu.h"
#include "gemm/gemm.h"


typedef struct se_job {
    const float *x;
    float *y;
    float *pooled;              /* [N * C]: means, then scales */
    int64_t hw;
    int avx2;
} se_job;

static void se_pool(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const se_job *j = user;
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->x + p * j->hw;
        float s = 0.0f;
        if (j->avx2) {
            s = blocks_sum_avx2(x, j->hw);
        } else {
            for (int64_t i = 0; i < j->hw; i++)
                s += x[i];
        }
        j->pooled[p] = s / (float)j->hw;
    }
}

static void se_scale(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const se_job *j = user;
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->x + p * j->hw;
        float *y = j->y + p * j->hw, s = j->pooled[p];
        if (j->avx2) {
            blocks_scale_avx2(x, s, y, j->hw);
        } else {
            for (int64_t i = 0; i < j->hw; i++)
                y[i] = x[i] * s;
        }
    }
}

/* out[m, n] = act(in[m, k] @ w[n, k]^T + bias[n]); k == 0 gives act(bias). */
static loom_status fc(loom_call *call, const float *in, int64_t m, int64_t k, const loom_tensor *w,
                      const loom_tensor *bias, int64_t n, pk_gemm_act act, float *out)
{
    const float *b = loom_data(bias);
    if (k == 0) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < n; c++)
                out[i * n + c] = act == PK_GEMM_ACT_RELU ? (b[c] > 0.0f ? b[c] : 0.0f)
                               : act == PK_GEMM_ACT_SILU ? b[c] / (1.0f + expf(-b[c])) : b[c];
        return LOOM_OK;
    }
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(in, LOOM_DTYPE_F32, k, 0);
    g.b = pk_gemm_matrix(loom_data(w), LOOM_DTYPE_F32, k, 1);
    g.c = out;
    g.ldc = n;
    g.bias_kind = PK_GEMM_BIAS_COL;
    g.bias = b;
    g.act = act;
    return pk_gemm(call->ctx, &g);
}

static loom_status se_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[SE_INPUT];
    const loom_tensor *b1t = call->inputs[SE_FC1_BIAS], *b2t = call->inputs[SE_FC2_BIAS];
    int64_t s;
    loom_tensor *out;
    loom_status st = layers_check_squeeze_excitation(call, &s, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t n = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3];
    float *pooled = pk_host->scratch(call->ctx, (size_t)(n * c + n * s + 16) * sizeof(float));
    if (pooled == NULL)
        return pk_host->fail(LOOM_ENOMEM, "squeeze_excitation: no scratch for %lld x %lld channels", (long long)n,
                             (long long)c);
    float *hidden = pooled + n * c;
    se_job job = { loom_data(x), loom_data(out), pooled, hw, pk_cpu_avx2(PK_CPU_FMA) };
    const int64_t grain = 1 + 16384 / hw;
    if ((st = pk_host->parallel_for(call->ctx, n * c, grain, se_pool, &job)) != LOOM_OK)
        return st;
    const char *act = call->attrs[PK_ATTR(squeeze_excitation, activation)].u.s;
    pk_gemm_act a1 = strcmp(act, "silu") == 0 ? PK_GEMM_ACT_SILU : PK_GEMM_ACT_RELU;
    if ((st = fc(call, pooled, n, c, call->inputs[SE_FC1_WEIGHT], b1t, s, a1, hidden)) != LOOM_OK
        || (st = fc(call, hidden, n, s, call->inputs[SE_FC2_WEIGHT], b2t, c, PK_GEMM_ACT_NONE, pooled)) != LOOM_OK)
        return st;
    /* the scale activation, as torch's: sigmoid 1 / (1 + exp(-v)); hardsigmoid relu6(v + 3) / 6 */
    const int hard = strcmp(call->attrs[PK_ATTR(squeeze_excitation, scale_activation)].u.s, "hardsigmoid") == 0;
    for (int64_t i = 0; i < n * c; i++) {
        float v = pooled[i];
        if (hard) {
            float r = v + 3.0f;
            pooled[i] = (r != r ? r : r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r) / 6.0f;
        } else {
            pooled[i] = 1.0f / (1.0f + expf(-v));
        }
    }
    return pk_host->parallel_for(call->ctx, n * c, grain, se_scale, &job);
}

const loom_kernel_desc layers_squeeze_excitation_cpu_kernel =
    PK_KERNEL_CPU(vision_squeeze_excitation_schema, "cpu:gemm", LAYERS_DTYPES, se_run_cpu);
