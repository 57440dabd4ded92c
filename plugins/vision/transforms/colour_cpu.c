/* SPDX-License-Identifier: BSD-3-Clause */
/*
** colour_cpu.c - the cpu kernels of the colour ops on uint8 and float32
** images [..., C, H, W].
**
** Each follows torchvision.transforms.v2.functional (_color.py, _misc.py)
** operation by operation in float32, as PyTorch evaluates those tensor
** expressions, so that the uint8 results, which truncate the float result
** (`.to(uint8)`), come out the same:
**   - uint8 * python float is a float32 product with the float rounded to
**     float32; `a.add_(b, alpha=k)` is one fused multiply-add (PyTorch's
**     vectorised add is fmadd(b, k, a)), so greyscale is
**     fma(b, 0.114, fma(g, 0.587, r * 0.2989)) and blends are
**     fma(img2, 1 - ratio, img1 * ratio);
**   - to_dtype(scale): uint8 -> float32 is x * float(1/255) (a product, not
**     a division); float32 -> uint8 is trunc(x * 255.999);
**   - adjust_hue is Pillow's HSV conversion in torchvision's order; equalize
**     is Pillow's lookup table on uint8 (float32 images go through uint8);
**   - adjust_gamma uses powf (PyTorch: Sleef's vectorised pow, 1 ulp), and
**     gaussian_blur a float32 convolution in another summation order: on
**     uint8 these two may differ by 1 where the float result sits on a
**     truncation (gamma) or rounding (blur) boundary.
** Values out of range are saturated when converted to uint8. Pixels run over
** the core's pool.
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

/* ------------------------------------------------------------- geometry */

typedef struct colour_img {
    int u8;
    int64_t c, h, w, hw, images;   /* images = numel / (c * hw) */
    const void *src;
    void *dst;
} colour_img;

static loom_status colour_begin(loom_call *call, int need_c13, colour_img *g, loom_dtype out_dtype, int64_t out_c,
                                loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    char b[160];
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    g->u8 = loom_tensor_dtype_of(x) == LOOM_DTYPE_U8;
    g->c = x->shape[x->ndim - 3];
    g->h = x->shape[x->ndim - 2];
    g->w = x->shape[x->ndim - 1];
    g->hw = g->h * g->w;
    if (need_c13 && g->c != 1 && g->c != 3)
        return pk_host->fail(LOOM_EINVAL, "'image' %s: permitted channel values are 1 or 3, not %lld",
                             vision_describe(x, b, sizeof b), (long long)g->c);
    g->images = g->c * g->hw > 0 ? loom_numel(x) / (g->c * g->hw) : 0;
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (out_c > 0)
        shape[x->ndim - 3] = out_c;
    loom_status st = pk_host->alloc_output(call, 0, out_dtype ? out_dtype : loom_tensor_dtype_of(x), x->ndim, shape,
                                           out);
    if (st != LOOM_OK)
        return st;
    g->src = loom_data(x);
    g->dst = loom_data(*out);
    return LOOM_OK;
}

static inline float load(const colour_img *g, int64_t i)
{
    return g->u8 ? (float)((const uint8_t *)g->src)[i] : ((const float *)g->src)[i];
}

/* float -> uint8 as .to(uint8) after a clamp: truncation, saturated (NaN: 0) */
static inline uint8_t to_u8(float v) { return (uint8_t)(!(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (int)v); }

static inline void store(const colour_img *g, int64_t i, float v)
{
    if (g->u8)
        ((uint8_t *)g->dst)[i] = to_u8(v);
    else
        ((float *)g->dst)[i] = v;
}

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

static void copy_image(const colour_img *g, const loom_tensor *x)
{
    if (loom_numel(x) > 0)
        memcpy(g->dst, g->src, (size_t)loom_numel(x) * (g->u8 ? 1 : 4));
}

/* --------------------------------------------------- pixel-parallel jobs */

typedef struct pixel_job pixel_job;
typedef void (*pixel_fn)(const pixel_job *j, int64_t image, int64_t q);
struct pixel_job {
    colour_img g;
    pixel_fn fn;
    float a, b, c2;              /* the op's constants */
    const float *per_image;      /* the op's per-image (or per-plane) values */
    const uint8_t *lut;          /* equalize: 256 per plane */
    int avx2;                    /* sharpness: the AVX2 row */
};

static void pixel_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pixel_job *j = user;
    for (int64_t p = begin; p < end; p++)
        j->fn(j, p / j->g.hw, p % j->g.hw);
}

static loom_status run_pixels(loom_call *call, pixel_job *j)
{
    const int64_t n = j->g.images * j->g.hw;
    if (n == 0)
        return LOOM_OK;
    return pk_host->parallel_for(call->ctx, n, 16384, pixel_range, j);
}

#define AT(j, image, ch, q) (((image) * (j)->g.c + (ch)) * (j)->g.hw + (q))

/* torchvision's greyscale as float32: fma(b, .114, fma(g, .587, r * .2989)) */
static inline float grey_of(float r, float g, float b) { return fmaf(b, 0.114f, fmaf(g, 0.587f, r * 0.2989f)); }

static inline float blend(float x1, float x2, float ratio, float one_minus, float bound)
{
    return clampf(fmaf(x2, one_minus, x1 * ratio), 0.0f, bound);
}

/* --------------------------------------------------------- brightness */

static void brightness_px(const pixel_job *j, int64_t im, int64_t q)
{
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        store(&j->g, i, clampf(load(&j->g, i) * j->a, 0.0f, j->b));
    }
}

loom_status vision_adjust_brightness_cpu(loom_call *call)
{
    pixel_job j = { .fn = brightness_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    j.a = (float)call->attrs[PK_ATTR(brightness, brightness_factor)].u.f;
    j.b = j.g.u8 ? 255.0f : 1.0f;
    return run_pixels(call, &j);
}

/* ----------------------------------------------------------- sharpness */

/* adjust_sharpness_image: the 3x3 blur (1/13 around, 5/13 in the middle,
** float32; uint8 rounded half to even) inside the border, blended as
** view.add_(blurred - view, alpha=1 - factor), one fused multiply-add;
** the border keeps the image. Output i of the interior (colour_avx2.c does
** eight at once with the same operations in the same order): */
static inline float sharpness_at(const pixel_job *j, int64_t i)
{
    const int64_t w = j->g.w;
    const float v = load(&j->g, i);
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += load(&j->g, i + dy * w + dx) * (dy == 0 && dx == 0 ? j->b : j->a);
    if (j->g.u8)
        sum = rintf(sum);
    return clampf(fmaf(sum - v, j->c2, v), 0.0f, j->g.u8 ? 255.0f : 1.0f);
}

/* rows [begin, end) of the planes (image * C + channel) * H + y */
static void sharpness_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pixel_job *j = user;
    const int64_t h = j->g.h, w = j->g.w;
    const size_t es = j->g.u8 ? 1 : 4;
    for (int64_t r = begin; r < end; r++) {
        const int64_t y = r % h, row = r * w;
        if (y == 0 || y == h - 1) {
            memcpy((uint8_t *)j->g.dst + (size_t)row * es, (const uint8_t *)j->g.src + (size_t)row * es, (size_t)w * es);
            continue;
        }
        store(&j->g, row, load(&j->g, row));
        store(&j->g, row + w - 1, load(&j->g, row + w - 1));
        int64_t x = 1;
        if (j->avx2) {
            const uint8_t *s = (const uint8_t *)j->g.src + (size_t)row * es;
            x = sharpness_row_avx2(j->g.u8, s - (size_t)w * es, s, s + (size_t)w * es,
                                   (uint8_t *)j->g.dst + (size_t)row * es, w, j->a, j->b, j->c2);
        }
        for (; x < w - 1; x++)
            store(&j->g, row + x, sharpness_at(j, row + x));
    }
}

loom_status vision_adjust_sharpness_cpu(loom_call *call)
{
    pixel_job j = { 0 };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    if (j.g.h <= 2 || j.g.w <= 2) {   /* torchvision returns the image */
        copy_image(&j.g, call->inputs[0]);
        return LOOM_OK;
    }
    j.a = (float)(1.0 / 13.0);
    j.b = (float)(5.0 / 13.0);
    j.c2 = (float)(1.0 - call->attrs[PK_ATTR(sharpness, sharpness_factor)].u.f);
    j.avx2 = transforms_have_avx2();
    const int64_t rows = j.g.images * j.g.c * j.g.h;
    if (rows == 0)
        return LOOM_OK;
    /* a grain of about 16K pixels, as the pixel jobs */
    const int64_t grain = j.g.w >= 16384 ? 1 : 16384 / j.g.w;
    return pk_host->parallel_for(call->ctx, rows, grain, sharpness_rows, &j);
}

/* -------------------------------------------------- saturation, contrast */

/* img2 of pixel q: the floored (uint8) greyscale, or the image's mean */
static void blend_px(const pixel_job *j, int64_t im, int64_t q)
{
    float other;
    if (j->per_image) {
        other = j->per_image[im];
    } else {
        other = grey_of(load(&j->g, AT(j, im, 0, q)), load(&j->g, AT(j, im, 1, q)), load(&j->g, AT(j, im, 2, q)));
        if (j->g.u8)
            other = floorf(other);
    }
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        store(&j->g, i, blend(load(&j->g, i), other, j->a, j->c2, j->b));
    }
}

loom_status vision_adjust_saturation_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    pixel_job j = { .fn = blend_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    if (j.g.c == 1) {   /* torchvision: as PIL, a grey image is returned as is */
        copy_image(&j.g, x);
        return LOOM_OK;
    }
    const double f = call->attrs[PK_ATTR(saturation, saturation_factor)].u.f;
    j.a = (float)f;
    j.c2 = (float)(1.0 - f);
    j.b = j.g.u8 ? 255.0f : 1.0f;
    return run_pixels(call, &j);
}

loom_status vision_adjust_contrast_cpu(loom_call *call)
{
    pixel_job j = { .fn = blend_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK || j.g.images == 0)
        return st;
    float *mean = pk_host->scratch(call->ctx, (size_t)j.g.images * sizeof(float));
    if (!mean)
        return LOOM_ENOMEM;
    /* the mean of the (floored) greyscale over H, W: a float32 sum divided by
    ** the count (summed in double here: exact for uint8 images up to 2^24 / 255
    ** pixels, as PyTorch's float32 sum is) */
    for (int64_t im = 0; im < j.g.images; im++) {
        double sum = 0.0;
        for (int64_t q = 0; q < j.g.hw; q++) {
            float v;
            if (j.g.c == 3) {
                v = grey_of(load(&j.g, AT(&j, im, 0, q)), load(&j.g, AT(&j, im, 1, q)), load(&j.g, AT(&j, im, 2, q)));
                if (j.g.u8)
                    v = floorf(v);
            } else {
                v = load(&j.g, AT(&j, im, 0, q));
            }
            sum += v;
        }
        mean[im] = (float)sum / (float)j.g.hw;
    }
    const double f = call->attrs[PK_ATTR(contrast, contrast_factor)].u.f;
    j.a = (float)f;
    j.c2 = (float)(1.0 - f);
    j.b = j.g.u8 ? 255.0f : 1.0f;
    j.per_image = mean;
    return run_pixels(call, &j);
}

/* ------------------------------------------------------------------ hue */

static void hue_px(const pixel_job *j, int64_t im, int64_t q)
{
    const float k = j->g.u8 ? (float)(1.0 / 255.0) : 1.0f;
    const int64_t ir = AT(j, im, 0, q), ig = AT(j, im, 1, q), ib = AT(j, im, 2, q);
    const float r = j->g.u8 ? load(&j->g, ir) * k : load(&j->g, ir);
    const float g = j->g.u8 ? load(&j->g, ig) * k : load(&j->g, ig);
    const float b = j->g.u8 ? load(&j->g, ib) * k : load(&j->g, ib);
    /* _rgb_to_hsv */
    const float maxc = fmaxf(fmaxf(r, g), b), minc = fminf(fminf(r, g), b);
    const int eqc = maxc == minc;
    const float range = maxc - minc;
    const float s = range / (eqc ? 1.0f : maxc);
    const float div = eqc ? 1.0f : range;
    const float rc = (maxc - r) / div, gc = (maxc - g) / div, bc = (maxc - b) / div;
    const int neq_r = maxc != r, eq_g = maxc == g;
    const float hg = ((rc + 2.0f) - bc) * (float)(eq_g && neq_r);
    const float hr = (bc - gc) * (float)(!neq_r);
    const float hb = ((gc + 4.0f) - rc) * (float)(neq_r && !eq_g);
    float h = fmodf((hr + hg + hb) * (float)(1.0 / 6.0) + 1.0f, 1.0f);
    /* h.add_(hue_factor).remainder_(1.0) */
    h = fmodf(h + j->a, 1.0f);
    if (h < 0)
        h += 1.0f;
    /* _hsv_to_rgb */
    const float v = maxc;
    const float h6 = h * 6.0f, fi = floorf(h6), f = h6 - fi;
    int i = isfinite(fi) ? (int)fmodf(fi, 6.0f) : 0;   /* NaN pixels: no float-to-int overflow */
    i = i < 0 ? i + 6 : i;
    const float sxf = s * f, oms = 1.0f - s;
    const float qv = clampf((1.0f - sxf) * v, 0.0f, 1.0f);
    const float tv = clampf((sxf + oms) * v, 0.0f, 1.0f);
    const float pv = clampf(oms * v, 0.0f, 1.0f);
    const float vpqt[4] = { v, pv, qv, tv };
    static const int sel[3][6] = { { 0, 2, 1, 1, 3, 0 }, { 3, 0, 0, 2, 1, 1 }, { 1, 1, 3, 0, 0, 2 } };
    const int64_t idx[3] = { ir, ig, ib };
    for (int ch = 0; ch < 3; ch++) {
        const float o = vpqt[sel[ch][i]];
        if (j->g.u8)
            ((uint8_t *)j->g.dst)[idx[ch]] = to_u8(o * 255.999f);
        else
            ((float *)j->g.dst)[idx[ch]] = o;
    }
}

loom_status vision_adjust_hue_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const double f = call->attrs[PK_ATTR(hue, hue_factor)].u.f;
    if (!(f >= -0.5 && f <= 0.5))
        return pk_host->fail(LOOM_EINVAL, "'hue_factor' (%g) is not in [-0.5, 0.5]", f);
    pixel_job j = { .fn = hue_px, .a = (float)f };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    if (j.g.c == 1) {
        copy_image(&j.g, x);
        return LOOM_OK;
    }
    return run_pixels(call, &j);
}

/* ---------------------------------------------------------------- gamma */

static inline float pow_torch(float x, float e)
{
    /* PyTorch's pow with a scalar exponent special-cases these */
    if (e == 1.0f)
        return x;
    if (e == 2.0f)
        return x * x;
    if (e == 3.0f)
        return x * x * x;
    if (e == 0.5f)
        return sqrtf(x);
    return powf(x, e);
}

static void gamma_px(const pixel_job *j, int64_t im, int64_t q)
{
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        float v = j->g.u8 ? load(&j->g, i) * (float)(1.0 / 255.0) : load(&j->g, i);
        v = pow_torch(v, j->a);
        if (j->b != 1.0f)
            v = clampf(v * j->b, 0.0f, 1.0f);
        store(&j->g, i, j->g.u8 ? v * 255.999f : v);
    }
}

loom_status vision_adjust_gamma_cpu(loom_call *call)
{
    pixel_job j = { .fn = gamma_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    j.a = (float)call->attrs[PK_ATTR(gamma, gamma)].u.f;
    j.b = (float)call->attrs[PK_ATTR(gamma, gain)].u.f;
    return run_pixels(call, &j);
}

/* ---------------------------------------- posterize, solarize, invert */

/* planes [begin, end): one plain loop each (vectorised by the compiler) */
static void posterize_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pixel_job *j = user;
    const int64_t hw = j->g.hw;
    for (int64_t p = begin; p < end; p++) {
        if (j->g.u8) {
            const uint8_t *s = (const uint8_t *)j->g.src + p * hw, mask = (uint8_t)j->a;
            uint8_t *d = (uint8_t *)j->g.dst + p * hw;
            for (int64_t i = 0; i < hw; i++)
                d[i] = (uint8_t)(s[i] & mask);
        } else {
            const float *s = (const float *)j->g.src + p * hw;
            float *d = (float *)j->g.dst + p * hw;
            for (int64_t i = 0; i < hw; i++)
                d[i] = clampf(floorf(s[i] * j->b), 0.0f, j->b - 1.0f) * j->c2;
        }
    }
}

/* the image's planes over the pool, about 16K pixels a task */
static loom_status run_planes(loom_call *call, pixel_job *j, void (*fn)(void *, int64_t, int64_t, int32_t))
{
    const int64_t planes = j->g.images * j->g.c;
    if (planes == 0 || j->g.hw == 0)
        return LOOM_OK;
    return pk_host->parallel_for(call->ctx, planes, j->g.hw >= 16384 ? 1 : 16384 / j->g.hw, fn, j);
}

loom_status vision_posterize_cpu(loom_call *call)
{
    const int64_t bits = call->attrs[PK_ATTR(posterize, bits)].u.i;
    if (bits > 8)
        return pk_host->fail(LOOM_EINVAL, "'bits' must be in [0, 8], not %lld", (long long)bits);
    pixel_job j = { 0 };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    j.a = (float)(bits >= 8 ? 255 : ((1 << bits) - 1) << (8 - bits));
    j.b = (float)(1 << bits);
    j.c2 = (float)(1.0 / (double)(1 << bits));
    return run_planes(call, &j, posterize_planes);
}

static inline float inverted(const colour_img *g, float v) { return g->u8 ? 255.0f - v : 1.0f - v; }

static void invert_px(const pixel_job *j, int64_t im, int64_t q)
{
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        const float v = load(&j->g, i);
        /* solarize: where(image >= threshold, invert, image), compared in float32 */
        store(&j->g, i, v >= j->a ? inverted(&j->g, v) : v);
    }
}

loom_status vision_solarize_cpu(loom_call *call)
{
    pixel_job j = { .fn = invert_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    const double t = call->attrs[PK_ATTR(solarize, threshold)].u.f;
    if (t > (j.g.u8 ? 255.0 : 1.0))
        return pk_host->fail(LOOM_EINVAL, "'threshold' %g must be <= the maximum value of the dtype (%g)", t,
                             j.g.u8 ? 255.0 : 1.0);
    j.a = (float)t;
    return run_pixels(call, &j);
}

loom_status vision_invert_cpu(loom_call *call)
{
    pixel_job j = { .fn = invert_px, .a = -INFINITY };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    return run_pixels(call, &j);
}

/* -------------------------------------------------------- autocontrast */

/* Each plane in one task: its min and max (uint8 compared as bytes, the
** same order as their float32 values), then (v - min) / inv_scale clamped,
** with inv_scale = (max - min) * (1 / bound); a flat channel: min 0, scale 1. */
static void autocontrast_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pixel_job *j = user;
    const int64_t hw = j->g.hw;
    for (int64_t p = begin; p < end; p++) {
        float mn, mx;
        if (j->g.u8) {
            const uint8_t *s = (const uint8_t *)j->g.src + p * hw;
            uint8_t lo = 255, hi = 0;
            for (int64_t i = 0; i < hw; i++) {
                lo = s[i] < lo ? s[i] : lo;
                hi = s[i] > hi ? s[i] : hi;
            }
            mn = (float)lo;
            mx = (float)hi;
        } else {
            const float *s = (const float *)j->g.src + p * hw;
            mn = INFINITY;
            mx = -INFINITY;
            for (int64_t i = 0; i < hw; i++) {
                mn = s[i] < mn ? s[i] : mn;
                mx = s[i] > mx ? s[i] : mx;
            }
        }
        const float lo = mx == mn ? 0.0f : mn, inv = mx == mn ? 1.0f : (mx - mn) * (float)(1.0 / (double)j->b);
        if (j->g.u8) {
            const uint8_t *s = (const uint8_t *)j->g.src + p * hw;
            uint8_t *d = (uint8_t *)j->g.dst + p * hw;
            for (int64_t i = 0; i < hw; i++)
                d[i] = to_u8(clampf(((float)s[i] - lo) / inv, 0.0f, j->b));
        } else {
            const float *s = (const float *)j->g.src + p * hw;
            float *d = (float *)j->g.dst + p * hw;
            for (int64_t i = 0; i < hw; i++)
                d[i] = clampf((s[i] - lo) / inv, 0.0f, j->b);
        }
    }
}

loom_status vision_autocontrast_cpu(loom_call *call)
{
    pixel_job j = { 0 };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, 0, &out);
    if (st != LOOM_OK || j.g.images == 0)
        return st;
    j.b = j.g.u8 ? 255.0f : 1.0f;
    return run_planes(call, &j, autocontrast_planes);
}

/* ------------------------------------------------------------ equalize */

static inline uint8_t f32_to_u8_scaled(float v) { return to_u8(v * 255.999f); }

static void equalize_px(const pixel_job *j, int64_t im, int64_t q)
{
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        const uint8_t *lut = j->lut + 256 * (im * j->g.c + ch);
        const uint8_t v = j->g.u8 ? ((const uint8_t *)j->g.src)[i] : f32_to_u8_scaled(((const float *)j->g.src)[i]);
        if (j->g.u8)
            ((uint8_t *)j->g.dst)[i] = lut[v];
        else
            ((float *)j->g.dst)[i] = (float)lut[v] * (float)(1.0 / 255.0);
    }
}

loom_status vision_equalize_cpu(loom_call *call)
{
    pixel_job j = { .fn = equalize_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK || j.g.images == 0)
        return st;
    const int64_t planes = j.g.images * j.g.c;
    uint8_t *lut = pk_host->scratch(call->ctx, (size_t)planes * 256);
    if (!lut)
        return LOOM_ENOMEM;
    for (int64_t p = 0; p < planes; p++) {
        int64_t hist[256] = { 0 }, cum[256];
        for (int64_t q = 0; q < j.g.hw; q++) {
            const int64_t i = p * j.g.hw + q;
            hist[j.g.u8 ? ((const uint8_t *)j.g.src)[i] : f32_to_u8_scaled(((const float *)j.g.src)[i])]++;
        }
        int64_t run = 0, top = 0;
        for (int k = 0; k < 256; k++) {
            run += hist[k];
            cum[k] = run;
        }
        for (int k = 0; k < 256; k++)   /* argmax of the cumulative histogram: its first maximum */
            if (cum[k] == run) {
                top = k;
                break;
            }
        const int64_t step = (j.g.hw - hist[top]) / 255;
        uint8_t *l = lut + 256 * p;
        for (int k = 0; k < 256; k++)
            l[k] = (uint8_t)k;   /* step 0: the image as it is */
        if (step != 0) {
            l[0] = 0;
            for (int k = 0; k < 255; k++) {
                const int64_t v = (cum[k] + step / 2) / step;
                l[k + 1] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    j.lut = lut;
    return run_pixels(call, &j);
}

/* ------------------------------------------------------- gaussian_blur */

/* torch.linspace(-lim, lim, k) in float32, then softmax(-(x / sigma)^2). */
static void gaussian_kernel(int64_t k, float sigma, float *out)
{
    const float lim = (float)((double)(k - 1) / (2.0 * sqrt(2.0)));
    const float start = -lim, end = lim;
    const float step = k > 1 ? (end - start) / (float)(k - 1) : 0.0f;
    const int64_t half = k / 2;
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t i = 0; i < k; i++) {
        const float x = i < half ? start + step * (float)i : end - step * (float)(k - i - 1);
        const float t = x / sigma;
        out[i] = -(t * t);
        mx = out[i] > mx ? out[i] : mx;
    }
    for (int64_t i = 0; i < k; i++) {
        out[i] = expf(out[i] - mx);
        sum += out[i];
    }
    for (int64_t i = 0; i < k; i++)
        out[i] /= sum;
}

typedef struct blur_job {
    colour_img g;
    int64_t kx, ky;
    const float *k2;      /* [ky][kx]: ky[i] * kx[j] */
    const int64_t *ix;    /* reflect-padded column of x + j - kx/2: [w + kx - 1] */
    const int64_t *iy;
} blur_job;

static void blur_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const blur_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->g.h, y = r % j->g.h, base = plane * j->g.hw;
        for (int64_t x = 0; x < j->g.w; x++) {
            float acc = 0.0f;
            for (int64_t a = 0; a < j->ky; a++) {
                const int64_t row = base + j->iy[y + a] * j->g.w;
                for (int64_t b = 0; b < j->kx; b++)
                    acc += j->k2[a * j->kx + b] * load(&j->g, row + j->ix[x + b]);
            }
            const int64_t o = base + y * j->g.w + x;
            if (j->g.u8)
                ((uint8_t *)j->g.dst)[o] = to_u8(rintf(acc));   /* round_(): half to even */
            else
                ((float *)j->g.dst)[o] = acc;
        }
    }
}

static void reflect_index(int64_t *m, int64_t n, int64_t pad)
{
    for (int64_t i = 0; i < n + 2 * pad; i++) {
        int64_t v = i - pad;
        v = v < 0 ? -v : v >= n ? 2 * (n - 1) - v : v;
        m[i] = v;
    }
}

loom_status vision_gaussian_blur_cpu(loom_call *call)
{
    const loom_attr_value *ks = &call->attrs[PK_ATTR(blur, kernel_size)], *sg = &call->attrs[PK_ATTR(blur, sigma)];
    if (ks->count != 1 && ks->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'kernel_size' must be [k] or [kx, ky], not %lld values",
                             (long long)ks->count);
    const int64_t kx = ks->u.ints[0], ky = ks->u.ints[ks->count - 1];
    if (kx % 2 == 0 || ky % 2 == 0 || kx > 1023 || ky > 1023)
        return pk_host->fail(LOOM_EINVAL, "'kernel_size' must be odd (and < 1024), not [%lld, %lld]", (long long)kx,
                             (long long)ky);
    if (sg->is_set && sg->count != 1 && sg->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'sigma' must be [s] or [sx, sy], not %lld values", (long long)sg->count);
    const double sx = sg->is_set ? sg->u.floats[0] : (double)kx * 0.15 + 0.35;
    const double sy = sg->is_set ? sg->u.floats[sg->count - 1] : (double)ky * 0.15 + 0.35;
    blur_job j = { .kx = kx, .ky = ky };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (kx / 2 >= j.g.w || ky / 2 >= j.g.h) {
        char b[160];
        return pk_host->fail(LOOM_EINVAL, "'kernel_size' [%lld, %lld]: the reflect padding must be smaller than "
                                          "'image' %s",
                             (long long)kx, (long long)ky, vision_describe(call->inputs[0], b, sizeof b));
    }
    float *k1x = pk_host->scratch(call->ctx, (size_t)(kx + ky + kx * ky) * sizeof(float));
    int64_t *ix = pk_host->scratch(call->ctx, (size_t)(j.g.w + kx + j.g.h + ky) * sizeof(int64_t));
    if (!k1x || !ix)
        return LOOM_ENOMEM;
    float *k1y = k1x + kx, *k2 = k1y + ky;
    gaussian_kernel(kx, (float)sx, k1x);
    gaussian_kernel(ky, (float)sy, k1y);
    for (int64_t a = 0; a < ky; a++)
        for (int64_t b = 0; b < kx; b++)
            k2[a * kx + b] = k1y[a] * k1x[b];
    reflect_index(ix, j.g.w, kx / 2);
    reflect_index(ix + j.g.w + kx, j.g.h, ky / 2);
    j.k2 = k2;
    j.ix = ix;
    j.iy = ix + j.g.w + kx;
    return pk_host->parallel_for(call->ctx, j.g.images * j.g.c * j.g.h, 8, blur_rows, &j);
}

/* ------------------------------------------- normalize, to_dtype, grey */

static void normalize_px(const pixel_job *j, int64_t im, int64_t q)
{
    for (int64_t ch = 0; ch < j->g.c; ch++) {
        const int64_t i = AT(j, im, ch, q);
        ((float *)j->g.dst)[i] = (((const float *)j->g.src)[i] - j->per_image[ch]) / j->per_image[j->g.c + ch];
    }
}

loom_status vision_normalize_cpu(loom_call *call)
{
    const loom_attr_value *mean = &call->attrs[PK_ATTR(normalize, mean)], *sd = &call->attrs[PK_ATTR(normalize, std)];
    pixel_job j = { .fn = normalize_px };
    loom_tensor *out;
    loom_status st = colour_begin(call, 0, &j.g, 0, 0, &out);
    if (st != LOOM_OK)
        return st;
    if (mean->count != 1 && mean->count != j.g.c)
        return pk_host->fail(LOOM_EINVAL, "'mean' has %lld values for %lld channels", (long long)mean->count,
                             (long long)j.g.c);
    if (sd->count != 1 && sd->count != j.g.c)
        return pk_host->fail(LOOM_EINVAL, "'std' has %lld values for %lld channels", (long long)sd->count,
                             (long long)j.g.c);
    float *ms = pk_host->scratch(call->ctx, (size_t)(2 * j.g.c + 2) * sizeof(float));
    if (!ms)
        return LOOM_ENOMEM;
    for (int64_t c = 0; c < j.g.c; c++) {
        /* torch.as_tensor(mean, dtype=float32): the values rounded to float32 */
        ms[c] = (float)mean->u.floats[mean->count == 1 ? 0 : c];
        ms[j.g.c + c] = (float)sd->u.floats[sd->count == 1 ? 0 : c];
        if (ms[j.g.c + c] == 0.0f)
            return pk_host->fail(LOOM_EINVAL, "'std' evaluated to zero, leading to division by zero");
    }
    j.per_image = ms;
    return run_pixels(call, &j);
}

typedef struct convert_job {
    const void *src;
    void *dst;
    int to_float, scale;
} convert_job;

static void convert_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const convert_job *j = user;
    if (j->to_float) {
        const uint8_t *s = j->src;
        float *d = j->dst;
        const float k = (float)(1.0 / 255.0);
        for (int64_t i = begin; i < end; i++)
            d[i] = j->scale ? (float)s[i] * k : (float)s[i];
    } else {
        const float *s = j->src;
        uint8_t *d = j->dst;
        for (int64_t i = begin; i < end; i++)
            d[i] = to_u8(j->scale ? s[i] * 255.999f : s[i]);
    }
}

loom_status vision_to_dtype_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const loom_dtype want = strcmp(call->attrs[PK_ATTR(to_dtype, dtype)].u.s, "uint8") == 0 ? LOOM_DTYPE_U8
                                                                                          : LOOM_DTYPE_F32;
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, want, x->ndim, x->shape, &out);
    if (st != LOOM_OK || loom_numel(x) == 0)
        return st;
    if (want == loom_tensor_dtype_of(x)) {
        memcpy(loom_data(out), loom_data(x), (size_t)loom_numel(x) * pk_host->dtype_size(want));
        return LOOM_OK;
    }
    convert_job j = { loom_data(x), loom_data(out), want == LOOM_DTYPE_F32, call->attrs[PK_ATTR(to_dtype, scale)].u.b };
    return pk_host->parallel_for(call->ctx, loom_numel(x), 32768, convert_range, &j);
}

static void grey_px(const pixel_job *j, int64_t im, int64_t q)
{
    const float v = j->g.c == 1 ? load(&j->g, AT(j, im, 0, q))
                                : grey_of(load(&j->g, AT(j, im, 0, q)), load(&j->g, AT(j, im, 1, q)),
                                          load(&j->g, AT(j, im, 2, q)));
    const int64_t noc = (int64_t)j->a;
    for (int64_t ch = 0; ch < noc; ch++) {
        const int64_t o = (im * noc + ch) * j->g.hw + q;
        if (j->g.u8)
            ((uint8_t *)j->g.dst)[o] = to_u8(v);
        else
            ((float *)j->g.dst)[o] = v;
    }
}

loom_status vision_rgb_to_grayscale_cpu(loom_call *call)
{
    const int64_t noc = call->attrs[PK_ATTR(grayscale, num_output_channels)].u.i;
    if (noc != 1 && noc != 3)
        return pk_host->fail(LOOM_EINVAL, "'num_output_channels' must be 1 or 3, not %lld", (long long)noc);
    pixel_job j = { .fn = grey_px, .a = (float)noc };
    loom_tensor *out;
    loom_status st = colour_begin(call, 1, &j.g, 0, noc, &out);
    if (st != LOOM_OK)
        return st;
    return run_pixels(call, &j);
}
