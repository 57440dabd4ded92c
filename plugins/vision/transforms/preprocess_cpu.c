/* SPDX-License-Identifier: BSD-3-Clause */
/*
** preprocess_cpu.c - vision.preprocess on the cpu: torchvision's
** ImageClassification.forward fused into two passes that only compute the
** pixels the centre crop keeps.
**
** What it reproduces (torchvision/transforms/_presets.py, which calls the
** v1 functional API): F.resize on a uint8 tensor casts it to float32,
** interpolates in float32 (the separable antialiased kernel, horizontal then
** vertical, each output a sequential chain over its taps as PyTorch's AVX2
** build evaluates `t = x0 * w0; t += xj * wj`: see PREPROCESS_UNFUSED_TAPS
** in transforms.h), clamps bicubic to
** [0, 255], rounds half to even and casts back to uint8; F.center_crop
** zero-pads a crop larger than the image and anchors at
** int(round((h - c) / 2)); convert_image_dtype divides by 255; normalize is
** (x - mean) / std in float32. A float32 image skips the rounding and the
** division.
**
** Pass 1 resizes horizontally only the input rows that the kept output rows
** read and only the kept columns (planes x rows, float32, in scratch); pass
** 2 resizes vertically and finishes each output pixel. Both are threaded.
** The image is read through its strides: a decoder's HWC buffer seen as
** [C, H, W] (torchvision's decode_jpeg layout) needs no copy.
*/
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "transforms.h"

typedef struct pre_plan {
    const void *src;
    const int64_t *poff;          /* element offset of each plane (any strides) */
    int64_t sy, sx;               /* element strides of rows and columns */
    int64_t max_off;              /* the largest element offset of the view */
    int u8, bicubic;
    int64_t c, h, w, planes, crop;
    int64_t top, left;            /* crop origin in the resized image (may be < 0) */
    int64_t yr0, yr1, xr0, xr1;   /* kept resized rows / columns */
    int64_t in_r0, in_r1;         /* input rows pass 1 reads */
    int need_h, need_v;
    resize_axis axw, axh;
    float *tmp;                   /* [planes][in_r1 - in_r0][xr1 - xr0] */
    const float *mean, *std;      /* per channel */
    float *out;
    int avx2;
} pre_plan;

static inline float load_px(const pre_plan *p, int64_t off)
{
    return p->u8 ? (float)((const uint8_t *)p->src)[off] : ((const float *)p->src)[off];
}

/* ---------------------------------------------------------- pass 1 */

static void h_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pre_plan *p = user;
    const int64_t rows = p->in_r1 - p->in_r0, nx = p->xr1 - p->xr0;
    int64_t r = begin;
    while (r < end) {
        const int64_t plane = r / rows, y = p->in_r0 + r % rows;
        const int64_t base = p->poff[plane] + y * p->sy;   /* element offset of the row */
        float *dst = p->tmp + r * nx;
        /* eight rows of one plane at a time, when the gather's 4-byte reads
        ** of uint8 stay inside the tensor's memory */
        if (p->avx2 && p->need_h && r + 8 <= end && (r % rows) + 8 <= rows &&
            (!p->u8 || base + 7 * p->sy + (p->w - 1) * p->sx + 3 <= p->max_off)) {
            const size_t es = p->u8 ? 1 : 4;
            preprocess_h_avx2(p->axw.wf, p->axw.xmin, p->axw.xsize, p->axw.ksize, p->xr0, nx,
                              (const char *)p->src + (size_t)base * es, p->u8, p->sy, p->sx, dst, nx);
            r += 8;
            continue;
        }
        for (int64_t k = 0; k < nx; k++) {
            const int64_t x = p->xr0 + k;
            if (!p->need_h) {
                dst[k] = load_px(p, base + x * p->sx);
                continue;
            }
            const float *wt = p->axw.wf + x * p->axw.ksize;
            const int64_t x0 = p->axw.xmin[x];
            const int32_t taps = p->axw.xsize[x], unfused = PREPROCESS_UNFUSED_TAPS(taps);
            float t = load_px(p, base + x0 * p->sx) * wt[0];
            int32_t j = 1;
            for (; j <= unfused; j++)
                t = t + load_px(p, base + (x0 + j) * p->sx) * wt[j];   /* ISO C11: never contracted */
            for (; j < taps; j++)
                t = fmaf(load_px(p, base + (x0 + j) * p->sx), wt[j], t);
            dst[k] = t;
        }
        r++;
    }
}

/* ---------------------------------------------------------- pass 2 */

static inline float finish(const pre_plan *p, float v, int64_t ch)
{
    if (p->u8) {
        if (p->bicubic)
            v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
        v = rintf(v) / 255.0f;   /* torch.round (half to even), uint8, / 255 */
    }
    return (v - p->mean[ch]) / p->std[ch];
}

static void v_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pre_plan *p = user;
    const int64_t rows = p->in_r1 - p->in_r0, nx = p->xr1 - p->xr0;
    float line[4096];
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / p->crop, yo = r % p->crop, ch = plane % p->c;
        const int64_t yr = p->top + yo;
        float *out = p->out + r * p->crop;
        const float pad = finish(p, 0.0f, ch);
        if (yr < p->yr0 || yr >= p->yr1 || nx <= 0) {
            for (int64_t x = 0; x < p->crop; x++)
                out[x] = pad;
            continue;
        }
        const float *plane_tmp = p->tmp + plane * rows * nx;
        for (int64_t x = 0; x < p->crop; x++)
            out[x] = pad;
        float *kept = out + (p->xr0 - p->left);
        for (int64_t x0 = 0; x0 < nx; x0 += 4096) {
            const int64_t n = nx - x0 < 4096 ? nx - x0 : 4096;
            if (!p->need_v) {
                memcpy(line, plane_tmp + (yr - p->in_r0) * nx + x0, (size_t)n * sizeof(float));
            } else {
                const float *wt = p->axh.wf + yr * p->axh.ksize;
                const float *s = plane_tmp + (p->axh.xmin[yr] - p->in_r0) * nx + x0;
                if (p->avx2) {
                    preprocess_v_avx2(wt, p->axh.xsize[yr], s, nx, n, line);
                } else {
                    const int32_t taps = p->axh.xsize[yr], unfused = PREPROCESS_UNFUSED_TAPS(taps);
                    for (int64_t x = 0; x < n; x++) {
                        float t = s[x] * wt[0];
                        int32_t j = 1;
                        for (; j <= unfused; j++)
                            t = t + s[j * nx + x] * wt[j];
                        for (; j < taps; j++)
                            t = fmaf(s[j * nx + x], wt[j], t);
                        line[x] = t;
                    }
                }
            }
            for (int64_t x = 0; x < n; x++)
                kept[x0 + x] = finish(p, line[x], ch);
        }
    }
}

/* ------------------------------------------------------------- the op */

static const double imagenet_mean[3] = { 0.485, 0.456, 0.406 }, imagenet_std[3] = { 0.229, 0.224, 0.225 };

loom_status vision_preprocess_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *am = &call->attrs[PK_ATTR(preprocess, mean)], *as = &call->attrs[PK_ATTR(preprocess, std)];
    char b[160];
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    pre_plan p = { 0 };
    p.src = loom_data(x);
    p.u8 = loom_tensor_dtype_of(x) == LOOM_DTYPE_U8;
    p.bicubic = strcmp(call->attrs[PK_ATTR(preprocess, interpolation)].u.s, "bicubic") == 0;
    p.c = x->shape[x->ndim - 3];
    p.h = x->shape[x->ndim - 2];
    p.w = x->shape[x->ndim - 1];
    p.crop = call->attrs[PK_ATTR(preprocess, crop_size)].u.i;
    const int64_t rs = call->attrs[PK_ATTR(preprocess, resize_size)].u.i;
    if (p.crop > (INT64_C(1) << 20))
        return pk_host->fail(LOOM_EINVAL, "'crop_size' %lld is larger than 2^20", (long long)p.crop);
    const int64_t nm = am->is_set ? am->count : 3, ns = as->is_set ? as->count : 3;
    if ((nm != 1 && nm != p.c) || (ns != 1 && ns != p.c))
        return pk_host->fail(LOOM_EINVAL, "'mean' (%lld values) and 'std' (%lld) need one value or one per channel "
                                          "of 'image' %s",
                             (long long)nm, (long long)ns, vision_describe(x, b, sizeof b));
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[x->ndim - 2] = shape[x->ndim - 1] = p.crop;
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (p.h == 0 || p.w == 0)
        return pk_host->fail(LOOM_EINVAL, "'image' %s has no pixels", vision_describe(x, b, sizeof b));
    int64_t rh, rw;
    const loom_attr_value size = { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u = { .ints = &rs } };
    if ((st = resize_output_size_of(&size, NULL, p.h, p.w, &rh, &rw)) != LOOM_OK)
        return st;
    float *ms = pk_host->scratch(call->ctx, (size_t)(2 * p.c) * sizeof(float));
    if (!ms)
        return LOOM_ENOMEM;
    for (int64_t c = 0; c < p.c; c++) {
        ms[c] = (float)(am->is_set ? am->u.floats[nm == 1 ? 0 : c] : imagenet_mean[c % 3]);
        ms[p.c + c] = (float)(as->is_set ? as->u.floats[ns == 1 ? 0 : c] : imagenet_std[c % 3]);
        if (ms[p.c + c] == 0.0f)
            return pk_host->fail(LOOM_EINVAL, "'std' evaluated to zero, leading to division by zero");
    }
    p.mean = ms;
    p.std = ms + p.c;
    p.planes = loom_numel(x) / (p.h * p.w);
    p.out = loom_data(out);
    p.avx2 = transforms_have_avx2();
    /* the view's strides (compact when NULL): plane offsets over the leading
    ** dims, row and column strides; the gathers need them non-negative and
    ** their 8-row span in int32 */
    int64_t *poff = pk_host->scratch(call->ctx, (size_t)p.planes * sizeof(int64_t));
    if (!poff)
        return LOOM_ENOMEM;
    int64_t stride[LOOM_MAX_NDIM], run = 1;
    for (int32_t d = x->ndim - 1; d >= 0; d--) {
        stride[d] = x->strides ? x->strides[d] : run;
        run *= x->shape[d];
    }
    p.sy = stride[x->ndim - 2];
    p.sx = stride[x->ndim - 1];
    p.max_off = 0;
    int negative = 0;
    for (int32_t d = 0; d < x->ndim; d++) {
        p.max_off += (x->shape[d] - 1) * stride[d];
        negative |= stride[d] < 0;
    }
    for (int64_t q = 0; q < p.planes; q++) {
        int64_t rest = q, off = 0;
        for (int32_t d = x->ndim - 3; d >= 0; d--) {
            off += (rest % x->shape[d]) * stride[d];
            rest /= x->shape[d];
        }
        poff[q] = off;
    }
    p.poff = poff;
    const int64_t es = p.u8 ? 1 : 4;
    if (negative || 8 * p.sy * es > INT32_MAX || p.sx * es > INT32_MAX)
        p.avx2 = 0;
    center_crop_anchor(rh, rw, p.crop, p.crop, &p.top, &p.left);
    p.yr0 = p.top > 0 ? p.top : 0;
    p.yr1 = p.top + p.crop < rh ? p.top + p.crop : rh;
    p.xr0 = p.left > 0 ? p.left : 0;
    p.xr1 = p.left + p.crop < rw ? p.left + p.crop : rw;
    p.need_h = rw != p.w;
    p.need_v = rh != p.h;
    const resize_mode mode = p.bicubic ? RESIZE_BICUBIC : RESIZE_BILINEAR;
    const int aa = call->attrs[PK_ATTR(preprocess, antialias)].u.b;
    if (p.need_h && (st = resize_axis_build(call->ctx, &p.axw, p.w, rw, mode, aa, 0)) != LOOM_OK)
        return st;
    if (p.need_v && (st = resize_axis_build(call->ctx, &p.axh, p.h, rh, mode, aa, 0)) != LOOM_OK)
        return st;
    if (p.yr1 <= p.yr0 || p.xr1 <= p.xr0) {   /* nothing of the image is kept: all padding */
        p.in_r0 = p.in_r1 = 0;
        p.yr0 = p.yr1 = 0;
        return pk_host->parallel_for(call->ctx, p.planes * p.crop, 16, v_rows, &p);
    }
    if (p.need_v) {
        p.in_r0 = p.axh.xmin[p.yr0];
        p.in_r1 = p.in_r0;
        for (int64_t y = p.yr0; y < p.yr1; y++) {
            const int64_t e = (int64_t)p.axh.xmin[y] + p.axh.xsize[y];
            p.in_r1 = e > p.in_r1 ? e : p.in_r1;
            p.in_r0 = p.axh.xmin[y] < p.in_r0 ? p.axh.xmin[y] : p.in_r0;
        }
    } else {
        p.in_r0 = p.yr0;
        p.in_r1 = p.yr1;
    }
    const int64_t rows = p.in_r1 - p.in_r0, nx = p.xr1 - p.xr0;
    p.tmp = pk_host->scratch(call->ctx, (size_t)(p.planes * rows) * (size_t)nx * sizeof(float));
    if (!p.tmp)
        return LOOM_ENOMEM;
    if ((st = pk_host->parallel_for(call->ctx, p.planes * rows, 16, h_rows, &p)) != LOOM_OK)
        return st;
    return pk_host->parallel_for(call->ctx, p.planes * p.crop, 8, v_rows, &p);
}
