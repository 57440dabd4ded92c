/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_cpu.c - the cpu kernels of the beamforming ops and the engine
** the object methods share (beamform_cpu.h): the precision's instance of
** beamform_tmpl.h over the core's pool, one bin per task, with per-thread
** workspaces from scratch; and the beamform module of audio.so.
*/
#include <string.h>

#include "beamform_cpu.h"
#include "beamform_lapack.h"
#include "beamform_lub.h"
#include "cpu.h"

#define BF_SFX c64
#define BF_R float
#include "beamform_tmpl.h"
#define BF_SFX c128
#define BF_R double
#include "beamform_tmpl.h"

int bf_have_avx2(void)
{
    return pk_cpu_avx2(PK_CPU_FMA);
}

bf_refv bf_refv_of(const bf_ref *ref)
{
    bf_refv r = { .present = ref->present, .index = ref->index };
    if (ref->u != NULL) {
        r.index = -1;
        r.u = loom_data(ref->u);
        r.u_dtype = loom_tensor_dtype_of(ref->u);
        r.u_batch = ref->u_batch;
    }
    return r;
}

static int32_t threads_of(const loom_exec_ctx *ctx)
{
    return ctx->n_threads > 0 ? ctx->n_threads : 1;
}

/* per-thread workspaces of `bytes` (rounded to cache lines) for the call */
static loom_status workspaces(loom_exec_ctx *ctx, size_t bytes, char **ws, size_t *ws_bytes)
{
    *ws_bytes = (bytes + 63) & ~(size_t)63;
    *ws = pk_host->scratch(ctx, *ws_bytes * (size_t)threads_of(ctx));
    return *ws != NULL ? LOOM_OK : LOOM_ENOMEM;
}

static loom_status solve_failed(int64_t bin, int info, const bf_geom *g, const char *name, int loading)
{
    if (info > 0)
        return pk_host->fail(LOOM_EINVAL, "'%s' is singular at matrix %lld (batch %lld, freq %lld): U(%d,%d) of its "
                             "LU factors is zero%s", name, (long long)bin, (long long)(bin / g->F),
                             (long long)(bin % g->F), info, info,
                             loading ? "" : "; diagonal_loading=true makes it invertible");
    return pk_host->fail(LOOM_EINTERNAL, "LAPACK getrf refused argument %d for '%s'", -info, name);
}

#define BF_JOB_INIT(j, g_) \
    do { memset(&(j), 0, sizeof(j)); (j).g = (g_); (j).bad_bin = -1; (j).avx2 = bf_have_avx2(); } while (0)

/* ----------------------------------------------------------------- engine */

loom_status bf_psd_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *x, const void *mask, int normalize,
                       double eps, void *psd)
{
    const int64_t n = g->batch * g->F, C = g->C;
    if (n == 0 || C == 0)
        return LOOM_OK;
    const int64_t TB = g->T < BF_PSD_BLOCK ? g->T : BF_PSD_BLOCK;
    const size_t rs = g->dtype == LOOM_DTYPE_C128 ? sizeof(double) : sizeof(float);
    const size_t bytes = (size_t)(4 * C * TB + 2 * C * C + TB + 8) * rs;
    char *ws;
    size_t wsb;
    loom_status st;
    if ((st = workspaces(ctx, bytes, &ws, &wsb)) != LOOM_OK)
        return st;
    if (g->dtype == LOOM_DTYPE_C128) {
        bf_job_c128 j;
        BF_JOB_INIT(j, g);
        j.x = x, j.mask = mask, j.out = psd, j.normalize = normalize, j.eps = eps, j.ws = ws, j.ws_bytes = wsb;
        return pk_host->parallel_for(ctx, n, 1, psd_bins_c128, &j);
    }
    bf_job_c64 j;
    BF_JOB_INIT(j, g);
    j.x = x, j.mask = mask, j.out = psd, j.normalize = normalize, j.eps = eps, j.ws = ws, j.ws_bytes = wsb;
    return pk_host->parallel_for(ctx, n, 1, psd_bins_c64, &j);
}

/* One of the solve-based loops over every bin, then the first failure. */
#define BF_RUN_SOLVES(fn, ws_bytes_expr, name, setup)                                                        \
    do {                                                                                                    \
        const int64_t n = g->batch * g->F;                                                                  \
        if (n == 0 || g->C == 0)                                                                            \
            return LOOM_OK;                                                                                 \
        char *ws;                                                                                           \
        size_t wsb;                                                                                         \
        loom_status st;                                                                                     \
        if (g->dtype == LOOM_DTYPE_C128) {                                                                  \
            bf_job_c128 j;                                                                                  \
            BF_JOB_INIT(j, g);                                                                              \
            if ((st = workspaces(ctx, ws_bytes_expr(c128), &ws, &wsb)) != LOOM_OK)                         \
                return st;                                                                                  \
            j.ws = ws, j.ws_bytes = wsb;                                                                    \
            setup;                                                                                          \
            st = pk_host->parallel_for(ctx, n, 4, fn##_c128, &j);                                           \
            if (st == LOOM_OK && j.bad_bin >= 0)                                                            \
                return solve_failed(j.bad_bin, j.bad_info, g, name, load.on);                               \
            return st;                                                                                      \
        }                                                                                                   \
        bf_job_c64 j;                                                                                       \
        BF_JOB_INIT(j, g);                                                                                  \
        if ((st = workspaces(ctx, ws_bytes_expr(c64), &ws, &wsb)) != LOOM_OK)                              \
            return st;                                                                                      \
        j.ws = ws, j.ws_bytes = wsb;                                                                        \
        setup;                                                                                              \
        st = pk_host->parallel_for(ctx, n, 4, fn##_c64, &j);                                                \
        if (st == LOOM_OK && j.bad_bin >= 0)                                                                \
            return solve_failed(j.bad_bin, j.bad_info, g, name, load.on);                                   \
        return st;                                                                                          \
    } while (0)

#define MAT_WS(sfx) mat_ws_bytes_##sfx(g->C)

loom_status bf_souden_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, const void *psd_n,
                          const bf_refv *ref, bf_loading load, double eps, void *w)
{
    BF_RUN_SOLVES(souden_bins, MAT_WS, "psd_n",
                  (j.psd_s = psd_s, j.psd_n = psd_n, j.ref = *ref, j.load = load, j.eps = eps, j.out = w));
}

/* ---------------------------------------------- the lane-batched solves */

typedef void (*bf_lub_fn)(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info);

typedef struct lub_job {
    const bf_lub_problem *p;
    bf_lub_fn fn;
    int lanes;
    int64_t bins;
    char *ws;
    size_t ws_bytes;
    int64_t bad;          /* the lowest failing bin * 256 + its info (<= C <= 16), or INT64_MAX */
} lub_job;

static void lub_groups(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    lub_job *j = user;
    void *ws = j->ws + (size_t)thread_index * j->ws_bytes;
    for (int64_t grp = begin; grp < end; grp++) {
        int64_t bin0 = grp * j->lanes;
        int nl = (int)(j->bins - bin0 < j->lanes ? j->bins - bin0 : j->lanes), info[8];
        j->fn(j->p, bin0, nl, ws, info);
        for (int l = 0; l < nl; l++)
            if (info[l] != 0) {
                int64_t key = (bin0 + l) * 256 + info[l], seen = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);
                while (key < seen &&
                       !__atomic_compare_exchange_n(&j->bad, &seen, key, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                    ;
                break;
            }
    }
}

/* p's op over every bin, BF_LUB_LANES bins per task */
static loom_status run_lub(loom_exec_ctx *ctx, const bf_geom *g, const bf_lub_problem *p, bf_lub_fn c64,
                           bf_lub_fn c64_avx2, bf_lub_fn c128, bf_lub_fn c128_avx2, const char *name)
{
    lub_job j = { .p = p, .lanes = BF_LUB_LANES(g->dtype), .bins = g->batch * g->F, .bad = INT64_MAX };
    if (j.bins == 0 || g->C == 0)
        return LOOM_OK;
    int avx2 = bf_have_avx2();
    j.fn = g->dtype == LOOM_DTYPE_C128 ? (avx2 ? c128_avx2 : c128) : (avx2 ? c64_avx2 : c64);
    loom_status st = workspaces(ctx, bf_lub_ws_bytes(g->C), &j.ws, &j.ws_bytes);
    if (st != LOOM_OK)
        return st;
    st = pk_host->parallel_for(ctx, (j.bins + j.lanes - 1) / j.lanes, 1, lub_groups, &j);
    if (st == LOOM_OK && j.bad != INT64_MAX)
        return solve_failed(j.bad / 256, (int)(j.bad % 256), g, name, p->load.on);
    return st;
}

#define BF_LUB_RUN(op)                                                                                   \
    run_lub(ctx, g, &p, bf_lub_##op##_c64, bf_lub_##op##_c64_avx2, bf_lub_##op##_c128, bf_lub_##op##_c128_avx2, \
            "psd_n")

loom_status bf_rtf_weights_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *rtf, const void *psd_n,
                               const bf_refv *ref, bf_loading load, double eps, void *w)
{
    if (g->C <= BF_LUB_MAX_C) {
        bf_lub_problem p = { .C = g->C, .F = g->F, .rtf = rtf, .psd_n = psd_n, .out = w, .ref = ref, .load = load,
                             .eps = eps };
        return BF_LUB_RUN(rtf_weights);
    }
    BF_RUN_SOLVES(rtf_weights_bins, MAT_WS, "psd_n",
                  (j.rtf = rtf, j.psd_n = psd_n, j.ref = *ref, j.load = load, j.eps = eps, j.out = w));
}

loom_status bf_rtf_power_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, const void *psd_n,
                             const bf_refv *ref, int64_t n_iter, bf_loading load, void *rtf)
{
    if (g->C <= BF_LUB_MAX_C) {
        bf_lub_problem p = { .C = g->C, .F = g->F, .psd_s = psd_s, .psd_n = psd_n, .out = rtf, .ref = ref,
                             .load = load, .n_iter = n_iter };
        return BF_LUB_RUN(rtf_power);
    }
    BF_RUN_SOLVES(rtf_power_bins, MAT_WS, "psd_n",
                  (j.psd_s = psd_s, j.psd_n = psd_n, j.ref = *ref, j.load = load, j.n_iter = n_iter, j.out = rtf));
}

loom_status bf_rtf_evd_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, void *rtf)
{
    const int64_t n = g->batch * g->F, C = g->C;
    if (n == 0 || C == 0)
        return LOOM_OK;
    const size_t rs = g->dtype == LOOM_DTYPE_C128 ? sizeof(double) : sizeof(float);
    const size_t bytes = (size_t)(2 * C * C + C + 16) * rs + bf_heevd_work_bytes((int)C, rs);
    char *ws;
    size_t wsb;
    loom_status st;
    if ((st = workspaces(ctx, bytes, &ws, &wsb)) != LOOM_OK)
        return st;
    int64_t bad;
    int info;
    if (g->dtype == LOOM_DTYPE_C128) {
        bf_job_c128 j;
        BF_JOB_INIT(j, g);
        j.psd_s = psd_s, j.out = rtf, j.ws = ws, j.ws_bytes = wsb;
        st = pk_host->parallel_for(ctx, n, 4, rtf_evd_bins_c128, &j);
        bad = j.bad_bin, info = j.bad_info;
    } else {
        bf_job_c64 j;
        BF_JOB_INIT(j, g);
        j.psd_s = psd_s, j.out = rtf, j.ws = ws, j.ws_bytes = wsb;
        st = pk_host->parallel_for(ctx, n, 4, rtf_evd_bins_c64, &j);
        bad = j.bad_bin, info = j.bad_info;
    }
    if (st == LOOM_OK && bad >= 0)
        return pk_host->fail(LOOM_EINVAL, "'psd_s': the eigensolver (LAPACK heevd) failed at matrix %lld with info %d "
                             "(non-finite values?)", (long long)bad, info);
    return st;
}

loom_status bf_apply_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *w, const void *x, void *out)
{
    const int64_t n = g->batch * g->F;
    if (n == 0 || g->T == 0)
        return LOOM_OK;
    const int64_t grain = g->T * g->C >= 4096 ? 1 : 4096 / (g->T * g->C + 1) + 1;
    if (g->dtype == LOOM_DTYPE_C128) {
        bf_job_c128 j;
        BF_JOB_INIT(j, g);
        j.w = w, j.x = x, j.out = out;
        return pk_host->parallel_for(ctx, n, grain, apply_bins_c128, &j);
    }
    bf_job_c64 j;
    BF_JOB_INIT(j, g);
    j.w = w, j.x = x, j.out = out;
    return pk_host->parallel_for(ctx, n, grain, apply_bins_c64, &j);
}

/* ------------------------------------------------------------ the kernels */

static bf_loading loading_of(const loom_call *call, int32_t on_attr, int32_t eps_attr)
{
    bf_loading l = { call->attrs[on_attr].u.b, call->attrs[eps_attr].u.f };
    return l;
}

static loom_status psd_run(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_psd_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const loom_tensor *m = call->inputs[BF_PSD_MASK];
    if (g.T == 0) {   /* a sum over no frames */
        memset(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype));
        return LOOM_OK;
    }
    return bf_psd_cpu(call->ctx, &g, loom_data(call->inputs[BF_PSD_SPECGRAM]), m != NULL ? loom_data(m) : NULL,
                      call->attrs[PK_ATTR(bf_psd, normalize)].u.b, call->attrs[PK_ATTR(bf_psd, eps)].u.f,
                      loom_data(out));
}

static loom_status souden_run(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    loom_status st = bf_souden_check(call, &g, &ref, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_refv r = bf_refv_of(&ref);
    return bf_souden_cpu(call->ctx, &g, loom_data(call->inputs[0]), loom_data(call->inputs[1]), &r,
                         loading_of(call, PK_ATTR(bf_weights, diagonal_loading), PK_ATTR(bf_weights, diag_eps)),
                         call->attrs[PK_ATTR(bf_weights, eps)].u.f, loom_data(out));
}

static loom_status rtf_weights_run(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    loom_status st = bf_rtf_weights_check(call, &g, &ref, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_refv r = bf_refv_of(&ref);
    return bf_rtf_weights_cpu(call->ctx, &g, loom_data(call->inputs[0]), loom_data(call->inputs[1]), &r,
                              loading_of(call, PK_ATTR(bf_weights, diagonal_loading), PK_ATTR(bf_weights, diag_eps)),
                              call->attrs[PK_ATTR(bf_weights, eps)].u.f, loom_data(out));
}

static loom_status rtf_evd_run(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_rtf_evd_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    return bf_rtf_evd_cpu(call->ctx, &g, loom_data(call->inputs[0]), loom_data(out));
}

static loom_status rtf_power_run(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    loom_status st = bf_rtf_power_check(call, &g, &ref, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_refv r = bf_refv_of(&ref);
    return bf_rtf_power_cpu(call->ctx, &g, loom_data(call->inputs[0]), loom_data(call->inputs[1]), &r,
                            call->attrs[PK_ATTR(bf_rtf_power, n_iter)].u.i,
                            loading_of(call, PK_ATTR(bf_rtf_power, diagonal_loading), PK_ATTR(bf_rtf_power, diag_eps)),
                            loom_data(out));
}

static loom_status apply_run(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_apply_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (g.C == 0) {   /* a sum over no channels */
        memset(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype));
        return LOOM_OK;
    }
    return bf_apply_cpu(call->ctx, &g, loom_data(call->inputs[BF_APPLY_WEIGHTS]),
                        loom_data(call->inputs[BF_APPLY_SPECGRAM]), loom_data(out));
}

/* ------------------------------------------------------------------ module */

static const loom_object_class *const bf_classes[] = { &bf_psd_class, &bf_souden_class, &bf_rtf_class,
                                                       &bf_mvdr_class };

/* The kernels whose loops have an AVX2 path are named after the path that
** LOOM_CPU_MAX_ISA leaves them, so they are registered once the CPU
** features are known (the core copies each descriptor). The solves are
** LAPACK's whatever the ISA. */
static loom_status bf_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    const int v = bf_have_avx2();
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(bf_psd_schema, v ? "cpu:hermitian-rank-t-avx2" : "cpu:hermitian-rank-t", BF_COMPLEX | BF_REAL,
                      psd_run),
        PK_KERNEL_CPU(bf_souden_schema, "cpu:lapack-getrf", BF_COMPLEX | BF_REAL, souden_run),
        PK_KERNEL_CPU(bf_rtf_weights_schema, "cpu:lane-batched-lu", BF_COMPLEX | BF_REAL, rtf_weights_run),
        PK_KERNEL_CPU(bf_rtf_evd_schema, "cpu:lapack-heevd", BF_COMPLEX, rtf_evd_run),
        PK_KERNEL_CPU(bf_rtf_power_schema, "cpu:lane-batched-lu", BF_COMPLEX | BF_REAL, rtf_power_run),
        PK_KERNEL_CPU(bf_apply_schema, v ? "cpu:avx2" : "cpu:scalar", BF_COMPLEX, apply_run),
        PK_KERNEL_CPU(bf_psd_method_schema, v ? "cpu:hermitian-rank-t-avx2" : "cpu:hermitian-rank-t",
                      BF_COMPLEX | BF_REAL, bf_psd_method_run),
        PK_KERNEL_CPU(bf_souden_method_schema, "cpu:lapack-getrf", BF_COMPLEX | BF_REAL, bf_souden_method_run),
        PK_KERNEL_CPU(bf_rtf_method_schema, "cpu:lane-batched-lu", BF_COMPLEX | BF_REAL, bf_rtf_method_run),
        PK_KERNEL_CPU(bf_mvdr_method_schema, "cpu:c128-lapack", BF_COMPLEX | BF_REAL, bf_mvdr_method_run),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module audio_beamform_cpu = {
    .name = "beamform", .ops = audio_beamform_ops, .n_ops = PK_COUNT(audio_beamform_ops),
    .classes = bf_classes, .n_classes = PK_COUNT(bf_classes), .register_more = bf_register_cpu,
};
