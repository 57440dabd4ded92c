/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv2d_cpu.c - vision.conv2d on the cpu backend: im2col into the call's
** scratch, then one batched GEMM per image on the shared GEMM (pk_gemm),
** batch = groups: C[g] = W[g] (Cout/groups x K) * col[g] (K x Ho*Wo), with
** the bias (per row: the output channel) and the activation applied in the
** GEMM's epilogue, so the output is written once.
**
** A residual is copied into the output first and accumulated by the GEMM
** (beta = 1), so the epilogue sees conv + residual + bias before the
** activation: act(conv + bias + residual), in one pass over the output.
** With residual_after_activation the GEMM's epilogue adds it after the
** activation instead: act(conv + bias) + residual.
**
** A depthwise convolution (groups == Cin == Cout) runs the direct kernel of
** depthwise.h instead (its own epilogue, the same arithmetic).
**
** A 1x1 convolution with stride 1 and no padding reads the input itself as
** the GEMM's B (no im2col). The padding modes are index maps of the im2col
** (nn.Conv2d pads with F.pad(mode) and convolves without padding, which
** samples the same values: layers_pad_source).
** Threads: a batch of at least as many images as threads runs an image per
** task (its im2col and a serial GEMM in the thread's own buffers: the
** scratch stays one set per thread); a smaller one runs im2col over the
** column rows on the core's pool and the GEMM on it as well (pk_gemm).
*/
#include <string.h>

#include "depthwise.h"
#include "gemm/gemm.h"
#include "layers.h"

typedef struct im2col_job {
    const conv2d_geom *g;
    const float *x;                 /* one image [cin, h, w] */
    float *col;                     /* [cin * kh * kw, ho * wo] */
} im2col_job;

static void im2col_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const im2col_job *j = user;
    const conv2d_geom *g = j->g;
    int64_t taps = g->kh * g->kw, plane = g->ho * g->wo;
    for (int64_t r = begin; r < end; r++) {
        int64_t c = r / taps, ki = (r % taps) / g->kw, kj = r % g->kw;
        const float *xc = j->x + c * g->h * g->w;
        float *dst = j->col + r * plane;
        for (int64_t oy = 0; oy < g->ho; oy++) {
            int64_t iy = layers_pad_source(oy * g->sh - g->ph + ki * g->dh, g->h, g->pad_mode);
            float *d = dst + oy * g->wo;
            if (iy < 0) {
                memset(d, 0, (size_t)g->wo * sizeof *d);
                continue;
            }
            const float *xr = xc + iy * g->w;
            int64_t x0 = kj * g->dw - g->pw;
            if (g->sw == 1 && x0 >= 0 && x0 + g->wo <= g->w) {
                memcpy(d, xr + x0, (size_t)g->wo * sizeof *d);     /* the row lies inside the map */
                continue;
            }
            for (int64_t ox = 0; ox < g->wo; ox++) {
                int64_t ix = layers_pad_source(ox * g->sw + x0, g->w, g->pad_mode);
                d[ox] = ix < 0 ? 0.0f : xr[ix];
            }
        }
    }
}

/* The GEMM of image n: its input (or its im2col, col), weights, output,
** bias and residual (copied into y beforehand unless residual_after). */
static pk_gemm_args image_gemm(const conv2d_geom *g, int64_t n, const float *col)
{
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    int64_t k = cin_g * g->kh * g->kw, plane = g->ho * g->wo;
    pk_gemm_args a = PK_GEMM_ARGS_INIT;
    a.m = cout_g;
    a.n = plane;
    a.k = k;
    a.batch = g->groups;
    a.a = pk_gemm_matrix(g->wt, LOOM_DTYPE_F32, k, 0);
    a.a.bs = cout_g * k;
    a.b = pk_gemm_matrix(col != NULL ? col : g->x + n * g->cin * g->h * g->w, LOOM_DTYPE_F32, plane, 0);
    a.b.bs = k * plane;
    a.c = g->y + n * g->cout * plane;
    a.ldc = plane;
    a.c_bs = cout_g * plane;
    if (g->bias != NULL) {
        a.bias_kind = PK_GEMM_BIAS_ROW;
        a.bias = g->bias;
        a.bias_bs = cout_g;
    }
    a.act = (pk_gemm_act)g->act;
    a.beta = g->residual != NULL && !g->residual_after ? 1.0 : 0.0;
    if (g->residual_after) {     /* the GEMM's epilogue: act(v + bias) + residual */
        a.residual = g->residual + n * g->cout * plane;
        a.ldr = plane;
        a.r_bs = cout_g * plane;
    }
    return a;
}

/* Images in parallel, one per task, each with its thread's im2col buffer and
** GEMM workspace (a slot of `slot` bytes: col, then the workspace). */
typedef struct images_job {
    const conv2d_geom *g;
    int direct;
    size_t col_bytes, slot;
    char *work;
    int failed;                     /* a workspace too small: never, as sized from the largest image */
} images_job;

static void image_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    images_job *j = user;
    const conv2d_geom *g = j->g;
    char *slot = j->work + (size_t)thread_index * j->slot;
    float *col = j->direct ? NULL : (float *)(void *)slot;
    for (int64_t n = begin; n < end; n++) {
        if (!j->direct) {
            im2col_job job = { g, g->x + n * g->cin * g->h * g->w, col };
            im2col_rows(&job, 0, g->cin * g->kh * g->kw, thread_index);
        }
        pk_gemm_args a = image_gemm(g, n, col);
        if (pk_gemm_serial(&a, slot + j->col_bytes, j->slot - j->col_bytes) != LOOM_OK)
            j->failed = 1;
    }
}

static loom_status conv2d_run_cpu(loom_call *call)
{
    conv2d_geom g;
    loom_tensor *out;
    loom_status st = conv2d_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (conv2d_is_depthwise(&g))
        return conv2d_depthwise_run(call->ctx, &g);
    int64_t plane = g.ho * g.wo;
    int direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
    size_t col_bytes = direct ? 0 : ((size_t)(g.cin * g.kh * g.kw * plane) * sizeof(float) + 63) / 64 * 64;
    if (g.residual != NULL && !g.residual_after && g.residual != g.y)
        memcpy(g.y, g.residual, (size_t)(g.n * g.cout * plane) * sizeof(float));
    int32_t threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    if (g.n >= threads && threads > 1) {
        /* a batch: the images in parallel, so the scratch is one im2col
        ** buffer and one GEMM workspace per thread, whatever the batch (a
        ** call's scratch lives until it returns: a threaded GEMM per image
        ** would hold one set of packed panels per image) */
        pk_gemm_args a = image_gemm(&g, 0, direct ? NULL : g.x);
        images_job j = { &g, direct, col_bytes, 0, NULL, 0 };
        j.slot = col_bytes + (pk_gemm_serial_workspace(&a) + 63) / 64 * 64;
        if ((j.work = pk_host->scratch(call->ctx, j.slot * (size_t)threads)) == NULL)
            return pk_host->fail(LOOM_ENOMEM, "conv2d: no scratch for %d im2col buffers and GEMM workspaces of "
                                 "%zu bytes", (int)threads, j.slot);
        if ((st = pk_host->parallel_for(call->ctx, g.n, 1, image_tasks, &j)) != LOOM_OK)
            return st;
        return j.failed ? pk_host->fail(LOOM_EINVAL, "conv2d: a GEMM workspace was too small") : LOOM_OK;
    }
    float *col = NULL;
    if (!direct && (col = pk_host->scratch(call->ctx, col_bytes)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "conv2d: no scratch for the %lld x %lld im2col buffer",
                             (long long)(g.cin * g.kh * g.kw), (long long)plane);
    for (int64_t n = 0; n < g.n; n++) {
        if (!direct) {
            im2col_job job = { &g, g.x + n * g.cin * g.h * g.w, col };
            int64_t grain = 1 + 16384 / (plane > 0 ? plane : 1);
            if ((st = pk_host->parallel_for(call->ctx, g.cin * g.kh * g.kw, grain, im2col_rows, &job)) != LOOM_OK)
                return st;
        }
        pk_gemm_args a = image_gemm(&g, n, col);
        if ((st = pk_gemm(call->ctx, &a)) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

const loom_kernel_desc layers_conv2d_cpu_kernel =
    PK_KERNEL_CPU(vision_conv2d_schema, "cpu:im2col-gemm", LAYERS_DTYPES, conv2d_run_cpu);
