/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_interaction.c - DLRM's InteractionArch (dlrm.h) and its backward,
** as torchrec computes it: Z = [x; e] [B, F + 1, D], Z_0 the dense arch's
** output, Z_f (f = 1..F) the pooled feature f - 1; the Gram matrices
** Z_b Z_b^T of every sample in one batched toolkit GEMM (torch.bmm); the
** output row x[b] then (Z_b Z_b^T)_ij for 0 <= i < j <= F, i-major
** (torch.triu_indices(F + 1, F + 1, offset=1)).
**
** Backward: with sample b's output gradient placed at (i, j) and (j, i)
** of S_b (zero diagonal), the gradient of Z_b is S_b Z_b, one more batched
** GEMM; its row 0 adds to the output's first D columns, the dense output's
** gradient, rows 1..F are the pooled features'. The copies in and out of Z
** are threaded over samples on the core's pool.
*/
#include <string.h>

#include "dlrm.h"
#include "gemm.h"

typedef struct interact_job {
    int64_t F, D;
    const float *x, *e, *g;
    float *z, *sq, *zg;        /* Z, the [F+1, F+1] matrices, Z's gradient: per sample */
    float *out, *gx, *ge;
} interact_job;

int64_t rec_dlrm_interact_work(int64_t B, int64_t F, int64_t D)
{
    return B * (F + 1) * (2 * D + F + 1) + 32;
}

static int64_t grain(int64_t F, int64_t D)
{
    const int64_t per = (F + 1) * (D + F + 1);    /* floats a sample moves */
    return per < 16384 ? 16384 / per : 1;
}

static void fill_z(void *user, int64_t b0, int64_t b1, int32_t thread)
{
    (void)thread;
    const interact_job *j = user;
    const int64_t F = j->F, D = j->D;
    for (int64_t b = b0; b < b1; b++) {
        float *z = j->z + b * (F + 1) * D;
        memcpy(z, j->x + b * D, (size_t)D * sizeof(float));
        memcpy(z + D, j->e + b * F * D, (size_t)(F * D) * sizeof(float));
    }
}

static void gather_pairs(void *user, int64_t b0, int64_t b1, int32_t thread)
{
    (void)thread;
    const interact_job *j = user;
    const int64_t F = j->F, D = j->D, n1 = F + 1, width = D + F * n1 / 2;
    for (int64_t b = b0; b < b1; b++) {
        float *o = j->out + b * width;
        const float *sq = j->sq + b * n1 * n1;
        memcpy(o, j->x + b * D, (size_t)D * sizeof(float));
        o += D;
        for (int64_t i = 0; i < n1; i++)
            for (int64_t k = i + 1; k < n1; k++)
                *o++ = sq[i * n1 + k];
    }
}

static void scatter_pairs(void *user, int64_t b0, int64_t b1, int32_t thread)
{
    (void)thread;
    const interact_job *j = user;
    const int64_t F = j->F, D = j->D, n1 = F + 1, width = D + F * n1 / 2;
    for (int64_t b = b0; b < b1; b++) {
        const float *g = j->g + b * width + D;
        float *sq = j->sq + b * n1 * n1;
        for (int64_t i = 0; i < n1; i++) {
            sq[i * n1 + i] = 0.0f;
            for (int64_t k = i + 1; k < n1; k++)
                sq[i * n1 + k] = sq[k * n1 + i] = *g++;
        }
    }
}

static void split_grad(void *user, int64_t b0, int64_t b1, int32_t thread)
{
    (void)thread;
    const interact_job *j = user;
    const int64_t F = j->F, D = j->D, width = D + F * (F + 1) / 2;
    for (int64_t b = b0; b < b1; b++) {
        const float *zg = j->zg + b * (F + 1) * D, *g = j->g + b * width;
        float *gx = j->gx + b * D;
        for (int64_t d = 0; d < D; d++)
            gx[d] = g[d] + zg[d];
        memcpy(j->ge + b * F * D, zg + D, (size_t)(F * D) * sizeof(float));
    }
}

/* c_b [m, n] = a_b [m, k] op(b_b) for every sample b: b_b is [k, n], or stored [n, k] when tb */
static loom_status batched(loom_exec_ctx *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                           const float *b, int tb, float *c)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.batch = batch;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = pk_gemm_matrix(a, LOOM_DTYPE_F32, k, 0);
    g.a.bs = m * k;
    g.b = pk_gemm_matrix(b, LOOM_DTYPE_F32, tb ? k : n, tb);
    g.b.bs = k * n;
    g.c = c;
    g.ldc = n;
    g.c_bs = m * n;
    return pk_gemm(ctx, &g);
}

static interact_job job(const float *x, const float *e, int64_t B, int64_t F, int64_t D, float *work)
{
    interact_job j = { .F = F, .D = D, .x = x, .e = e, .z = work };
    j.sq = j.z + B * (F + 1) * D;
    j.zg = j.sq + B * (F + 1) * (F + 1);
    return j;
}

loom_status rec_dlrm_interact(loom_exec_ctx *ctx, const float *x, const float *e, float *out, int64_t B, int64_t F,
                              int64_t D, float *work)
{
    if (B == 0)
        return LOOM_OK;
    interact_job j = job(x, e, B, F, D, work);
    j.out = out;
    const int64_t n1 = F + 1, gr = grain(F, D);
    loom_status st = pk_host->parallel_for(ctx, B, gr, fill_z, &j);
    if (st == LOOM_OK)
        st = batched(ctx, B, n1, n1, D, j.z, j.z, 1, j.sq);
    if (st == LOOM_OK)
        st = pk_host->parallel_for(ctx, B, gr, gather_pairs, &j);
    return st;
}

loom_status rec_dlrm_interact_backward(loom_exec_ctx *ctx, const float *x, const float *e, const float *g, float *gx,
                                       float *ge, int64_t B, int64_t F, int64_t D, float *work)
{
    if (B == 0)
        return LOOM_OK;
    interact_job j = job(x, e, B, F, D, work);
    j.g = g;
    j.gx = gx;
    j.ge = ge;
    const int64_t n1 = F + 1, gr = grain(F, D);
    loom_status st = pk_host->parallel_for(ctx, B, gr, fill_z, &j);
    if (st == LOOM_OK)
        st = pk_host->parallel_for(ctx, B, gr, scatter_pairs, &j);
    if (st == LOOM_OK)
        st = batched(ctx, B, n1, D, n1, j.sq, j.z, 0, j.zg);
    if (st == LOOM_OK)
        st = pk_host->parallel_for(ctx, B, gr, split_grad, &j);
    return st;
}
