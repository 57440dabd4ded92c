/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_conv_cpu.c - vision.deform_conv2d and its backward on the CPU.
**
** Forward: deformable im2col + GEMM, as torchvision does, but tiled so the
** columns stay in cache and never exist for a whole image: a task is one
** image x one tile of up to 4 x 16 output positions. For each offset group
** and kernel tap, the four corner offsets and bilinear weights of the tile's
** positions are computed once and reused for every channel of that offset
** group (torchvision recomputes them per channel). The tile's columns
** ([ktot x width], row-major) go through the common GEMM (deform_gemm.h)
** with the weights of each group, packed once per call, and the bias added
** in its epilogue. Tasks go through host->parallel_for; each thread owns
** its column buffer and GEMM workspace.
**
** Backward (torchvision's formulas): per image, columns (im2col),
** grad_columns = weight_g^T * grad_g and grad_weight_g += grad_g * columns_g^T
** (both through the common GEMM, deform_gemm); then one
** pass over (offset group, tap, position) computes grad_offset / grad_mask
** (get_coordinate_weight, and the plain bilinear sample for the mask) and
** scatters grad_input. The images are
** cut into a fixed number of chunks (min(N, 8), independent of the thread
** count); a chunk runs on one thread, so the scatter never races, and each
** chunk accumulates its own grad_weight, summed in chunk order at the end:
** the result is deterministic and independent of the number of threads.
**
** f16 computes in f32 (inputs widened, outputs rounded once), as a float
** accumulation, except the sample positions, which are rounded to f16 as
** torchvision computes them in half. Sampling follows deform_sample.h.
*/
#include <math.h>
#include <string.h>

#include "deform.h"
#include "deform_gemm.h"
#include "deform_sample.h"

#define TILE_POS 16               /* output positions of a tile: a multiple of this */
#define TILE_PANELS_MAX 4
#define BWD_CHUNKS_MAX 8

/* Sizes derived once per call. */
typedef struct conv_dims {
    int64_t taps, hw, in_hw, kg, ktot, cout_g, cin_g, cpo;
} conv_dims;

static conv_dims dims_of(const deform_geom *g)
{
    conv_dims d;
    d.taps = g->kh * g->kw;
    d.hw = g->ho * g->wo;
    d.in_hw = g->h * g->w;
    d.cin_g = g->cin / g->groups;
    d.kg = d.cin_g * d.taps;
    d.ktot = g->cin * d.taps;
    d.cout_g = g->cout / g->groups;
    d.cpo = g->cin / g->offset_groups;
    return d;
}

/* ------------------------------------------------------ templated kernels */

#define PK_SFX f32
#include "deform_conv_tmpl.h"
#define PK_SFX f64
#include "deform_conv_tmpl.h"

/* ------------------------------------------------------------ forward */

typedef struct fwd_job {
    const deform_geom *g;
    conv_dims d;
    const pk_gemm_packed *wpk;      /* the packed weights of each group */
    int64_t tile_w, tiles;
    char *colbuf;
    size_t col_bytes, work_bytes;   /* per thread: columns, then the GEMM's workspace */
    void *out;
} fwd_job;

static void forward_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const fwd_job *j = user;
    char *cols = j->colbuf + (size_t)thread_index * (j->col_bytes + j->work_bytes), *work = cols + j->col_bytes;
    for (int64_t t = begin; t < end; t++) {
        if (j->g->dtype == LOOM_DTYPE_F64)
            forward_tile_f64(j->g, &j->d, j->wpk, j->tile_w, j->tiles, t, (double *)(void *)cols, j->out, work,
                             j->work_bytes);
        else
            forward_tile_f32(j->g, &j->d, j->wpk, j->tile_w, j->tiles, t, (float *)(void *)cols, j->out, work,
                             j->work_bytes);
    }
}

static int64_t thread_count(const loom_exec_ctx *ctx) { return ctx->n_threads > 0 ? ctx->n_threads : 1; }

/* g: f32 or f64 data; out: [n, cout, ho, wo] of that dtype. */
static loom_status forward_run(loom_exec_ctx *ctx, const deform_geom *g, void *out)
{
    fwd_job j = { .g = g, .d = dims_of(g), .out = out };
    size_t es = g->dtype == LOOM_DTYPE_F64 ? sizeof(double) : sizeof(float);
    int64_t panels = (j.d.hw + TILE_POS - 1) / TILE_POS, threads = thread_count(ctx);
    /* a tile's columns within ~192 KiB (L2), at least TILE_POS positions */
    int64_t tile_panels = (int64_t)((size_t)192 * 1024 / ((size_t)j.d.ktot * TILE_POS * es));
    tile_panels = tile_panels < 1 ? 1 : tile_panels > TILE_PANELS_MAX ? TILE_PANELS_MAX : tile_panels;
    if (tile_panels > panels)
        tile_panels = panels;
    j.tile_w = tile_panels * TILE_POS;
    j.tiles = (j.d.hw + j.tile_w - 1) / j.tile_w;
    j.col_bytes = ((size_t)j.tile_w * (size_t)j.d.ktot * es + 63) & ~(size_t)63;
    j.work_bytes = (deform_gemm_workspace(g->dtype, j.d.cout_g, j.tile_w, j.d.kg, 1) + 63) & ~(size_t)63;
    size_t wbytes = (deform_gemm_packed_bytes(g->dtype, j.d.cout_g, j.d.kg) + 63) & ~(size_t)63;
    char *wpack = pk_host->scratch(ctx, wbytes * (size_t)g->groups);
    pk_gemm_packed *wpk = pk_host->scratch(ctx, sizeof *wpk * (size_t)g->groups);
    j.colbuf = pk_host->scratch(ctx, (j.col_bytes + j.work_bytes) * (size_t)threads);
    if (wpack == NULL || wpk == NULL || j.colbuf == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for the columns of deform_conv2d (%zu bytes)",
                             wbytes * (size_t)g->groups + (j.col_bytes + j.work_bytes) * (size_t)threads);
    for (int64_t grp = 0; grp < g->groups; grp++)
        deform_gemm_pack_weights(&wpk[grp], wpack + (size_t)grp * wbytes, g->dtype,
                                 (const char *)g->weight + (size_t)(grp * j.d.cout_g * j.d.kg) * es, j.d.cout_g,
                                 j.d.kg);
    j.wpk = wpk;
    return pk_host->parallel_for(ctx, g->n * j.tiles, 1, forward_range, &j);
}

/* ------------------------------------------------------------ backward */

typedef struct bwd_job {
    const deform_geom *g;
    conv_dims d;
    int64_t chunks;
    char *bufs;                     /* per thread: cols, gcols, the GEMM's workspace */
    size_t buf_bytes, cols_bytes, work_bytes;
    char *gw_parts;                 /* per chunk: [cout, kg] */
    size_t gw_bytes;
    void *gin, *goff, *gmask;
} bwd_job;

static void backward_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const bwd_job *j = user;
    const deform_geom *g = j->g;
    char *cols = j->bufs + (size_t)thread_index * j->buf_bytes, *gcols = cols + j->cols_bytes;
    char *work = gcols + j->cols_bytes;
    for (int64_t ci = begin; ci < end; ci++) {
        int64_t i0 = g->n * ci / j->chunks, i1 = g->n * (ci + 1) / j->chunks;
        void *gw = j->gw_parts + (size_t)ci * j->gw_bytes;
        memset(gw, 0, j->gw_bytes);
        for (int64_t img = i0; img < i1; img++) {
            if (g->dtype == LOOM_DTYPE_F64)
                backward_image_f64(g, &j->d, img, (double *)(void *)cols, (double *)(void *)gcols, work,
                                   j->work_bytes, gw, j->gin, j->goff, j->gmask);
            else
                backward_image_f32(g, &j->d, img, (float *)(void *)cols, (float *)(void *)gcols, work,
                                   j->work_bytes, gw, j->gin, j->goff, j->gmask);
        }
    }
}

/* outs: grad_input, grad_weight, grad_offset, grad_mask (unused without a
** mask), grad_bias, all of g's dtype (f32 or f64). */
static loom_status backward_run(loom_exec_ctx *ctx, const deform_geom *g, void *const *outs)
{
    bwd_job j = { .g = g, .d = dims_of(g), .gin = outs[0], .goff = outs[2], .gmask = g->use_mask ? outs[3] : NULL };
    int f64 = g->dtype == LOOM_DTYPE_F64;
    size_t es = f64 ? sizeof(double) : sizeof(float);
    int64_t threads = thread_count(ctx), n_w = g->cout * j.d.kg;
    /* an empty gradient may have no data at all: nothing to clear */
    if (g->n * g->cin * j.d.in_hw > 0)
        memset(outs[0], 0, (size_t)(g->n * g->cin * j.d.in_hw) * es);
    if (n_w > 0)
        memset(outs[1], 0, (size_t)n_w * es);
    /* grad_bias = grad summed over N, Ho, Wo (in double) */
    for (int64_t o = 0; o < g->cout; o++) {
        double s = 0;
        for (int64_t img = 0; img < g->n; img++)
            for (int64_t p = 0; p < j.d.hw; p++) {
                int64_t i = (img * g->cout + o) * j.d.hw + p;
                s += pk_ld_any(g->dtype, g->grad, i);
            }
        if (f64)
            ((double *)outs[4])[o] = s;
        else
            ((float *)outs[4])[o] = (float)s;
    }
    if (g->n == 0)
        return LOOM_OK;
    j.chunks = g->n < BWD_CHUNKS_MAX ? g->n : BWD_CHUNKS_MAX;
    /* the two products: [kg x hw] = [kg x cout_g] [cout_g x hw], [cout_g x kg] = [cout_g x hw] [hw x kg] */
    size_t w1 = deform_gemm_workspace(g->dtype, j.d.kg, j.d.hw, j.d.cout_g, 0);
    size_t w2 = deform_gemm_workspace(g->dtype, j.d.cout_g, j.d.kg, j.d.hw, 0);
    j.cols_bytes = ((size_t)(j.d.ktot * j.d.hw) * es + 63) / 64 * 64;
    j.work_bytes = ((w1 > w2 ? w1 : w2) + 63) / 64 * 64;
    j.buf_bytes = 2 * j.cols_bytes + j.work_bytes;
    j.gw_bytes = ((size_t)n_w * es + 63) / 64 * 64;
    j.bufs = pk_host->scratch(ctx, j.buf_bytes * (size_t)threads);
    j.gw_parts = pk_host->scratch(ctx, j.gw_bytes * (size_t)j.chunks);
    if (j.bufs == NULL || j.gw_parts == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for the columns of deform_conv2d_backward (%zu bytes)",
                             j.buf_bytes * (size_t)threads + j.gw_bytes * (size_t)j.chunks);
    loom_status st = pk_host->parallel_for(ctx, j.chunks, 1, backward_range, &j);
    if (st != LOOM_OK)
        return st;
    for (int64_t ci = 0; ci < j.chunks; ci++) {
        const char *part = j.gw_parts + (size_t)ci * j.gw_bytes;
        for (int64_t i = 0; i < n_w; i++) {
            if (f64)
                ((double *)outs[1])[i] += ((const double *)part)[i];
            else
                ((float *)outs[1])[i] += ((const float *)part)[i];
        }
    }
    return LOOM_OK;
}

/* ------------------------------------------------------ f16 through f32 */

static const void *widen(loom_exec_ctx *ctx, const void *src, int64_t n, loom_status *st)
{
    if (src == NULL || *st != LOOM_OK)
        return NULL;
    float *dst = pk_host->scratch(ctx, (size_t)(n > 0 ? n : 1) * sizeof(float));
    if (dst == NULL) {
        *st = pk_host->fail(LOOM_ENOMEM, "no memory to widen an f16 tensor of %lld elements", (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = pk_ld_f16((const uint16_t *)src + i);
    return dst;
}

static void narrow(uint16_t *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        pk_st_f16(dst + i, src[i]);
}

/* An f32 copy of an f16 geometry. */
static loom_status widen_geom(loom_exec_ctx *ctx, const deform_geom *g, deform_geom *w)
{
    loom_status st = LOOM_OK;
    int64_t taps = g->kh * g->kw, hw = g->ho * g->wo;
    *w = *g;
    w->dtype = LOOM_DTYPE_F32;
    w->half_coords = 1;
    w->input = widen(ctx, g->input, g->n * g->cin * g->h * g->w, &st);
    w->offset = widen(ctx, g->offset, g->n * 2 * g->offset_groups * taps * hw, &st);
    w->weight = widen(ctx, g->weight, g->cout * (g->cin / g->groups) * taps, &st);
    w->bias = widen(ctx, g->bias, g->cout, &st);
    w->mask = widen(ctx, g->mask, g->n * g->offset_groups * taps * hw, &st);
    w->grad = widen(ctx, g->grad, g->n * g->cout * hw, &st);
    return st;
}

/* ------------------------------------------------------------ kernels */

loom_status deform_conv2d_cpu(loom_call *call)
{
    deform_geom g;
    loom_tensor *out;
    loom_status st = deform_conv_check(call, 0, &g);
    if (st == LOOM_OK)
        st = deform_conv_alloc(call, &g, 0, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (g.dtype != LOOM_DTYPE_F16)
        return forward_run(call->ctx, &g, loom_data(out));
    deform_geom w;
    int64_t n = loom_numel(out);
    float *tmp = pk_host->scratch(call->ctx, (size_t)n * sizeof(float));
    if ((st = widen_geom(call->ctx, &g, &w)) != LOOM_OK)
        return st;
    if (tmp == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for the f32 output of an f16 deform_conv2d");
    if ((st = forward_run(call->ctx, &w, tmp)) == LOOM_OK)
        narrow(loom_data(out), tmp, n);
    return st;
}

loom_status deform_conv2d_backward_cpu(loom_call *call)
{
    deform_geom g;
    loom_tensor *outs[5];
    loom_status st = deform_conv_check(call, 1, &g);
    if (st == LOOM_OK)
        st = deform_conv_alloc(call, &g, 1, outs);
    if (st != LOOM_OK)
        return st;
    void *ptrs[5];
    if (g.dtype != LOOM_DTYPE_F16) {
        for (int i = 0; i < 5; i++)
            ptrs[i] = loom_data(outs[i]);
        return backward_run(call->ctx, &g, ptrs);
    }
    deform_geom w;
    if ((st = widen_geom(call->ctx, &g, &w)) != LOOM_OK)
        return st;
    for (int i = 0; i < 5; i++) {
        ptrs[i] = pk_host->scratch(call->ctx, (size_t)(loom_numel(outs[i]) + 1) * sizeof(float));
        if (ptrs[i] == NULL)
            return pk_host->fail(LOOM_ENOMEM, "no memory for the f32 gradients of an f16 deform_conv2d");
    }
    if ((st = backward_run(call->ctx, &w, ptrs)) != LOOM_OK)
        return st;
    for (int i = 0; i < 5; i++)
        narrow(loom_data(outs[i]), ptrs[i], loom_numel(outs[i]));
    return LOOM_OK;
}
