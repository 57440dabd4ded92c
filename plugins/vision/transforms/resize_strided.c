/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resize_strided.c - vision.resize of an image that is not compact: above
** all a channels-last buffer (HWC memory, as decoders and torch's
** channels_last give it) seen as [..., C, H, W] through its strides.
**
** When the width changes (bilinear or bicubic), the horizontal pass reads
** the image through its strides: each task gathers a block of ROWS image
** rows of every plane into a small compact buffer of its thread (a few KB,
** in cache; a channels-last RGB block in one pass of the AVX2 deinterleave,
** plugins/common/deinterleave.h) and runs the compact row pass of resize_cpu.c / resize_avx2.c
** on it, writing the planar intermediate the vertical pass reads. So the
** image is read once and never copied whole, and the result has the
** compact path's bits (the same row passes on the same pixels). Every other
** case (nearest, the width kept, the size kept) first gathers the image
** into a compact scratch copy, which is what the core would have done.
*/
#include <string.h>

#include "deinterleave.h"
#include "transforms.h"

#define ROWS 4   /* image rows per task: the AVX2 horizontal pass takes four rows at once */

/* The view's element strides and each plane's element offset. */
typedef struct strided_image {
    const uint8_t *base;
    size_t esize;
    int64_t planes, h, w, sy, sx;
    const int64_t *poff;
    int rgb;            /* uint8, planes in threes that interleave (sx 3, planes 1 apart): channels-last RGB */
    int avx2;
} strided_image;

static loom_status describe(loom_exec_ctx *ctx, const loom_tensor *x, strided_image *im)
{
    int64_t stride[LOOM_MAX_NDIM], run = 1;
    for (int32_t d = x->ndim - 1; d >= 0; d--) {
        stride[d] = x->strides ? x->strides[d] : run;
        run *= x->shape[d];
    }
    im->base = loom_data(x);
    im->esize = pk_host->dtype_size(loom_tensor_dtype_of(x));
    im->h = x->shape[x->ndim - 2];
    im->w = x->shape[x->ndim - 1];
    im->sy = stride[x->ndim - 2];
    im->sx = stride[x->ndim - 1];
    im->planes = loom_numel(x) / (im->h * im->w);
    int64_t *poff = pk_host->scratch(ctx, (size_t)im->planes * sizeof(int64_t));
    if (!poff)
        return LOOM_ENOMEM;
    for (int64_t q = 0; q < im->planes; q++) {
        int64_t rest = q, off = 0;
        for (int32_t d = x->ndim - 3; d >= 0; d--) {
            off += (rest % x->shape[d]) * stride[d];
            rest /= x->shape[d];
        }
        poff[q] = off;
    }
    im->poff = poff;
    im->rgb = im->esize == 1 && im->sx == 3 && im->planes % 3 == 0;
    for (int64_t q = 0; im->rgb && q < im->planes; q += 3)
        im->rgb = poff[q + 1] == poff[q] + 1 && poff[q + 2] == poff[q] + 2;
    im->avx2 = transforms_have_avx2();
    return LOOM_OK;
}

/* Rows [y0, y0 + n) of the three planes q, q+1, q+2 of a channels-last RGB
** image into dst [3][n][w]: one pass over the interleaved bytes. */
static void gather_rgb_rows(const strided_image *im, int64_t q, int64_t y0, int64_t n, uint8_t *dst)
{
    const int64_t w = im->w;
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *s = im->base + im->poff[q] + (y0 + r) * im->sy;
        uint8_t *d0 = dst + r * w, *d1 = d0 + n * w, *d2 = d1 + n * w;
        int64_t x = im->avx2 ? pk_deinterleave3_u8_avx2(s, d0, d1, d2, w) : 0;
        for (; x < w; x++) {
            d0[x] = s[3 * x];
            d1[x] = s[3 * x + 1];
            d2[x] = s[3 * x + 2];
        }
    }
}

/* Rows [y0, y0 + n) of plane q into dst (compact, w elements a row). */
static void gather_rows(const strided_image *im, int64_t q, int64_t y0, int64_t n, void *dst)
{
    for (int64_t r = 0; r < n; r++) {
        const int64_t off = im->poff[q] + (y0 + r) * im->sy;
        if (im->esize == 1) {
            const uint8_t *s = im->base + off;
            uint8_t *d = (uint8_t *)dst + r * im->w;
            for (int64_t x = 0; x < im->w; x++)
                d[x] = s[x * im->sx];
        } else {   /* float32 */
            const float *s = (const float *)im->base + off;
            float *d = (float *)dst + r * im->w;
            for (int64_t x = 0; x < im->w; x++)
                d[x] = s[x * im->sx];
        }
    }
}

typedef struct hpass_job {
    const strided_image *im;
    resize_pass p;                  /* ax, dst (the planar intermediate), rows */
    void (*fn)(const resize_pass *p, int64_t r0, int64_t r1);
    uint8_t *bufs;                  /* one block buffer per thread */
    size_t buf_bytes;
    int32_t n_bufs;
    int64_t blocks;                 /* row blocks per plane */
} hpass_job;

/* Tasks run block-major, planes fastest, so the planes of one block of rows
** (the same cache lines in a channels-last buffer) are read together; a
** channels-last RGB image takes its three planes in one task. */
static void hpass_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const hpass_job *j = user;
    const strided_image *im = j->im;
    const int32_t t = thread_index >= 0 && thread_index < j->n_bufs ? thread_index : 0;
    uint8_t *buf = j->bufs + (size_t)t * j->buf_bytes;
    const int64_t group = im->rgb ? 3 : 1, groups = im->planes / group;
    for (int64_t task = begin; task < end; task++) {
        const int64_t q0 = (task % groups) * group, y0 = (task / groups) * ROWS;
        const int64_t n = im->h - y0 < ROWS ? im->h - y0 : ROWS;
        if (im->rgb)
            gather_rgb_rows(im, q0, y0, n, buf);
        else
            gather_rows(im, q0, y0, n, buf);
        for (int64_t k = 0; k < group; k++) {
            resize_pass p = j->p;
            p.src = buf + (size_t)(k * n * im->w) * im->esize;
            p.dst = (uint8_t *)j->p.dst + (size_t)(((q0 + k) * im->h + y0) * j->p.dst_row) * im->esize;
            j->fn(&p, 0, n);
        }
    }
}

typedef struct gather_job {
    const strided_image *im;
    void *dst;
} gather_job;

static void gather_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const gather_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const int64_t q = r / j->im->h, y = r % j->im->h;
        gather_rows(j->im, q, y, 1, (uint8_t *)j->dst + (size_t)(r * j->im->w) * j->im->esize);
    }
}

loom_status resize_strided(loom_call *call, const loom_tensor *x, void *dst, int64_t out_h, int64_t out_w,
                           resize_mode mode, int antialias)
{
    loom_exec_ctx *ctx = call->ctx;
    strided_image im;
    loom_status st = describe(ctx, x, &im);
    if (st != LOOM_OK)
        return st;
    const loom_dtype dt = loom_tensor_dtype_of(x);
    const int u8 = dt == LOOM_DTYPE_U8;
    if (mode <= RESIZE_NEAREST_EXACT || out_w == im.w || !(u8 || dt == LOOM_DTYPE_F32) ||
        (!u8 && mode == RESIZE_BILINEAR && !antialias)) {
        /* no horizontal pass to read through the strides (float32 bilinear
        ** without antialias is not separable): a compact copy */
        void *compact = pk_host->scratch(ctx, (size_t)loom_numel(x) * im.esize);
        if (!compact)
            return LOOM_ENOMEM;
        gather_job g = { &im, compact };
        if ((st = pk_host->parallel_for(ctx, im.planes * im.h, 16, gather_planes, &g)) != LOOM_OK)
            return st;
        return resize_planes(ctx, compact, dst, dt, im.planes, im.h, im.w, out_h, out_w, mode, antialias);
    }
    const int avx2 = transforms_have_avx2();
    resize_axis axw;
    if ((st = resize_axis_build(ctx, &axw, im.w, out_w, mode, antialias, u8)) != LOOM_OK)
        return st;
    const int need_v = out_h != im.h;
    void *tmp = dst;
    if (need_v && !(tmp = pk_host->scratch(ctx, (size_t)(im.planes * im.h) * (size_t)out_w * im.esize)))
        return LOOM_ENOMEM;
    hpass_job job = { &im, { &axw, NULL, tmp, im.w, out_w, 0, 0, 0 },
                      u8 ? (avx2 ? resize_h_u8_avx2 : resize_h_u8) : (avx2 ? resize_h_f32_avx2 : resize_h_f32),
                      NULL, 0, ctx->n_threads > 0 ? ctx->n_threads : 1, (im.h + ROWS - 1) / ROWS };
    /* 64-byte slack after each buffer: the AVX2 pass may load a vector past a row's last tap */
    job.buf_bytes = ((size_t)(3 * ROWS * im.w) * im.esize + 64 + 63) & ~(size_t)63;
    if (!(job.bufs = pk_host->scratch(ctx, job.buf_bytes * (size_t)job.n_bufs)))
        return LOOM_ENOMEM;
    const int64_t group = im.rgb ? 3 : 1;
    const int64_t work = group * ROWS * out_w * axw.ksize;   /* multiply-adds of one task */
    int64_t grain = work > 0 ? (INT64_C(1) << 15) / work : 1;
    if ((st = pk_host->parallel_for(ctx, job.blocks * (im.planes / group), grain < 1 ? 1 : grain, hpass_tasks,
                                    &job)) != LOOM_OK)
        return st;
    if (!need_v)
        return LOOM_OK;
    return resize_vertical(ctx, tmp, dst, u8, im.planes, im.h, out_h, out_w, mode, antialias);
}
