/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resize_cpu.c - the cpu kernels of vision.resize, vision.resize_mask and
** vision.resize_bounding_boxes, and the portable row passes.
**
** Bilinear and bicubic are separable, as in PyTorch: a horizontal pass over
** every input row (skipped when the width does not change), then a vertical
** pass (skipped when the height does not change). On uint8 both passes work
** in PyTorch's fixed point and the intermediate is rounded and clamped to
** uint8, as upsample_avx_bilinear_bicubic_uint8 does, so the result is
** bit-exact with torchvision on x86 CPUs with AVX2 (its native uint8 path)
** on every path here, AVX2 or not. Images are planar (CHW): every plane of
** every leading dim is resized the same way, so the passes see rows.
** Threads: each pass is split over rows on the core's pool. A strided
** image (a channels-last view) goes to resize_strided.c, which feeds these
** same passes.
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

/* ------------------------------------------------------ portable passes */

static uint8_t clamp_u8(int32_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

void resize_h_u8(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    const int32_t init = 1 << (ax->prec - 1);
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *src = (const uint8_t *)p->src + r * p->src_row;
        uint8_t *dst = (uint8_t *)p->dst + r * p->dst_row;
        for (int64_t x = 0; x < ax->out; x++) {
            const int16_t *w = ax->w16 + x * ax->ksize;
            const uint8_t *s = src + ax->xmin[x];
            int32_t acc = init;
            for (int32_t k = 0; k < ax->xsize[x]; k++)
                acc += (int32_t)w[k] * s[k];
            dst[x] = clamp_u8(acc >> ax->prec);
        }
    }
}

/* The vertical passes accumulate a strip of this many pixels at a time. */
#define STRIP 256

void resize_v_u8(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    const int32_t init = 1 << (ax->prec - 1);
    int32_t acc[STRIP];
    for (int64_t r = r0; r < r1; r++) {
        const int64_t plane = r / p->rows_per_plane, y = r % p->rows_per_plane;
        const uint8_t *src = (const uint8_t *)p->src + plane * p->src_plane + (int64_t)ax->xmin[y] * p->src_row;
        uint8_t *dst = (uint8_t *)p->dst + r * p->dst_row;
        const int16_t *w = ax->w16 + y * ax->ksize;
        for (int64_t x0 = 0; x0 < p->dst_row; x0 += STRIP) {
            const int64_t n = p->dst_row - x0 < STRIP ? p->dst_row - x0 : STRIP;
            for (int64_t x = 0; x < n; x++)
                acc[x] = init;
            for (int32_t k = 0; k < ax->xsize[y]; k++) {
                const uint8_t *s = src + k * p->src_row + x0;
                for (int64_t x = 0; x < n; x++)
                    acc[x] += (int32_t)w[k] * s[x];
            }
            for (int64_t x = 0; x < n; x++)
                dst[x0 + x] = clamp_u8(acc[x] >> ax->prec);
        }
    }
}

/* float32: PyTorch's kernels, each output a chain over its taps, torch's
** order bit for bit: antialias, resize_chain_f32 over the window, width
** then height; without (bicubic: PyTorch's upsample_generic, separable in
** its rounding, the height's sum over the width's), the unmerged taps as
** its `t0 * w0 + t1 * w1 + ...` contracts: the second product rounded, the
** first fused onto it, the others fused in turn (resize_plain_taps). */
void resize_h_f32(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    for (int64_t r = r0; r < r1; r++) {
        const float *src = (const float *)p->src + r * p->src_row;
        float *dst = (float *)p->dst + r * p->dst_row;
        for (int64_t x = 0; x < ax->out; x++) {
            if (ax->tap_idx) {
                const int32_t *ix = ax->tap_idx + x * ax->taps;
                dst[x] = resize_plain_taps(src, 1, ix, ax->tap_w + x * ax->taps, ax->taps);
            } else {
                dst[x] = resize_chain_f32(src + ax->xmin[x], 1, ax->wf + x * ax->ksize, ax->xsize[x]);
            }
        }
    }
}

void resize_v_f32(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t plane = r / p->rows_per_plane, y = r % p->rows_per_plane;
        const float *base = (const float *)p->src + plane * p->src_plane;
        float *dst = (float *)p->dst + r * p->dst_row;
        if (ax->tap_idx) {
            const int32_t *iy = ax->tap_idx + y * ax->taps;
            const float *w = ax->tap_w + y * ax->taps;
            for (int64_t x = 0; x < p->dst_row; x++)
                dst[x] = resize_plain_taps(base + x, p->src_row, iy, w, ax->taps);
        } else {
            const float *src = base + (int64_t)ax->xmin[y] * p->src_row, *w = ax->wf + y * ax->ksize;
            for (int64_t x = 0; x < p->dst_row; x++)
                dst[x] = resize_chain_f32(src + x, p->src_row, w, ax->xsize[y]);
        }
    }
}

/* ------------------------------------------------------------ threading */

typedef void (*pass_fn)(const resize_pass *p, int64_t r0, int64_t r1);
typedef struct pass_job {
    resize_pass p;
    pass_fn fn;
} pass_job;

static void pass_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pass_job *j = user;
    j->fn(&j->p, begin, end);
}

static loom_status run_pass(loom_exec_ctx *ctx, pass_job *job, int64_t rows, int64_t row_work)
{
    /* about 32K multiply-adds per chunk */
    int64_t grain = row_work > 0 ? (INT64_C(1) << 15) / row_work : rows;
    grain = grain < 1 ? 1 : grain;
    return pk_host->parallel_for(ctx, rows, grain, pass_range, job);
}

/* ------------------------------------------------------------- nearest */

typedef struct nearest_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t esize;
    int64_t in_h, in_w, out_h, out_w;
    const int64_t *iy, *ix;
} nearest_job;

static void nearest_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const nearest_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->out_h, y = r % j->out_h;
        const uint8_t *s = j->src + ((size_t)(plane * j->in_h + j->iy[y]) * (size_t)j->in_w) * j->esize;
        uint8_t *d = j->dst + (size_t)r * (size_t)j->out_w * j->esize;
        switch (j->esize) {
        case 1:
            for (int64_t x = 0; x < j->out_w; x++)
                d[x] = s[j->ix[x]];
            break;
        case 4:
            for (int64_t x = 0; x < j->out_w; x++)
                memcpy(d + 4 * x, s + 4 * j->ix[x], 4);
            break;
        default:
            for (int64_t x = 0; x < j->out_w; x++)
                memcpy(d + 8 * x, s + 8 * j->ix[x], 8);
            break;
        }
    }
}

static loom_status resize_nearest(loom_exec_ctx *ctx, const void *src, void *dst, size_t esize, int64_t planes,
                                  int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, int exact)
{
    int64_t *iy = pk_host->scratch(ctx, (size_t)(out_h + out_w) * sizeof(int64_t));
    if (!iy)
        return LOOM_ENOMEM;
    resize_nearest_index(in_h, out_h, exact, iy);
    resize_nearest_index(in_w, out_w, exact, iy + out_h);
    nearest_job job = { src, dst, esize, in_h, in_w, out_h, out_w, iy, iy + out_h };
    const int64_t grain = out_w >= 4096 ? 1 : 4096 / out_w;
    return pk_host->parallel_for(ctx, planes * out_h, grain, nearest_rows, &job);
}

/* ---------------------------------------------------------- separable */

loom_status resize_vertical(loom_exec_ctx *ctx, const void *src, void *dst, int u8, int64_t planes, int64_t in_h,
                            int64_t out_h, int64_t out_w, resize_mode mode, int antialias)
{
    const int avx2 = transforms_have_avx2();
    resize_axis axh;
    loom_status st = resize_axis_build(ctx, &axh, in_h, out_h, mode, antialias, u8);
    if (st != LOOM_OK)
        return st;
    pass_job job = { { &axh, src, dst, out_w, out_w, in_h * out_w, out_h * out_w, out_h },
                     u8 ? (avx2 ? resize_v_u8_avx2 : resize_v_u8) : (avx2 ? resize_v_f32_avx2 : resize_v_f32) };
    return run_pass(ctx, &job, planes * out_h, out_w * axh.ksize);
}

static loom_status resize_separable(loom_exec_ctx *ctx, const void *src, void *dst, int u8, int64_t planes,
                                    int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, resize_mode mode,
                                    int antialias)
{
    const int avx2 = transforms_have_avx2();
    const size_t esize = u8 ? 1 : sizeof(float);
    const int need_h = out_w != in_w, need_v = out_h != in_h;
    resize_axis axw;
    loom_status st;
    const void *vsrc = src;
    if (need_h) {
        if ((st = resize_axis_build(ctx, &axw, in_w, out_w, mode, antialias, u8)) != LOOM_OK)
            return st;
        void *tmp = dst;
        if (need_v && !(tmp = pk_host->scratch(ctx, (size_t)(planes * in_h) * (size_t)out_w * esize)))
            return LOOM_ENOMEM;
        pass_job job = { { &axw, src, tmp, in_w, out_w, 0, 0, 0 },
                         u8 ? (avx2 ? resize_h_u8_avx2 : resize_h_u8) : (avx2 ? resize_h_f32_avx2 : resize_h_f32) };
        if ((st = run_pass(ctx, &job, planes * in_h, out_w * axw.ksize)) != LOOM_OK)
            return st;
        vsrc = tmp;
    }
    return need_v ? resize_vertical(ctx, vsrc, dst, u8, planes, in_h, out_h, out_w, mode, antialias) : LOOM_OK;
}

/* ------------------------------------------- float32 bilinear, no antialias */

/* PyTorch's float32 bilinear without antialias is not separable in its
** rounding. Its channels-last kernel, which it runs on planar images when
** out_h + out_w <= 128 (or on one thread with 3 channels), takes the four
** products of the pixels with the weights h_a * w_b (float32), summed as
** its AVX2 build evaluates h0 w0 s00 + h0 w1 s01 + h1 w0 s10 + h1 w1 s11:
** the second product rounded, the first fused onto it, then the third and
** fourth fused in turn (measured on torch 2.15: every such output of the
** goldens, down, up and mixed scales). That is what loom computes at every
** size; above 128 torch's generic kernel rounds otherwise, an ulp or two
** away (within 1e-5). A kept dimension has weights (1, 0), as in PyTorch. */
typedef struct bilinear_job {
    const float *src;
    float *dst;
    int64_t in_h, in_w, out_h, out_w;
    const resize_axis *axh, *axw;
} bilinear_job;

__attribute__((always_inline)) static inline void bilinear_rows_body(const bilinear_job *j, int64_t begin,
                                                                     int64_t end)
{
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->out_h, y = r % j->out_h;
        const float *s0 = j->src + (plane * j->in_h + j->axh->tap_idx[2 * y]) * j->in_w;
        const float *s1 = j->src + (plane * j->in_h + j->axh->tap_idx[2 * y + 1]) * j->in_w;
        const float h0 = j->axh->tap_w[2 * y], h1 = j->axh->tap_w[2 * y + 1];
        float *d = j->dst + r * j->out_w;
        for (int64_t x = 0; x < j->out_w; x++) {
            const int32_t x0 = j->axw->tap_idx[2 * x], x1 = j->axw->tap_idx[2 * x + 1];
            const float w0 = j->axw->tap_w[2 * x], w1 = j->axw->tap_w[2 * x + 1];
            d[x] = fmaf(s1[x1], h1 * w1, fmaf(s1[x0], h1 * w0, fmaf(s0[x0], h0 * w0, s0[x1] * (h0 * w1))));
        }
    }
}

static void bilinear_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    bilinear_rows_body(user, begin, end);
}

/* the same bits with FMA instructions (fmaf is one rounding either way) */
__attribute__((target("avx2,fma"))) static void bilinear_rows_fma(void *user, int64_t begin, int64_t end,
                                                                   int32_t thread_index)
{
    (void)thread_index;
    bilinear_rows_body(user, begin, end);
}

static loom_status resize_bilinear_f32(loom_exec_ctx *ctx, const float *src, float *dst, int64_t planes,
                                       int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w)
{
    resize_axis axh, axw;
    loom_status st;
    if ((st = resize_axis_build(ctx, &axh, in_h, out_h, RESIZE_BILINEAR, 0, 0)) != LOOM_OK ||
        (st = resize_axis_build(ctx, &axw, in_w, out_w, RESIZE_BILINEAR, 0, 0)) != LOOM_OK)
        return st;
    bilinear_job j = { src, dst, in_h, in_w, out_h, out_w, &axh, &axw };
    const int64_t grain = out_w >= 8192 ? 1 : 8192 / out_w;
    return pk_host->parallel_for(ctx, planes * out_h, grain, transforms_have_avx2() ? bilinear_rows_fma : bilinear_rows,
                                 &j);
}

loom_status resize_planes(loom_exec_ctx *ctx, const void *src, void *dst, loom_dtype dtype, int64_t planes,
                          int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, resize_mode mode, int antialias)
{
    const size_t esize = pk_host->dtype_size(dtype);
    if (out_h == in_h && out_w == in_w) {   /* torchvision returns the image itself */
        memcpy(dst, src, (size_t)(planes * in_h * in_w) * esize);
        return LOOM_OK;
    }
    if (mode <= RESIZE_NEAREST_EXACT)
        return resize_nearest(ctx, src, dst, esize, planes, in_h, in_w, out_h, out_w, mode == RESIZE_NEAREST_EXACT);
    if (dtype == LOOM_DTYPE_F32 && mode == RESIZE_BILINEAR && !antialias)
        return resize_bilinear_f32(ctx, src, dst, planes, in_h, in_w, out_h, out_w);
    return resize_separable(ctx, src, dst, dtype == LOOM_DTYPE_U8, planes, in_h, in_w, out_h, out_w, mode,
                            antialias);
}

/* ------------------------------------------------------------- kernels */

/* The output of an image or mask resize: [..., out_h, out_w]. */
static loom_status alloc_resized(loom_call *call, const loom_tensor *x, int64_t out_h, int64_t out_w,
                                 loom_tensor **out)
{
    int64_t shape[LOOM_MAX_NDIM];
    for (int32_t d = 0; d < x->ndim; d++)
        shape[d] = x->shape[d];
    shape[x->ndim - 2] = out_h;
    shape[x->ndim - 1] = out_w;
    return pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, shape, out);
}

loom_status vision_resize_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    char b[160];
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    const int64_t in_h = x->shape[x->ndim - 2], in_w = x->shape[x->ndim - 1];
    int64_t out_h, out_w;
    loom_status st = resize_output_size(call, PK_ATTR(resize, size), PK_ATTR(resize, max_size), in_h, in_w, &out_h,
                                        &out_w);
    if (st != LOOM_OK)
        return st;
    const resize_mode mode = resize_mode_of(call->attrs[PK_ATTR(resize, interpolation)].u.s);
    /* torchvision: antialias only means something for bilinear and bicubic */
    const int antialias = mode >= RESIZE_BILINEAR && call->attrs[PK_ATTR(resize, antialias)].u.b;
    loom_tensor *out;
    if ((st = alloc_resized(call, x, out_h, out_w, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (in_h == 0 || in_w == 0)   /* torchvision: the reshape of the empty image raises */
        return pk_host->fail(LOOM_EINVAL, "'image' %s has no pixels to resize to %lld x %lld",
                             vision_describe(x, b, sizeof b), (long long)out_h, (long long)out_w);
    if (!loom_is_contiguous(x))   /* a channels-last view, a crop, ...: read through the strides */
        return resize_strided(call, x, loom_data(out), out_h, out_w, mode, antialias);
    return resize_planes(call->ctx, loom_data(x), loom_data(out), loom_tensor_dtype_of(x),
                         loom_numel(x) / (in_h * in_w), in_h, in_w, out_h, out_w, mode, antialias);
}

loom_status vision_resize_mask_cpu(loom_call *call)
{
    const loom_tensor *m = call->inputs[0];
    char b[160];
    if (m->ndim < 2)
        return pk_host->fail(LOOM_EINVAL, "'mask' %s must be [..., H, W] (rank >= 2)", vision_describe(m, b, sizeof b));
    const int64_t in_h = m->shape[m->ndim - 2], in_w = m->shape[m->ndim - 1];
    int64_t out_h, out_w;
    loom_status st = resize_output_size(call, PK_ATTR(resize_mask, size), PK_ATTR(resize_mask, max_size), in_h, in_w,
                                        &out_h, &out_w);
    if (st != LOOM_OK)
        return st;
    /* torchvision's resize_mask: any mode but nearest-exact means nearest */
    const int exact = resize_mode_of(call->attrs[PK_ATTR(resize_mask, interpolation)].u.s) == RESIZE_NEAREST_EXACT;
    loom_tensor *out;
    if ((st = alloc_resized(call, m, out_h, out_w, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (in_h == 0 || in_w == 0)
        return pk_host->fail(LOOM_EINVAL, "'mask' %s has no pixels to resize to %lld x %lld",
                             vision_describe(m, b, sizeof b), (long long)out_h, (long long)out_w);
    const size_t esize = pk_host->dtype_size(loom_tensor_dtype_of(m));
    if (out_h == in_h && out_w == in_w) {
        memcpy(loom_data(out), loom_data(m), (size_t)loom_numel(m) * esize);
        return LOOM_OK;
    }
    return resize_nearest(call->ctx, loom_data(m), loom_data(out), esize, loom_numel(m) / (in_h * in_w), in_h, in_w,
                          out_h, out_w, exact);
}

loom_status vision_resize_bounding_boxes_cpu(loom_call *call)
{
    const loom_tensor *bx = call->inputs[0];
    const loom_attr_value *canvas = &call->attrs[PK_ATTR(resize_boxes, canvas_size)];
    char b[160];
    if (bx->ndim < 1 || bx->shape[bx->ndim - 1] != 4)
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [..., 4]", vision_describe(bx, b, sizeof b));
    if (canvas->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'canvas_size' must be (H, W), not %lld values", (long long)canvas->count);
    const int64_t in_h = canvas->u.ints[0], in_w = canvas->u.ints[1];
    int64_t out_h, out_w;
    loom_status st = resize_output_size(call, PK_ATTR(resize_boxes, size), PK_ATTR(resize_boxes, max_size), in_h,
                                        in_w, &out_h, &out_w);
    if (st != LOOM_OK)
        return st;
    loom_tensor *out, *size_out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, bx->ndim, bx->shape, &out)) != LOOM_OK ||
        (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 }, &size_out)) != LOOM_OK)
        return st;
    int64_t *cs = loom_data(size_out);
    cs[0] = out_h;
    cs[1] = out_w;
    const int64_t n = loom_numel(bx);
    if (n == 0)
        return LOOM_OK;
    /* torchvision multiplies by torch.tensor([w_ratio, h_ratio, ...]):
    ** the ratios in double, rounded to float32, one float32 product */
    const float ratio[2] = { (float)((double)out_w / (double)in_w), (float)((double)out_h / (double)in_h) };
    const float *src = loom_data(bx);
    float *dst = loom_data(out);
    if (out_h == in_h && out_w == in_w) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return LOOM_OK;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = src[i] * ratio[i & 1];
    return LOOM_OK;
}
