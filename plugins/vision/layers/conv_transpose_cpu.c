/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose_cpu.c - vision.conv_transpose2d on the cpu backend, the
** col2im formulation (conv2d's im2col read backwards):
**   col[g] = W[g]^T x[g]      one batched GEMM per image on the shared GEMM
**                             (pk_gemm), batch = groups: W[g] is the
**                             Cin_g x (Cout_g kh kw) block read transposed,
**                             x[g] the Cin_g x (H W) input rows
**   y[co] = bias[co] + the kh kw rows of col[co] scattered onto the output
**                             grid (col2im)
** Threads: a batch runs an image per task (its serial GEMM and col2im in
** the thread's own column buffer and workspace, one scratch block for the
** call whatever the batch); one image runs the GEMM on the core's pool,
** then col2im with a task per output channel (no two write one plane).
*/
#include <string.h>

#include "conv_transpose.h"
#include "gemm/gemm.h"

typedef struct col2im_job {
    const conv_transpose_geom *g;
    const float *col;               /* [cout * kh * kw, h * w] of one image */
    float *y;                       /* [cout, ho, wo] of the same image */
} col2im_job;

static void col2im_channels(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const col2im_job *j = user;
    const conv_transpose_geom *g = j->g;
    const int64_t plane = g->ho * g->wo, taps = g->kh * g->kw, hw = g->h * g->w;
    for (int64_t co = begin; co < end; co++) {
        float *y = j->y + co * plane;
        const float b = g->bias != NULL ? g->bias[co] : 0.0f;
        for (int64_t p = 0; p < plane; p++)
            y[p] = b;
        for (int64_t t = 0; t < taps; t++) {
            const int64_t ki = t / g->kw, kj = t % g->kw;
            const float *src = j->col + (co * taps + t) * hw;
            for (int64_t iy = 0; iy < g->h; iy++) {
                const int64_t oy = iy * g->sh - g->ph + ki * g->dh;
                if (oy < 0 || oy >= g->ho)
                    continue;
                float *yr = y + oy * g->wo;
                const float *sr = src + iy * g->w;
                for (int64_t ix = 0; ix < g->w; ix++) {
                    const int64_t ox = ix * g->sw - g->pw + kj * g->dw;
                    if (ox >= 0 && ox < g->wo)
                        yr[ox] += sr[ix];
                }
            }
        }
    }
}

/* The GEMM of image n: col[g] = W[g]^T x[n, g] for every group g. */
static pk_gemm_args image_gemm(const conv_transpose_geom *g, int64_t n, float *col)
{
    const int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups, taps = g->kh * g->kw;
    const int64_t hw = g->h * g->w;
    pk_gemm_args a = PK_GEMM_ARGS_INIT;
    a.m = cout_g * taps;
    a.n = hw;
    a.k = cin_g;
    a.batch = g->groups;
    a.a = pk_gemm_matrix(g->wt, LOOM_DTYPE_F32, cout_g * taps, 1);     /* [cin_g, cout_g taps]^T */
    a.a.bs = cin_g * cout_g * taps;
    a.b = pk_gemm_matrix(g->x + n * g->cin * hw, LOOM_DTYPE_F32, hw, 0);
    a.b.bs = cin_g * hw;
    a.c = col;
    a.ldc = hw;
    a.c_bs = cout_g * taps * hw;
    return a;
}

/* Images in parallel, one per task, each with its thread's column buffer
** and GEMM workspace (a slot of `slot` bytes: col, then the workspace). */
typedef struct images_job {
    const conv_transpose_geom *g;
    size_t col_bytes, slot;
    char *work;
    int failed;                     /* a workspace too small: never, as sized from the image's GEMM */
} images_job;

static void image_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    images_job *j = user;
    const conv_transpose_geom *g = j->g;
    char *slot = j->work + (size_t)thread_index * j->slot;
    float *col = (float *)(void *)slot;
    for (int64_t n = begin; n < end; n++) {
        pk_gemm_args a = image_gemm(g, n, col);
        if (pk_gemm_serial(&a, slot + j->col_bytes, j->slot - j->col_bytes) != LOOM_OK) {
            j->failed = 1;
            continue;
        }
        col2im_job c = { g, col, g->y + n * g->cout * g->ho * g->wo };
        col2im_channels(&c, 0, g->cout, thread_index);
    }
}

static loom_status conv_transpose2d_run_cpu(loom_call *call)
{
    conv_transpose_geom g;
    loom_tensor *out;
    loom_status st = conv_transpose2d_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t taps = g.kh * g.kw, hw = g.h * g.w;
    const size_t col_bytes = ((size_t)(g.cout * taps * hw) * sizeof(float) + 63) / 64 * 64;
    const int32_t threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    if (g.n > 1 || threads == 1) {
        /* a batch (Mask R-CNN's: one image per detection): the images in
        ** parallel, so the scratch is one column buffer and one GEMM
        ** workspace per thread, whatever the batch */
        pk_gemm_args a = image_gemm(&g, 0, NULL);
        images_job j = { &g, col_bytes, 0, NULL, 0 };
        j.slot = col_bytes + (pk_gemm_serial_workspace(&a) + 63) / 64 * 64;
        if ((j.work = pk_host->scratch(call->ctx, j.slot * (size_t)threads)) == NULL)
            return pk_host->fail(LOOM_ENOMEM, "conv_transpose2d: no scratch for %d column buffers and GEMM "
                                 "workspaces of %zu bytes", (int)threads, j.slot);
        if ((st = pk_host->parallel_for(call->ctx, g.n, 1, image_tasks, &j)) != LOOM_OK)
            return st;
        return j.failed ? pk_host->fail(LOOM_EINVAL, "conv_transpose2d: a GEMM workspace was too small") : LOOM_OK;
    }
    /* one image: the GEMM threaded, then col2im over the output channels */
    float *col = pk_host->scratch(call->ctx, col_bytes);
    if (col == NULL)
        return pk_host->fail(LOOM_ENOMEM, "conv_transpose2d: no scratch for the %lld x %lld column buffer",
                             (long long)(g.cout * taps), (long long)hw);
    pk_gemm_args a = image_gemm(&g, 0, col);
    if ((st = pk_gemm(call->ctx, &a)) != LOOM_OK)
        return st;
    col2im_job job = { &g, col, g.y };
    const int64_t work = taps * hw + g.ho * g.wo;
    return pk_host->parallel_for(call->ctx, g.cout, 1 + 16384 / work, col2im_channels, &job);
}

const loom_kernel_desc layers_conv_transpose2d_cpu_kernel =
    PK_KERNEL_CPU(vision_conv_transpose2d_schema, "cpu:gemm-col2im", LAYERS_DTYPES, conv_transpose2d_run_cpu);
