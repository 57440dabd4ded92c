/*
** jagged_bmm_cpu.c - jagged_dense_bmm, jagged_jagged_bmm and
** permute102_baddbmm_permute102 on the CPU, each a loop of small GEMMs
** (jagged_gemm.h) threaded over batch rows.
**
** f32 and f64 run in place, on the common GEMM (jagged_gemm.h). f16 and bf16 operands are widened to f32 once
** (scratch) and the results rounded to nearest even once, as fbgemm's CPU
** kernels accumulate in at::acc_type<scalar_t> (float for 16-bit types).
** Measured on fbgemm 1.9: its jagged bmm kernels round each product to the
** 16-bit type before adding it (scalar_t * scalar_t), so ours do too;
** permute102 (torch.baddbmm) keeps the products in f32.
**
**   jagged_dense_bmm:  out rows off[b] + l = x rows @ y[b] for l < min(L_b, max_L), 0 past it
**   jagged_jagged_bmm: out[b] = x_b^T @ y_b over the first min(L_b, max_L) rows
**   permute102:        out[i, j, :] = bias[j, :] + A[i, j, :] @ B[j]
*/
#include <string.h>

#include "jagged.h"
#include "jagged_cpu.h"
#include "jagged_dtypes.h"
#include "jagged_gemm.h"

/* Operands as f32 or f64 arrays. */
typedef struct wide_view {
    int f64;                  /* 1: double, else float */
    int round16;              /* jagged bmm of f16 (1) / bf16 (2): products rounded (jagged_gemm.h) */
    size_t es;                /* bytes of the wide element */
} wide_view;

static void gemm_any(const wide_view *w, int64_t m, int64_t n, int64_t k, const char *A, int64_t rsa,
                     int64_t csa, const char *B, int64_t ldb, char *C, int64_t ldc, const char *bias, void *work,
                     size_t work_bytes)
{
    if (w->round16 != 0 && bias == NULL)
        jg_gemm_f32_rounded(w->round16, m, n, k, (const float *)(const void *)A, rsa, csa,
                            (const float *)(const void *)B, ldb, (float *)(void *)C, ldc);
    else if (w->f64)
        jg_gemm_f64(m, n, k, (const double *)(const void *)A, rsa, csa, (const double *)(const void *)B, ldb,
                    (double *)(void *)C, ldc, (const double *)(const void *)bias, work, work_bytes);
    else
        jg_gemm_f32(m, n, k, (const float *)(const void *)A, rsa, csa, (const float *)(const void *)B, ldb,
                    (float *)(void *)C, ldc, (const float *)(const void *)bias, work, work_bytes);
}

/* The data of t as a wide (f32/f64) array: in place, or widened into scratch. */
static loom_status widen(loom_call *call, const loom_tensor *t, const char **out)
{
    loom_dtype d = loom_tensor_dtype_of(t);
    int64_t n = loom_numel(t);
    if (d == LOOM_DTYPE_F32 || d == LOOM_DTYPE_F64) {
        *out = loom_data(t);
        return LOOM_OK;
    }
    float *w = pk_host->scratch(call->ctx, (size_t)(n > 0 ? n : 1) * sizeof(float));
    if (w == NULL)
        return LOOM_ENOMEM;
    const uint16_t *s = loom_data(t);
    if (d == LOOM_DTYPE_F16)
        for (int64_t i = 0; i < n; i++)
            w[i] = jg_ld_f16(s + i);
    else
        for (int64_t i = 0; i < n; i++)
            w[i] = jg_ld_bf16(s + i);
    *out = (const char *)w;
    return LOOM_OK;
}

/* Where the kernel writes: the output itself, or an f32 scratch narrowed by finish(). */
static loom_status wide_output(loom_call *call, loom_tensor *out, char **dst)
{
    loom_dtype d = loom_tensor_dtype_of(out);
    if (d == LOOM_DTYPE_F32 || d == LOOM_DTYPE_F64) {
        *dst = loom_data(out);
        return LOOM_OK;
    }
    *dst = pk_host->scratch(call->ctx, (size_t)loom_numel(out) * sizeof(float));
    return *dst != NULL ? LOOM_OK : LOOM_ENOMEM;
}

static void finish(loom_tensor *out, const char *wide)
{
    loom_dtype d = loom_tensor_dtype_of(out);
    int64_t n = loom_numel(out);
    const float *w = (const float *)(const void *)wide;
    uint16_t *o = loom_data(out);
    if (d == LOOM_DTYPE_F16)
        for (int64_t i = 0; i < n; i++)
            jg_st_f16(o + i, w[i]);
    else if (d == LOOM_DTYPE_BF16)
        for (int64_t i = 0; i < n; i++)
            jg_st_bf16(o + i, w[i]);
}

typedef struct bmm_job {
    const jg_plan *p;
    wide_view w;
    const char *x, *y, *bias;
    char *out;
    int64_t m_blocks;         /* permute102: row blocks per batch entry */
    int jagged_out;           /* the output is jagged values (dense_bmm) */
    char *work;               /* per thread: the GEMM's workspace (jagged_gemm.h) */
    size_t work_bytes;
} bmm_job;

/* One task per batch row b, whose bag is values rows [r0, r0 + len) and
** counts its first kept = min(len, max_L):
**   dense_bmm (jagged_out):  out rows [r0, r0 + kept) = x rows @ y[b], the
**                            bag's rows past kept 0;
**   jagged_bmm:              out[b] = (x rows)^T @ y rows. */
static void bag_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const bmm_job *j = user;
    const jg_plan *p = j->p;
    const size_t es = j->w.es;
    void *work = j->work + (size_t)thread_index * j->work_bytes;
    for (int64_t b = begin; b < end; b++) {
        int64_t r0 = p->off[b], len = p->off[b + 1] - r0, kept = len < p->max_L ? len : p->max_L;
        if (!j->jagged_out) {
            gemm_any(&j->w, p->M, p->N, kept, j->x + (size_t)(r0 * p->M) * es, 1, p->M,
                     j->y + (size_t)(r0 * p->N) * es, p->N, j->out + (size_t)(b * p->M * p->N) * es, p->N, NULL,
                     work, j->work_bytes);
            continue;
        }
        if (kept > 0)
            gemm_any(&j->w, kept, p->N, p->K, j->x + (size_t)(r0 * p->K) * es, p->K, 1,
                     j->y + (size_t)(b * p->K * p->N) * es, p->N, j->out + (size_t)(r0 * p->N) * es, p->N, NULL,
                     work, j->work_bytes);
        if (len > kept)
            memset(j->out + (size_t)((r0 + kept) * p->N) * es, 0, (size_t)((len - kept) * p->N) * es);
    }
}

#define P102_ROWS 128     /* rows per task: B[j] is packed once per task, A once per row */

static void permute102_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const bmm_job *j = user;
    const jg_plan *p = j->p;
    const size_t es = j->w.es;
    void *work = j->work + (size_t)thread_index * j->work_bytes;
    for (int64_t t = begin; t < end; t++) {
        int64_t jb = t / j->m_blocks, i0 = (t % j->m_blocks) * P102_ROWS;
        int64_t rows = p->M - i0 < P102_ROWS ? p->M - i0 : P102_ROWS;
        gemm_any(&j->w, rows, p->N, p->K, j->x + (size_t)(i0 * p->B * p->K + jb * p->K) * es, p->B * p->K, 1,
                 j->y + (size_t)(jb * p->K * p->N) * es, p->N,
                 j->out + (size_t)(i0 * p->B * p->N + jb * p->N) * es, p->B * p->N,
                 j->bias + (size_t)(jb * p->N) * es, work, j->work_bytes);
    }
}

static int64_t grain_for(double flops_per_item)
{
    int64_t g = (int64_t)(1e5 / (flops_per_item > 1 ? flops_per_item : 1));
    return g > 0 ? g : 1;
}

/* Widen the inputs named by idx[], pick the output buffer, run, narrow.
** jagged_out: the output is jagged values whose rows [0, off[0]) no batch
** row owns; they are zeroed. ws[3]: the largest m, n, k of one GEMM. */
static loom_status run_bmm(loom_call *call, const jg_plan *p, loom_tensor *out, int jagged_out, int round_products,
                           const int *idx,
                           int n_idx, int64_t tasks, int64_t grain, loom_range_fn fn, int64_t m_blocks,
                           const int64_t *ws)
{
    bmm_job j = { .p = p, .w = { .f64 = p->dtype == LOOM_DTYPE_F64 }, .m_blocks = m_blocks, .jagged_out = jagged_out };
    if (round_products)
        j.w.round16 = p->dtype == LOOM_DTYPE_F16 ? 1 : p->dtype == LOOM_DTYPE_BF16 ? 2 : 0;
    const char **slots[3] = { &j.x, &j.y, &j.bias };
    loom_status st = LOOM_OK;
    j.w.es = j.w.f64 ? sizeof(double) : sizeof(float);
    for (int i = 0; st == LOOM_OK && i < n_idx; i++)
        st = widen(call, call->inputs[idx[i]], slots[i]);
    if (st == LOOM_OK)
        st = wide_output(call, out, &j.out);
    if (st == LOOM_OK) {
        int64_t threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
        j.work_bytes = (jg_gemm_workspace(j.w.f64, ws[0], ws[1], ws[2]) + 63) & ~(size_t)63;
        j.work = pk_host->scratch(call->ctx, j.work_bytes * (size_t)threads + 64);
        if (j.work == NULL)
            st = LOOM_ENOMEM;
    }
    if (st == LOOM_OK && jagged_out && p->off[0] > 0)
        memset(j.out, 0, (size_t)(p->off[0] * p->N) * j.w.es);   /* jagged rows no batch row owns */
    if (st == LOOM_OK)
        st = pk_host->parallel_for(call->ctx, tasks, grain, fn, &j);
    if (st == LOOM_OK && j.out != (char *)loom_data(out))
        finish(out, j.out);
    return st;
}

/* dense_bmm (jagged x [L, K] @ dense y [B, K, N] -> jagged [L, N]) and
** jagged_bmm (jagged x [L, M]^T @ jagged y [L, N] -> dense [B, M, N]): one
** task per batch row of 2 * (mean bag length) * inner * N flops, inner
** being K or M. */
static loom_status run_bag_bmm(loom_call *call, int jagged_out)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jagged_out ? jg_prepare_dense_bmm(call, jg_read_host, &p, &out)
                                : jg_prepare_jagged_bmm(call, jg_read_host, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    double per = 2.0 * (double)(p.B > 0 ? p.total_L / p.B : 0) * (double)(jagged_out ? p.K : p.M) * (double)p.N;
    const int args[2] = { 0, jagged_out ? 2 : 1 };   /* x, y */
    int64_t kept_max = 0;
    for (int64_t b = 0; b < p.B; b++) {
        int64_t len = p.off[b + 1] - p.off[b], kept = len < p.max_L ? len : p.max_L;
        kept_max = kept > kept_max ? kept : kept_max;
    }
    const int64_t ws[3] = { jagged_out ? kept_max : p.M, p.N, jagged_out ? p.K : kept_max };
    return run_bmm(call, &p, out, jagged_out, 1, args, 2, p.B, grain_for(per), bag_rows, 0, ws);
}

loom_status jg_dense_bmm_cpu(loom_call *call)
{
    return run_bag_bmm(call, 1);
}

loom_status jg_jagged_bmm_cpu(loom_call *call)
{
    return run_bag_bmm(call, 0);
}

loom_status jg_permute102_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_permute102(call, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t m_blocks = (p.M + P102_ROWS - 1) / P102_ROWS;
    double per = 2.0 * (double)(p.M < P102_ROWS ? p.M : P102_ROWS) * (double)p.K * (double)p.N;
    /* inputs in slot order x = A, y = B, bias */
    const int64_t ws[3] = { p.M < P102_ROWS ? p.M : P102_ROWS, p.N, p.K };
    return run_bmm(call, &p, out, 0, 0, (const int[]){ 1, 2, 0 }, 3, p.B * m_blocks, grain_for(per), permute102_tasks,
                   m_blocks, ws);
}
