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
** The element-wise parts (relu's mask, the bias gradient, the step) are
** threaded over the core's pool as the GEMMs are.
*/
#include <math.h>
#include <string.h>

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

/* The element-wise parts of a layer's backward, threaded on the core's pool. */
typedef struct elementwise_job {
    const rec_dlrm *m;
    rec_dlrm_layer *l;
    const float *y;
    float *gy, *gw, *gb;
    int64_t B;
} elementwise_job;

/* relu's backward over rows [b0, b1) of gy */
static void relu_mask(void *user, int64_t b0, int64_t b1, int32_t thread)
{
    (void)thread;
    const elementwise_job *j = user;
    const int64_t out = j->l->out;
    for (int64_t i = b0 * out; i < b1 * out; i++)
        j->gy[i] = j->y[i] > 0.0f ? j->gy[i] : 0.0f;
}

/* gb[c] = sum over the batch of gy[., c], for the columns [c0, c1), in batch order */
static void bias_grad(void *user, int64_t c0, int64_t c1, int32_t thread)
{
    (void)thread;
    const elementwise_job *j = user;
    const int64_t out = j->l->out;
    for (int64_t c = c0; c < c1; c++)
        j->gb[c] = 0.0f;
    for (int64_t b = 0; b < j->B; b++)
        for (int64_t c = c0; c < c1; c++)
            j->gb[c] += j->gy[b * out + c];
}

/* The optimizer's step on n parameters w (Adagrad's sums s) of gradient g. */
static void update(const rec_dlrm *m, float *w, float *s, const float *g, int64_t n)
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

/* The step on the layer's parameters [i0, i1): the weights [0, out in), then the bias. */
static void step(void *user, int64_t i0, int64_t i1, int32_t thread)
{
    (void)thread;
    const elementwise_job *j = user;
    rec_dlrm_layer *l = j->l;
    const int64_t nw = l->out * l->in;
    const int adagrad = j->m->adagrad;
    if (i0 < nw) {
        const int64_t e = i1 < nw ? i1 : nw;
        update(j->m, l->w + i0, adagrad ? l->w_sum + i0 : NULL, j->gw + i0, e - i0);
    }
    if (i1 > nw) {
        const int64_t s = i0 > nw ? i0 - nw : 0;
        update(j->m, l->b + s, adagrad ? l->b_sum + s : NULL, j->gb + s, i1 - nw - s);
    }
}

/* Sharded (dlrm.h): the layer's gradient (gw then gb, contiguous) summed over the ranks, in place. */
static loom_status allreduce_grad(loom_exec_ctx *ctx, const rec_dlrm *m, float *g, int64_t n)
{
    loom_tensor tg = rec_view(g, (loom_dl_dtype){ LOOM_DL_FLOAT, 32, 1 }, 1, &n);
    const loom_tensor *in = &tg;
    loom_tensor *sum = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->allreduce, .n_inputs = 1, .inputs = &in, .n_outputs = 1,
                        .outputs = &sum, .object = m->ebc };
    loom_status st = pk_host->op_call(ctx, &oc);
    if (st == LOOM_OK)
        memcpy(g, loom_data(sum), sizeof *g * (size_t)n);
    if (sum)
        pk_host->tensor_free(sum);
    return st;
}

loom_status rec_dlrm_layer_backward(loom_exec_ctx *ctx, const rec_dlrm *m, rec_dlrm_layer *l, const float *x,
                                    const float *y, float *gy, float *gx, int64_t B, float *work)
{
    float *gw = work, *gb = work + l->out * l->in;
    elementwise_job j = { .m = m, .l = l, .y = y, .gy = gy, .gw = gw, .gb = gb, .B = B };
    loom_status st = LOOM_OK;
    if (l->relu && B > 0 && (st = pk_host->parallel_for(ctx, B, 1 + 16384 / l->out, relu_mask, &j)) != LOOM_OK)
        return st;
    if (gx && B > 0 && (st = matmul(ctx, B, l->in, l->out, gy, 0, l->w, 0, gx, NULL, PK_GEMM_ACT_NONE)) != LOOM_OK)
        return st;
    if (B > 0 && (st = matmul(ctx, l->out, l->in, B, gy, 1, x, 0, gw, NULL, PK_GEMM_ACT_NONE)) != LOOM_OK)
        return st;
    if (B == 0)
        for (int64_t i = 0; i < l->out * l->in; i++)
            gw[i] = 0.0f;
    /* bias columns in blocks of 64 (one task reads every row's block), parameters in runs of 16K */
    if ((st = pk_host->parallel_for(ctx, l->out, 64, bias_grad, &j)) != LOOM_OK)
        return st;
    if (m->allreduce && (st = allreduce_grad(ctx, m, gw, l->out * l->in + l->out)) != LOOM_OK)
        return st;
    return pk_host->parallel_for(ctx, l->out * l->in + l->out, 16384, step, &j);
}
