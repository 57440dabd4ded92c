/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attention_fused.c - the scaled-dot-product attention of the transformer
** blocks (attention.h: attention_run). Work is split in tasks of one
** (unit, head, block of ATTN_BLOCK query rows); consecutive tasks share a
** head, so its keys and values stay in cache while its query blocks run.
** A task computes the block's scores S = scale * Q K^T with the shared GEMM
** (pk_gemm_serial, K read transposed through its strides, no copy), adds
** the bias and mask rows, takes the softmax of each row in f32 (max, exp,
** sum, one reciprocal) and writes P V straight into the output rows of its
** head: the scores never leave the thread's buffer. The softmax runs
** AVX2+FMA (attention_softmax_avx2.c) when the core's CPU features allow.
*/
#include <math.h>
#include <string.h>

#include "attention.h"
#include "cpu.h"
#include "gemm/gemm.h"

/* Query rows per task: 64 rows of scores over 1370 keys (vit_h_14 at 518)
** are 350 KB, within a Zen 3 core's L2 with the head's K and V. */
#define ATTN_BLOCK 64

typedef struct attn_job {
    const attention_problem *p;
    int64_t blocks;             /* query blocks per (unit, head) */
    char *work;                 /* per thread: scores, then GEMM workspace */
    size_t per_thread, scores_bytes;
    int32_t threads;
    int avx2;                   /* the softmax's AVX2+FMA loop may run */
    loom_status status;
} attn_job;

static void softmax_rows(float *s, int64_t rows, int64_t len)
{
    for (int64_t i = 0; i < rows; i++) {
        float *r = s + i * len, m = -INFINITY;
        for (int64_t j = 0; j < len; j++)
            m = r[j] > m ? r[j] : m;
        float sum = 0.0f;
        for (int64_t j = 0; j < len; j++) {
            r[j] = expf(r[j] - m);
            sum += r[j];
        }
        float inv = 1.0f / sum;
        for (int64_t j = 0; j < len; j++)
            r[j] *= inv;
    }
}

static void attn_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    attn_job *j = user;
    const attention_problem *p = j->p;
    if (thread_index < 0 || thread_index >= j->threads) {
        j->status = LOOM_EINVAL;
        return;
    }
    char *mine = j->work + (size_t)thread_index * j->per_thread;
    float *scores = (float *)mine;
    void *ws = mine + j->scores_bytes;
    size_t ws_bytes = j->per_thread - j->scores_bytes;
    const int64_t L = p->len, hd = p->head_dim;
    for (int64_t t = begin; t < end; t++) {
        int64_t blk = t % j->blocks, uh = t / j->blocks, h = uh % p->heads, u = uh / p->heads;
        int64_t r0 = blk * ATTN_BLOCK, rows = L - r0 < ATTN_BLOCK ? L - r0 : ATTN_BLOCK;
        const float *q = p->q + u * p->unit_stride + r0 * p->ld + h * hd;
        const float *k = p->k + u * p->unit_stride + h * hd;
        const float *v = p->v + u * p->unit_stride + h * hd;
        float *o = p->out + u * p->out_unit_stride + r0 * p->ld_out + h * hd;
        /* S = scale * Q K^T: B[kk][j] = K[j][kk] */
        pk_gemm_args g = PK_GEMM_ARGS_INIT;
        g.m = rows;
        g.n = L;
        g.k = hd;
        g.alpha = p->scale;
        g.a = (pk_gemm_operand){ .data = q, .dtype = LOOM_DTYPE_F32, .rs = p->ld, .cs = 1 };
        g.b = (pk_gemm_operand){ .data = k, .dtype = LOOM_DTYPE_F32, .rs = 1, .cs = p->ld };
        g.c = scores;
        g.ldc = L;
        if (p->bias != NULL || p->mask != NULL) {
            /* bias + mask as the residual of the epilogue when only one is
            ** present; both: the bias through the epilogue, the mask after */
            g.residual = p->bias != NULL ? p->bias + h * L * L + r0 * L
                                         : p->mask + (u % p->mask_units) * L * L + r0 * L;
            g.ldr = L;
        }
        loom_status st = pk_gemm_serial(&g, ws, ws_bytes);
        if (st != LOOM_OK) {
            j->status = st;
            return;
        }
        if (p->bias != NULL && p->mask != NULL) {
            const float *mk = p->mask + (u % p->mask_units) * L * L + r0 * L;
            for (int64_t i = 0; i < rows * L; i++)
                scores[i] += mk[i];
        }
#if defined(__x86_64__) || defined(__i386__)
        if (j->avx2)
            attention_softmax_rows_avx2(scores, rows, L);
        else
#endif
            softmax_rows(scores, rows, L);
        /* O = P V */
        pk_gemm_args g2 = PK_GEMM_ARGS_INIT;
        g2.m = rows;
        g2.n = hd;
        g2.k = L;
        g2.a = (pk_gemm_operand){ .data = scores, .dtype = LOOM_DTYPE_F32, .rs = L, .cs = 1 };
        g2.b = (pk_gemm_operand){ .data = v, .dtype = LOOM_DTYPE_F32, .rs = p->ld, .cs = 1 };
        g2.c = o;
        g2.ldc = p->ld_out;
        if ((st = pk_gemm_serial(&g2, ws, ws_bytes)) != LOOM_OK) {
            j->status = st;
            return;
        }
    }
}

loom_status attention_run(loom_exec_ctx *ctx, const attention_problem *p)
{
    if (p->units == 0 || p->heads == 0 || p->len == 0 || p->head_dim == 0)
        return LOOM_OK;
    const int64_t L = p->len, rows = L < ATTN_BLOCK ? L : ATTN_BLOCK;
    /* the workspace of the largest GEMM of a task, for either product */
    pk_gemm_args qk = PK_GEMM_ARGS_INIT, pv = PK_GEMM_ARGS_INIT;
    qk.m = pv.m = rows;
    qk.n = L;
    qk.k = pv.n = p->head_dim;
    pv.k = L;
    qk.a = qk.b = pv.a = pv.b = (pk_gemm_operand){ .dtype = LOOM_DTYPE_F32, .rs = 1, .cs = 1 };
    size_t ws1 = pk_gemm_serial_workspace(&qk), ws2 = pk_gemm_serial_workspace(&pv);
    attn_job j = { .p = p, .blocks = (L + ATTN_BLOCK - 1) / ATTN_BLOCK, .status = LOOM_OK };
    j.scores_bytes = (((size_t)rows * (size_t)L * sizeof(float)) + 63) / 64 * 64;
    j.per_thread = j.scores_bytes + ((ws1 > ws2 ? ws1 : ws2) + 63) / 64 * 64;
    j.threads = ctx->n_threads > 0 ? ctx->n_threads : 1;
    j.avx2 = pk_cpu_avx2(PK_CPU_FMA);
    if ((j.work = pk_host->scratch(ctx, j.per_thread * (size_t)j.threads)) == NULL)
        return LOOM_ENOMEM;
    int64_t tasks = p->units * p->heads * j.blocks;
    loom_status st = pk_host->parallel_for(ctx, tasks, 1, attn_tasks, &j);
    if (st == LOOM_OK && j.status != LOOM_OK)
        st = pk_host->fail(j.status, "attention: a task failed (thread workspace)");
    return st;
}
