/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_bmm_tmpl.h - the cpu bmm kernels of one dtype, included once per
** dtype by jagged_bmm_cpu.c with PK_SFX set (dtype_traits.h); defines
** jg_bmm_run_<sfx>, which runs a jg_bmm_job (jagged_bmm_cpu.c) whose
** operands are still to be staged.
**
** The GEMMs run in the compute type T (PK_C): f32 and f64 operands are
** read in place; 16-bit operands are widened to f32 once (scratch) and the
** results rounded to nearest even once, as fbgemm's CPU kernels
** accumulate in at::acc_type<scalar_t> (float for 16-bit types).
**
** Rounded products: fbgemm 1.9's jagged bmm kernels compute each product
** in the 16-bit type (scalar_t * scalar_t: the f32 product rounded to f16
** / bf16) and add it to an f32 sum over k in order; permute102
** (torch.baddbmm) keeps the products in f32. The jagged bmm of a 16-bit
** dtype therefore has its own loop below, not the common GEMM: a GEMM that
** accumulates raw f32 products (FMA or not) differs in the last bit of the
** 16-bit result on a sizable share of elements, the goldens of those ops
** are fbgemm's own bits, and a product-rounding mode would make every
** micro-kernel of the common GEMM carry a conversion per FMA for one user.
** The loop is exactly fbgemm's order: for each output row, p = 0..k-1 in
** order, c[j] += round(a * b[j]).
*/
#define JG_T_ PK_C(PK_SFX)
#define JG_CDT_ (sizeof(JG_T_) == sizeof(double) ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32)

#if PK_NARROW(PK_SFX)
static void PK_FN(jg_gemm_rounded)(int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa,
                                   const float *B, int64_t ldb, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        float *c = C + i * ldc;
        for (int64_t j = 0; j < n; j++)
            c[j] = 0;
        for (int64_t p = 0; p < k; p++) {
            const float a = A[i * rsa + p * csa], *b = B + p * ldb;
            for (int64_t j = 0; j < n; j++)
                c[j] += PK_RND(PK_SFX)(a * b[j]);
        }
    }
}
#endif

/* C = bias + A B (jagged_gemm.h), or the rounded-product loop. */
static void PK_FN(jg_bmm_gemm)(const jg_bmm_job *j, int64_t m, int64_t n, int64_t k, const JG_T_ *A, int64_t rsa,
                               int64_t csa, const JG_T_ *B, int64_t ldb, JG_T_ *C, int64_t ldc, const JG_T_ *bias,
                               void *work)
{
#if PK_NARROW(PK_SFX)
    if (j->round_products && bias == NULL) {
        PK_FN(jg_gemm_rounded)(m, n, k, A, rsa, csa, B, ldb, C, ldc);
        return;
    }
#endif
    jg_gemm(JG_CDT_, m, n, k, A, rsa, csa, B, ldb, C, ldc, bias, work, j->work_bytes);
}

/* One task per batch row b, whose bag is values rows [r0, r0 + len) and
** counts its first kept = min(len, max_L):
**   dense_bmm (jagged_out):  out rows [r0, r0 + kept) = x rows @ y[b], the
**                            bag's rows past kept 0;
**   jagged_bmm:              out[b] = (x rows)^T @ y rows. */
static void PK_FN(jg_bag_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const jg_bmm_job *j = user;
    const jg_plan *p = j->p;
    const JG_T_ *x = j->x, *y = j->y;
    JG_T_ *out = j->out;
    void *work = j->work + (size_t)thread_index * j->work_bytes;
    for (int64_t b = begin; b < end; b++) {
        int64_t r0 = p->off[b], len = p->off[b + 1] - r0, kept = len < p->max_L ? len : p->max_L;
        if (!j->jagged_out) {
            PK_FN(jg_bmm_gemm)(j, p->M, p->N, kept, x + r0 * p->M, 1, p->M, y + r0 * p->N, p->N,
                               out + b * p->M * p->N, p->N, NULL, work);
            continue;
        }
        if (kept > 0)
            PK_FN(jg_bmm_gemm)(j, kept, p->N, p->K, x + r0 * p->K, p->K, 1, y + b * p->K * p->N, p->N,
                               out + r0 * p->N, p->N, NULL, work);
        if (len > kept)
            memset(out + (r0 + kept) * p->N, 0, (size_t)((len - kept) * p->N) * sizeof(JG_T_));
    }
}

/* permute102: task t = (batch entry jb, row block of P102_ROWS rows). */
static void PK_FN(jg_permute102_tasks)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const jg_bmm_job *j = user;
    const jg_plan *p = j->p;
    const JG_T_ *a = j->x, *b = j->y, *bias = j->bias;
    JG_T_ *out = j->out;
    void *work = j->work + (size_t)thread_index * j->work_bytes;
    for (int64_t t = begin; t < end; t++) {
        int64_t jb = t / j->m_blocks, i0 = (t % j->m_blocks) * P102_ROWS;
        int64_t rows = p->M - i0 < P102_ROWS ? p->M - i0 : P102_ROWS;
        PK_FN(jg_bmm_gemm)(j, rows, p->N, p->K, a + i0 * p->B * p->K + jb * p->K, p->B * p->K, 1,
                           b + jb * p->K * p->N, p->N, out + i0 * p->B * p->N + jb * p->N, p->B * p->N,
                           bias + jb * p->N, work);
    }
}

/* The data of t as T: in place, or widened into scratch. */
static loom_status PK_FN(jg_bmm_stage_in)(loom_call *call, const loom_tensor *t, const void **out)
{
#if PK_NARROW(PK_SFX)
    const int64_t n = loom_numel(t);
    JG_T_ *w = pk_host->scratch(call->ctx, (size_t)(n > 0 ? n : 1) * sizeof(JG_T_));
    if (w == NULL)
        return LOOM_ENOMEM;
    const PK_S(PK_SFX) *s = loom_data(t);
    for (int64_t i = 0; i < n; i++)
        w[i] = PK_LD(PK_SFX)(s + i);
    *out = w;
#else
    (void)call;
    *out = loom_data(t);
#endif
    return LOOM_OK;
}

/* Stage the operands named by idx[] (x, y, bias in that order), pick the
** output buffer (the output itself, or a T scratch rounded into it at the
** end), take the per-thread workspaces, run fn over the tasks. With
** jagged_out, the output's rows [0, off[0]) that no batch row owns are
** zeroed. ws[3]: the largest m, n, k of one GEMM. */
static loom_status PK_FN(jg_bmm_run)(loom_call *call, jg_bmm_job *j, loom_tensor *out, const int *idx, int n_idx,
                                     int64_t tasks, int64_t grain, int permute102, const int64_t *ws)
{
    const void **slots[3] = { &j->x, &j->y, &j->bias };
    loom_status st = LOOM_OK;
    for (int i = 0; st == LOOM_OK && i < n_idx; i++)
        st = PK_FN(jg_bmm_stage_in)(call, call->inputs[idx[i]], slots[i]);
    if (st != LOOM_OK)
        return st;
#if PK_NARROW(PK_SFX)
    JG_T_ *dst = pk_host->scratch(call->ctx, (size_t)loom_numel(out) * sizeof(JG_T_));
    if (dst == NULL)
        return LOOM_ENOMEM;
#else
    JG_T_ *dst = loom_data(out);
#endif
    j->out = dst;
    const int64_t threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    j->work_bytes = (jg_gemm_workspace(JG_CDT_, ws[0], ws[1], ws[2]) + 63) & ~(size_t)63;
    j->work = pk_host->scratch(call->ctx, j->work_bytes * (size_t)threads + 64);
    if (j->work == NULL)
        return LOOM_ENOMEM;
    if (j->jagged_out && j->p->off[0] > 0)
        memset(dst, 0, (size_t)(j->p->off[0] * j->p->N) * sizeof(JG_T_));   /* rows no batch row owns */
    st = pk_host->parallel_for(call->ctx, tasks, grain, permute102 ? PK_FN(jg_permute102_tasks) : PK_FN(jg_bag_rows),
                               j);
#if PK_NARROW(PK_SFX)
    if (st == LOOM_OK) {
        PK_S(PK_SFX) *o = loom_data(out);
        for (int64_t i = 0, n = loom_numel(out); i < n; i++)
            PK_ST(PK_SFX)(o + i, dst[i]);
    }
#endif
    return st;
}

#undef JG_T_
#undef JG_CDT_
#undef PK_SFX
