/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resize_weights.c - the taps of one resized axis, computed exactly as
** PyTorch's CPU upsample kernels compute them
** (aten/src/ATen/native/cpu/UpSampleKernel.cpp), because the uint8 results
** are only bit-exact when every weight is:
**
**   uint8, bilinear/bicubic (_compute_index_ranges_int16_weights): weights
**     in double; antialias: Pillow's filter support scaled by in/out and the
**     weights normalised by their sum; without: the 2 or 4 taps of the
**     plain kernel, out-of-range taps folded onto the edge pixel. Then
**     rounded to int16 with the largest precision (< 22 bits) for which
**     round(max_w * 2^(prec+1)) < 2^15, halves away from zero.
**   float32, antialias (_compute_index_ranges_weights<float>): the same
**     formulas in float (scale = float(in)/out), mixed with double where
**     PyTorch's expressions promote.
**   float32, no antialias (compute_indices_weights of HelperInterpLinear /
**     HelperInterpCubic): half-pixel source index, clamped at 0 for
**     bilinear; bicubic is Keys' cubic with a = -0.75 on clamped indices.
**     The taps are kept as PyTorch reads them (a clamped index repeated),
**     and also merged where they clamp onto one pixel (the sum of their
**     weights) for the readers of contiguous windows (vision.preprocess).
**
** The filters: bilinear max(0, 1-|x|); bicubic Keys' cubic, a = -0.5 with
** antialias (Pillow's), -0.75 without (OpenCV's).
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

/* ---------------------------------------------------------------- filters */

static double linear_d(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

static double cubic1_d(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
static double cubic2_d(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

static double cubic_d(double x, double a)
{
    x = fabs(x);
    if (x < 1.0)
        return cubic1_d(x, a);
    if (x < 2.0)
        return cubic2_d(x, a);
    return 0.0;
}

static float linear_f(float x)
{
    x = fabsf(x);
    return x < 1.0f ? 1.0f - x : 0.0f;
}

/* PyTorch's build contracts these float expressions into fused multiply-adds
** (GCC's default for C++): the weights of its float32 kernels are these. */
static float cubic1_f(float x, float a) { return fmaf(fmaf(a + 2, x, -(a + 3)) * x, x, 1.0f); }
static float cubic2_f(float x, float a) { return fmaf(fmaf(fmaf(a, x, -(5 * a)), x, 8 * a), x, -(4 * a)); }

/* Without antialias (get_cubic_upsample_coefficients) the same polynomials
** come out of PyTorch's build with their last multiply-add unfused (measured
** on torch 2.15: these forms give its weights bit for bit, the all-FMA ones
** are an ulp off in two thirds of them). */
static float cubic1_plain(float x, float a) { return fmaf(a + 2, x, -(a + 3)) * x * x + 1.0f; }
static float cubic2_plain(float x, float a) { return fmaf(fmaf(a, x, -(5 * a)), x, 8 * a) * x - 4 * a; }

static float cubic_f(float x, float a)
{
    x = fabsf(x);
    if (x < 1.0f)
        return cubic1_f(x, a);
    if (x < 2.0f)
        return cubic2_f(x, a);
    return 0.0f;
}

static double filter_d(resize_mode mode, int antialias, double x)
{
    return mode == RESIZE_BICUBIC ? cubic_d(x, antialias ? -0.5 : -0.75) : linear_d(x);
}

static float filter_f(resize_mode mode, float x)
{
    return mode == RESIZE_BICUBIC ? cubic_f(x, -0.5f) : linear_f(x);
}

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t iclamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* -------------------------------------------------------- the uint8 path */

/* Double weights of output i into w[0, max), its range into *xmin, *xsize;
** returns the largest weight (PyTorch's wt_max). */
static double taps_u8(int64_t i, int64_t in, double scale, resize_mode mode, int antialias, int max,
                      double *w, int64_t *xmin, int64_t *xsize)
{
    const int interp = mode == RESIZE_BICUBIC ? 4 : 2;
    double wt_max = 0.0;
    if (antialias) {
        const double support = scale >= 1.0 ? (interp * 0.5) * scale : interp * 0.5;
        const double center = scale * ((double)i + 0.5);
        const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
        double total = 0.0;
        *xmin = imax((int64_t)(center - support + 0.5), 0);
        *xsize = iclamp(imin((int64_t)(center + support + 0.5), in) - *xmin, 0, max);
        int64_t j = 0;
        for (; j < *xsize; j++) {
            w[j] = filter_d(mode, 1, ((double)(j + *xmin) - center + 0.5) * invscale);
            total += w[j];
        }
        if (total != 0.0)
            for (j = 0; j < *xsize; j++) {
                w[j] /= total;
                wt_max = w[j] > wt_max ? w[j] : wt_max;
            }
        for (; j < max; j++)
            w[j] = 0.0;
        return wt_max;
    }
    /* _compute_indices_min_size_weights: the source index as the plain
    ** kernels compute it (floorf, as PyTorch's guard_index_and_lambda) */
    double real = scale * ((double)i + 0.5) - 0.5;
    if (mode != RESIZE_BICUBIC && real < 0)
        real = 0;
    const int64_t idx = imin((int64_t)floorf((float)real), in - 1);
    double lambda = real - (double)idx;
    lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;
    const int64_t support = (int64_t)(max * 0.5);
    const int64_t lo = idx - support + 1, hi = idx + support + 1;
    *xmin = imax(lo, 0);
    *xsize = iclamp(imin(hi, in) - *xmin, 0, max);
    int64_t wi = 0;
    for (int64_t j = 0; j < max; j++) {
        w[j] = 0.0;
        const double v = filter_d(mode, 0, (double)(j + 1 - support) - lambda);
        if (lo + j <= 0)
            wi = 0;
        else if (lo + j >= in - 1)
            wi = *xsize - 1;
        if (wi < 0 || wi >= max)   /* cannot happen for in >= 1; keeps the writes in the table */
            wi = 0;
        w[wi] += v;
        wt_max = w[wi] > wt_max ? w[wi] : wt_max;
        wi++;
    }
    return wt_max;
}

static loom_status build_u8(loom_exec_ctx *ctx, resize_axis *ax, resize_mode mode, int antialias)
{
    const double scale = (double)ax->in / (double)ax->out;
    const int interp = mode == RESIZE_BICUBIC ? 4 : 2;
    int max = interp;
    if (antialias) {
        const double support = scale >= 1.0 ? (interp * 0.5) * scale : interp * 0.5;
        max = (int)ceil(support) * 2 + 1;
    }
    ax->ksize = (max + 7) & ~7;
    double *w = pk_host->scratch(ctx, (size_t)ax->out * (size_t)max * sizeof(double));
    ax->w16 = pk_host->scratch(ctx, (size_t)ax->out * (size_t)ax->ksize * sizeof(int16_t));
    if (!w || !ax->w16)
        return LOOM_ENOMEM;
    double wt_max = 0.0;
    for (int64_t i = 0; i < ax->out; i++) {
        int64_t xmin, xsize;
        const double m = taps_u8(i, ax->in, scale, mode, antialias, max, w + i * max, &xmin, &xsize);
        wt_max = m > wt_max ? m : wt_max;
        ax->xmin[i] = (int32_t)xmin;
        ax->xsize[i] = (int32_t)xsize;
    }
    int prec = 0;
    for (prec = 0; prec < 22; prec++)
        if ((int)(0.5 + wt_max * (1 << (prec + 1))) >= (1 << 15))
            break;
    ax->prec = prec < 1 ? 1 : prec;   /* prec >= 13 for any real table: the weights sum to 1 */
    memset(ax->w16, 0, (size_t)ax->out * (size_t)ax->ksize * sizeof(int16_t));
    for (int64_t i = 0; i < ax->out; i++)
        for (int k = 0; k < max; k++) {
            const double v = w[i * max + k] * (double)(1 << prec);
            ax->w16[i * ax->ksize + k] = (int16_t)(v < 0 ? (int)(-0.5 + v) : (int)(0.5 + v));
        }
    return LOOM_OK;
}

/* ------------------------------------------------------ the float32 path */

static void taps_f32_aa(int64_t i, int64_t in, float scale, float support, resize_mode mode, int max, float *w,
                        int64_t *xmin, int64_t *xsize)
{
    const float center = (float)((double)scale * ((double)i + 0.5));
    const float invscale = scale >= 1.0f ? (float)(1.0 / (double)scale) : 1.0f;
    float total = 0.0f;
    *xmin = imax((int64_t)((double)(center - support) + 0.5), 0);
    *xsize = iclamp(imin((int64_t)((double)(center + support) + 0.5), in) - *xmin, 0, max);
    int64_t j = 0;
    for (; j < *xsize; j++) {
        w[j] = filter_f(mode, (float)(((double)((float)(j + *xmin) - center) + 0.5) * (double)invscale));
        total += w[j];
    }
    if (total != 0.0f)
        for (j = 0; j < *xsize; j++)
            w[j] /= total;
}

/* No antialias: the plain kernels' taps, merged where they clamp onto one
** pixel (w, xmin, xsize: for the contiguous readers, vision.preprocess),
** and unmerged as PyTorch reads them (idx, wu: 2 or 4 taps, the resize
** passes). */
static void taps_f32_plain(int64_t i, int64_t in, float scale, resize_mode mode, float *w, int64_t *xmin,
                           int64_t *xsize, int32_t *idx_out, float *wu)
{
    if (mode == RESIZE_BICUBIC) {
        const float real = (float)((double)scale * ((double)i + 0.5) - 0.5);
        const int64_t idx = imin((int64_t)floorf(real), in - 1);
        float t = real - (float)idx;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        const float a = -0.75f, x2 = 1.0f - t;
        const float c[4] = { cubic2_plain((float)(t + 1.0), a), cubic1_plain(t, a), cubic1_plain(x2, a),
                             cubic2_plain((float)(x2 + 1.0), a) };
        const int64_t lo = iclamp(idx - 1, 0, in - 1), hi = iclamp(idx + 2, 0, in - 1);
        *xmin = lo;
        *xsize = hi - lo + 1;
        for (int j = 0; j < 4; j++)
            w[j] = 0.0f;
        for (int j = 0; j < 4; j++) {
            w[iclamp(idx - 1 + j, 0, in - 1) - lo] += c[j];
            idx_out[j] = (int32_t)iclamp(idx - 1 + j, 0, in - 1);
            wu[j] = c[j];
        }
        return;
    }
    float real = (float)((double)scale * ((double)i + 0.5) - 0.5);
    if (real < 0)
        real = 0;
    const int64_t i0 = (int64_t)real;
    float l1 = real - (float)i0;
    l1 = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;
    const float l0 = 1.0f - l1;
    idx_out[0] = (int32_t)i0;
    idx_out[1] = (int32_t)(i0 < in - 1 ? i0 + 1 : i0);   /* PyTorch: the edge pixel twice */
    wu[0] = l0;
    wu[1] = l1;
    *xmin = i0;
    if (i0 < in - 1) {
        *xsize = 2;
        w[0] = l0;
        w[1] = l1;
    } else {
        *xsize = 1;
        w[0] = l0 + l1;
    }
}

static loom_status build_f32(loom_exec_ctx *ctx, resize_axis *ax, resize_mode mode, int antialias)
{
    const float scale = (float)ax->in / (float)ax->out;
    const int interp = mode == RESIZE_BICUBIC ? 4 : 2;
    int max = interp;
    float support = 0.0f;
    if (antialias) {
        support = scale >= 1.0f ? (float)((interp * 0.5) * (double)scale) : (float)(interp * 0.5);
        max = (int)ceilf(support) * 2 + 1;
    }
    ax->ksize = (max + 7) & ~7;
    ax->wf = pk_host->scratch(ctx, (size_t)ax->out * (size_t)ax->ksize * sizeof(float));
    if (!ax->wf)
        return LOOM_ENOMEM;
    memset(ax->wf, 0, (size_t)ax->out * (size_t)ax->ksize * sizeof(float));
    if (!antialias) {
        ax->taps = interp;
        ax->tap_idx = pk_host->scratch(ctx, (size_t)ax->out * (size_t)interp * sizeof(int32_t));
        ax->tap_w = pk_host->scratch(ctx, (size_t)ax->out * (size_t)interp * sizeof(float));
        if (!ax->tap_idx || !ax->tap_w)
            return LOOM_ENOMEM;
    }
    for (int64_t i = 0; i < ax->out; i++) {
        int64_t xmin, xsize;
        float *w = ax->wf + i * ax->ksize;
        if (antialias)
            taps_f32_aa(i, ax->in, scale, support, mode, max, w, &xmin, &xsize);
        else
            taps_f32_plain(i, ax->in, scale, mode, w, &xmin, &xsize, ax->tap_idx + i * interp, ax->tap_w + i * interp);
        ax->xmin[i] = (int32_t)xmin;
        ax->xsize[i] = (int32_t)xsize;
    }
    return LOOM_OK;
}

loom_status resize_axis_build(loom_exec_ctx *ctx, resize_axis *ax, int64_t in, int64_t out, resize_mode mode,
                              int antialias, int u8)
{
    /* an antialiased filter spans 2 * in/out taps per output (4 * in/out for
    ** bicubic): keep the tap counts in int32 */
    if (antialias && (double)in / (double)out > (double)(1 << 22))
        return pk_host->fail(LOOM_EINVAL, "'size': a %lld -> %lld antialiased downscale needs too many taps "
                                          "(a factor of at most 2^22)",
                             (long long)in, (long long)out);
    memset(ax, 0, sizeof *ax);
    ax->in = in;
    ax->out = out;
    ax->xmin = pk_host->scratch(ctx, (size_t)out * sizeof(int32_t));
    ax->xsize = pk_host->scratch(ctx, (size_t)out * sizeof(int32_t));
    if (!ax->xmin || !ax->xsize)
        return LOOM_ENOMEM;
    return u8 ? build_u8(ctx, ax, mode, antialias) : build_f32(ctx, ax, mode, antialias);
}

/* --------------------------------------------------------------- nearest */

/* PyTorch's nearest_neighbor_compute_source_index (floorf(i * scale)) and
** nearest_neighbor_exact_compute_source_index (floorf((i + 0.5) * scale)),
** scale = float(in) / out, clamped to in - 1. */
void resize_nearest_index(int64_t in, int64_t out, int exact, int64_t *idx)
{
    const float scale = (float)in / (float)out;
    for (int64_t i = 0; i < out; i++) {
        int64_t s;
        if (exact)
            s = (int64_t)floorf((float)(((double)i + 0.5) * (double)scale));
        else if (out == in)
            s = i;
        else if (out == 2 * in)
            s = i >> 1;
        else
            s = (int64_t)floorf((float)i * scale);
        idx[i] = s < in - 1 ? s : in - 1;
    }
}
