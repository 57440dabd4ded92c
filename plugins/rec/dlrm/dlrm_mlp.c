/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_mlp.c - one linear layer of DLRM's MLPs (dlrm.h) on the toolkit
** GEMM: the forward with its bias and relu in the GEMM's epilogue, and the
** backward with the optimizer step fused after it.
**
** Backward of y = relu?(x w^T + b), gy the gradient of y:
**   gy  *= (y > 0)              relu's backward (torch: grad * (result > 0))
**   gx   = gy w                 with w before this step's update
**   gw   = gy^T x, gb = sum_b gy
**   SGD      w -= lr gw                      (torch.optim.SGD, no momentum)
**   Adagrad  s += gw^2; w -= lr gw / (sqrt(s) + eps)   (torch.optim.Adagrad,
**            lr_decay 0, initial_accumulator_value 0)
** so a layer is updated as soon as the gradient of its input is taken,
** which is what the optimizer's step after the whole backward computes.
*/
#include <math.h>

#include "dlrm.h"
#include "gemm.h"

/* c [m, n] = op(a) op(b) on the toolkit GEMM: a [m, k] (stored [k, m] when ta), b [k, n] (stored [n, k]
** when tb), all row-major f32; bias per column and act applied in the epilogue. */
static loom_status matmul(loom_exec_ctx *ctx, int64_t m, int64_t n, int64_t k, const float *a, int ta, const float *b,
                          int tb, float *c, const float *bias, pk_gemm_act act)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(a, LOOM_DTYPE_F32, ta ? m : k, ta);
    g.b = pk_gemm_matrix(b, LOOM_DTYPE_F32, tb ? k : n, tb);
    g.c = c;
    g.ldc = n;
    g.bias_kind = bias ? PK_GEMM_BIAS_COL : PK_GEMM_BIAS_NONE;
    g.bias = bias;
    g.act = act;
    return pk_gemm(ctx, &g);
}

loom_status rec_dlrm_layer_forward(loom_exec_ctx *ctx, const rec_dlrm_layer *l, const float *x, float *y, int64_t B)
{
    if (B == 0)
        return LOOM_OK;
    return matmul(ctx, B, l->out, l->in, x, 0, l->w, 1, y, l->b, l->relu ? PK_GEMM_ACT_RELU : PK_GEMM_ACT_NONE);
}

int64_t rec_dlrm_layer_work(const rec_dlrm_layer *l)
{
    return l->out * l->in + l->out;
}

static void step(const rec_dlrm *m, float *w, float *s, const float *g, int64_t n)
{
    const float lr = (float)m->lr, eps = (float)m->eps;
    if (!m->adagrad) {
        for (int64_t i = 0; i < n; i++)
            w[i] -= lr * g[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        s[i] += g[i] * g[i];
        w[i] -= lr * (g[i] / (sqrtf(s[i]) + eps));
    }
}

loom_status rec_dlrm_layer_backward(loom_exec_ctx *ctx, const rec_dlrm *m, rec_dlrm_layer *l, const float *x,
                                    const float *y, float *gy, float *gx, int64_t B, float *work)
{
    const int64_t n_out = B * l->out;
    if (l->relu)
        for (int64_t i = 0; i < n_out; i++)
            gy[i] = y[i] > 0.0f ? gy[i] : 0.0f;
    loom_status st = LOOM_OK;
    if (gx && B > 0 && (st = matmul(ctx, B, l->in, l->out, gy, 0, l->w, 0, gx, NULL, PK_GEMM_ACT_NONE)) != LOOM_OK)
        return st;
    float *gw = work, *gb = work + l->out * l->in;
    if (B > 0 && (st = matmul(ctx, l->out, l->in, B, gy, 1, x, 0, gw, NULL, PK_GEMM_ACT_NONE)) != LOOM_OK)
        return st;
    if (B == 0)
        for (int64_t i = 0; i < l->out * l->in; i++)
            gw[i] = 0.0f;
    for (int64_t j = 0; j < l->out; j++)
        gb[j] = 0.0f;
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < l->out; j++)
            gb[j] += gy[b * l->out + j];
    step(m, l->w, l->w_sum, gw, l->out * l->in);
    step(m, l->b, l->b_sum, gb, l->out);
    return LOOM_OK;
}
