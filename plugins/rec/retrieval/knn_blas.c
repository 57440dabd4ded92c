/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_blas.c - sgemm_, the one BLAS routine on FAISS's hot paths (the exact
** search of more than 20 queries, k-means, the product quantizer's tables),
** served by the toolkit's GEMM (gemm.h: AVX2+FMA or portable micro-kernels
** picked from the core's CPU features) instead of the BLAS libfaiss-dev was
** built against. Debian's default libblas3 is the reference BLAS, unblocked
** and unvectorised; this definition, in rec.so and local to it (plugin.map),
** is the one the static libfaiss.a inside rec.so binds to. FAISS's other
** BLAS and LAPACK calls (PCA, ITQ, OPQ: nothing rec.knn_index makes) keep
** the system's libraries.
**
** Threads: a call made on a thread that bound a call context
** (rec_knn_blas_use, knn_blas.h) runs its rows on the core's pool within
** the call's budget; any other (an OpenMP worker of FAISS) runs on its own
** thread.
*/
#include <stdlib.h>
#include <string.h>

#include "knn_blas.h"
#include "gemm.h"
#include "pack.h"

static _Thread_local loom_exec_ctx *bound_ctx;

void rec_knn_blas_use(loom_exec_ctx *ctx)
{
    bound_ctx = ctx;
}

static int transposed(const char *t)
{
    return *t == 'T' || *t == 't' || *t == 'C' || *t == 'c';
}

/* The reference loop, for when no workspace can be had. */
static void naive(const pk_gemm_args *g)
{
    const float *a = g->a.data, *b = g->b.data;
    float *c = g->c;
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            float s = 0.0f;
            for (int64_t l = 0; l < g->k; l++)
                s += a[i * g->a.rs + l * g->a.cs] * b[l * g->b.rs + j * g->b.cs];
            float *cij = &c[i * g->ldc + j];
            *cij = (float)g->alpha * s + (g->beta != 0.0 ? (float)g->beta * *cij : 0.0f);
        }
}

typedef struct slice_job {
    const pk_gemm_args *g;
} slice_job;

/* Rows [begin, end) of C: pk_gemm_serial, or the loop when no workspace can be had. */
static void gemm_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const slice_job *j = user;
    pk_gemm_args g = *j->g;
    g.m = end - begin;
    g.a.data = (const float *)g.a.data + begin * g.a.rs;
    g.c = (float *)g.c + begin * g.ldc;
    const size_t bytes = (pk_gemm_serial_workspace(&g) + 63) & ~(size_t)63;
    void *work = aligned_alloc(64, bytes ? bytes : 64);
    if (!work || pk_gemm_serial(&g, work, bytes) != LOOM_OK)
        naive(&g);
    free(work);
}

/* Fortran's column-major C (m x n) = alpha op(A) op(B) + beta C is the
** row-major C^T (n x m, row stride ldc) = alpha op(B)^T op(A)^T + beta C^T:
** the operands swap and each transpose is a swap of strides. */
int sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
           const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
           const int *ldc);
int sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
           const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
           const int *ldc)
{
    if (*m <= 0 || *n <= 0)
        return 0;
    const int ta = transposed(transa), tb = transposed(transb);
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = *n;
    g.n = *m;
    g.k = *k;
    g.a = (pk_gemm_operand){ .data = b, .dtype = LOOM_DTYPE_F32, .rs = tb ? 1 : *ldb, .cs = tb ? *ldb : 1 };
    g.b = (pk_gemm_operand){ .data = a, .dtype = LOOM_DTYPE_F32, .rs = ta ? 1 : *lda, .cs = ta ? *lda : 1 };
    g.c = c;
    g.ldc = *ldc;
    g.alpha = *alpha;
    g.beta = *beta;
    if (*k <= 0 || *alpha == 0.0f) {   /* C = beta C */
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++)
                c[i * g.ldc + j] = *beta == 0.0f ? 0.0f : *beta * c[i * g.ldc + j];
        return 0;
    }
    /* rows of C^T split over the pool, each slice on pk_gemm_serial with a
    ** workspace of its own (pk_gemm's scratch would pile up: FAISS calls
    ** this once per block, many times in one kernel call) */
    slice_job job = { &g };
    if (bound_ctx && g.m >= 128 && bound_ctx->n_threads > 1)
        pk_host->parallel_for(bound_ctx, g.m, 64, gemm_rows, &job);
    else
        gemm_rows(&job, 0, g.m, 0);
    return 0;
}
