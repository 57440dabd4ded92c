/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_vision.c - case generators of the vision pack's ops (torchvision.ops).
**
** Box ops: scenes of n boxes in a 300 x 300 image (sides 3..33, scores with
** ties, 7 categories), n around the 64-box blocks of the cuda nms: 1, 63,
** 64, 65, 700, 3000 (the pairwise ops stop at 700: [n, n] matrices keep the
** cpu reference quick). Tolerances: index outputs (nms, batched_nms,
** remove_small_boxes) must be identical; the float ops repeat the cpu's
** operation order, but nvcc may fuse a multiply and an add, so they agree to
** a few ulps of the dtype: rtol = atol = 1e-5 (f32), 1e-12 (f64), 4e-3 (f16);
** a loss reduced by "sum" adds n such values in another order: 10 times
** that. clip_boxes_to_image only compares and copies: equal values.
**
** RoI ops: a [2, 18, 13, 17] map (18 channels split into 2 x 3 x 3 for the
** position-sensitive ops), 24 rois inside, across and outside the map,
** zero-area and reversed, at spatial scales 1 and 0.5, with fixed and
** adaptive sampling, aligned or not. Tolerances: the cuda forward kernels
** compute every value with the cpu kernels' operations in the same order
** (no FMA; f16 rounded after each operation), so outputs and maps must be
** identical. The backward kernels scatter with atomicAdd in an unspecified
** order: each gradient element is a sum of at most a few hundred terms of
** size <= max|grad|, so f32 agrees within 1e-5 relative / 1e-5 absolute,
** f64 within 1e-12, f16 (whose atomics round every partial sum to half)
** within 2^-7 relative and 2^-6 absolute.
**
** Deform module:
**  - deform_conv2d / backward: the same sampling arithmetic (nvcc may fuse a
**    multiply-add), GEMMs in another summation order and grad_input summed
**    with atomics: |x - ref| <= tol * (1 + |ref|) with tol 1e-4 (f32),
**    1e-10 (f64), 2e-2 (f16, whose inputs round alike and whose outputs
**    are rounded once from f32 on both backends); the backward, whose
**    gradients sum over the whole batch and output map, 10 tol.
**  - drop_block / stochastic_depth: the same counter-based draws and the
**    same per-step rounding: identical bits, with and without `noise`.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define BIT(d) LOOM_DTYPE_BIT(LOOM_DTYPE_##d)
#define F32_F64 (BIT(F32) | BIT(F64))
#define FLOATS3 (BIT(F32) | BIT(F64) | BIT(F16))

/* ------------------------------------------------------------ box ops */

static const int64_t box_sizes[] = { 1, 63, 64, 65, 700, 3000 };
#define N_BOX_SIZES ((int)(sizeof box_sizes / sizeof box_sizes[0]))

static double box_tol(loom_dtype dt)
{
    return dt == LOOM_DTYPE_F32 ? 1e-5 : dt == LOOM_DTYPE_F64 ? 1e-12 : 4e-3;
}

/* n xyxy boxes (corners on a 0.01 grid) from stream s, as dt */
static loom_tensor *scene_boxes(cf_case *c, loom_dtype dt, int64_t n, uint64_t s)
{
    loom_tensor *b = cf_zeros(c, LOOM_DTYPE_F64, 2, (const int64_t[]){ n, 4 });
    double *p = loom_data(b);
    for (int64_t i = 0; i < n; i++) {
        double x = floor(cf_draw(c, s, (uint64_t)(4 * i)) * 30000) / 100;
        double y = floor(cf_draw(c, s, (uint64_t)(4 * i + 1)) * 30000) / 100;
        p[4 * i] = x;
        p[4 * i + 1] = y;
        p[4 * i + 2] = x + 3 + floor(cf_draw(c, s, (uint64_t)(4 * i + 2)) * 3000) / 100;
        p[4 * i + 3] = y + 3 + floor(cf_draw(c, s, (uint64_t)(4 * i + 3)) * 3000) / 100;
    }
    return dt == LOOM_DTYPE_F64 ? b : cf_cast(c, b, dt);
}

static int nms_make(cf_case *c)
{
    const int64_t n = box_sizes[c->index];
    loom_tensor *s = cf_zeros(c, LOOM_DTYPE_F64, 1, &n), *idx = cf_zeros(c, LOOM_DTYPE_I64, 1, &n);
    for (int64_t i = 0; i < n; i++) {
        ((double *)loom_data(s))[i] = floor(cf_draw(c, 1, (uint64_t)i) * 50) / 50;   /* ties */
        ((int64_t *)loom_data(idx))[i] = (int64_t)(cf_draw(c, 2, (uint64_t)i) * 7);
    }
    c->in[0] = scene_boxes(c, c->dtype, n, 0);
    c->in[1] = c->dtype == LOOM_DTYPE_F64 ? s : cf_cast(c, s, c->dtype);
    c->in[2] = idx;
    c->n_in = strcmp(c->op, "vision.batched_nms") == 0 ? 3 : 2;
    cf_attrs(c, "iou_threshold=0.3");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "n=%lld", (long long)n);
    return 1;
}

/* box_iou and its generalized / distance / complete forms: a scene against itself */
static int pair_make(cf_case *c)
{
    const int64_t n = box_sizes[c->index];
    if (n > 700)
        return 0;
    c->in[0] = c->in[1] = scene_boxes(c, c->dtype, n, 0);
    c->n_in = 2;
    cf_tol_all(c, CF_CLOSE, box_tol(c->dtype), box_tol(c->dtype));
    cf_what(c, "n=%lld", (long long)n);
    return 1;
}

/* the losses of two scenes paired box by box, reduced by "none" and "sum" in turn */
static int loss_make(cf_case *c)
{
    const int64_t n = box_sizes[c->index];
    const int sum = c->index % 2;
    c->in[0] = scene_boxes(c, c->dtype, n, 0);
    c->in[1] = scene_boxes(c, c->dtype, n, 3);
    c->n_in = 2;
    cf_attrs(c, "reduction=%s", sum ? "sum" : "none");
    cf_tol_all(c, CF_CLOSE, box_tol(c->dtype) * (sum ? 10 : 1), box_tol(c->dtype) * (sum ? 10 : 1));
    cf_what(c, "n=%lld, %s", (long long)n, sum ? "sum" : "none");
    return 1;
}

static int one_box_input(cf_case *c)
{
    const int64_t n = box_sizes[c->index];
    c->in[0] = scene_boxes(c, c->dtype, n, 0);
    c->n_in = 1;
    cf_what(c, "n=%lld", (long long)n);
    return 1;
}

static int convert_make(cf_case *c)
{
    one_box_input(c);
    cf_attrs(c, "in_fmt=cxcywh;out_fmt=xywh");
    cf_tol_all(c, CF_CLOSE, box_tol(c->dtype), box_tol(c->dtype));
    return 1;
}

static int area_make(cf_case *c)
{
    one_box_input(c);
    cf_tol_all(c, CF_CLOSE, box_tol(c->dtype), box_tol(c->dtype));
    return 1;
}

static int clip_make(cf_case *c)
{
    one_box_input(c);
    cf_attrs(c, "size=200,250");
    cf_tol_all(c, CF_CLOSE, 0, 0);
    return 1;
}

static int small_make(cf_case *c)
{
    one_box_input(c);
    cf_attrs(c, "min_size=12");
    cf_tol_all(c, CF_BYTES, 0, 0);
    return 1;
}

/* ------------------------------------------------------------ RoI ops */

#define ROI_K 24
static const int64_t roi_map[4] = { 2, 18, 13, 17 };

typedef struct roi_cfg {
    int64_t ph, pw, sampling_ratio;
    double spatial_scale;
    int aligned, ps, align;
} roi_cfg;

/* Configuration `index` (0..3) of op (forward or backward): scale 0.5 on
** odd ones, sampling 2 on 2 and 3 (else adaptive), aligned on 1 and 2. */
static roi_cfg roi_config(const cf_case *c)
{
    roi_cfg r = { .spatial_scale = c->index & 1 ? 0.5 : 1.0, .sampling_ratio = c->index & 2 ? 2 : -1,
                  .aligned = c->index == 1 || c->index == 2, .ps = strstr(c->op, "ps_") != NULL,
                  .align = strstr(c->op, "align") != NULL };
    r.ph = r.ps ? 3 : 2;
    r.pw = r.ps ? 3 : 4;
    return r;
}

/* The forward op's attributes as text (for cf_attrs and cf_cpu_run). */
static void roi_forward_text(const roi_cfg *r, const char *fwd, char *buf, size_t size)
{
    int n = snprintf(buf, size, "output_size=%lld,%lld;spatial_scale=%.17g", (long long)r->ph, (long long)r->pw,
                     r->spatial_scale);
    if (r->align)
        n += snprintf(buf + n, size - (size_t)n, ";sampling_ratio=%lld", (long long)r->sampling_ratio);
    if (strcmp(fwd, "vision.roi_align") == 0)
        snprintf(buf + n, size - (size_t)n, ";aligned=%s", r->aligned ? "true" : "false");
}

/* 24 rois, batch index alternating; every 8th zero-area, every 8th+1 reversed */
static loom_tensor *roi_boxes(cf_case *c)
{
    double v[ROI_K * 5];
    for (int r = 0; r < ROI_K; r++) {
        double x = cf_draw(c, 1, (uint64_t)(4 * r)) * 40 - 8, y = cf_draw(c, 1, (uint64_t)(4 * r + 1)) * 30 - 6;
        double w = cf_draw(c, 1, (uint64_t)(4 * r + 2)) * 25, h = cf_draw(c, 1, (uint64_t)(4 * r + 3)) * 20;
        if (r % 8 == 6)
            w = h = 0;
        if (r % 8 == 7)
            w = -w;
        v[r * 5] = (double)(r % 2);
        v[r * 5 + 1] = x;
        v[r * 5 + 2] = y;
        v[r * 5 + 3] = x + w;
        v[r * 5 + 4] = y + h;
    }
    return cf_values(c, c->dtype, 2, (const int64_t[]){ ROI_K, 5 }, v);
}

static int roi_forward_make(cf_case *c)
{
    roi_cfg r = roi_config(c);
    char text[256];
    c->in[0] = cf_uniform(c, c->dtype, 4, roi_map, 0, -1, 1);
    c->in[1] = roi_boxes(c);
    c->n_in = 2;
    roi_forward_text(&r, c->op, text, sizeof text);
    cf_attrs(c, "%s", text);
    cf_tol_all(c, CF_CLOSE, 0, 0);
    cf_what(c, "scale %g, sampling %lld%s", r.spatial_scale, (long long)r.sampling_ratio,
            r.aligned ? ", aligned" : "");
    return 1;
}

/* The gradient of the forward's output, the rois, and for all but
** roi_align the argmax / channel mapping of the forward (run on the cpu). */
static int roi_backward_make(cf_case *c)
{
    roi_cfg r = roi_config(c);
    char fwd[48], text[256];
    snprintf(fwd, sizeof fwd, "%.*s", (int)(strlen(c->op) - strlen("_backward")), c->op);
    const int64_t channels = r.ps ? roi_map[1] / (r.ph * r.pw) : roi_map[1];
    loom_tensor *x = cf_uniform(c, c->dtype, 4, roi_map, 0, -1, 1), *boxes = roi_boxes(c);
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ ROI_K, channels, r.ph, r.pw }, 2, -1, 1);
    c->in[1] = boxes;
    c->n_in = 2;
    if (strcmp(fwd, "vision.roi_align") != 0) {
        loom_tensor *out[2];
        roi_forward_text(&r, fwd, text, sizeof text);
        cf_cpu_run(c, fwd, (const loom_tensor *[]){ x, boxes }, 2, text, out, 2);
        c->in[2] = out[1];
        c->n_in = 3;
    }
    cf_attrs(c, "spatial_scale=%.17g;pooled_height=%lld;pooled_width=%lld;batch_size=%lld;channels=%lld;"
             "height=%lld;width=%lld", r.spatial_scale, (long long)r.ph, (long long)r.pw, (long long)roi_map[0],
             (long long)roi_map[1], (long long)roi_map[2], (long long)roi_map[3]);
    if (r.align)
        cf_attrs(c, "sampling_ratio=%lld", (long long)r.sampling_ratio);
    if (strcmp(fwd, "vision.roi_align") == 0)
        cf_attrs(c, "aligned=%s", r.aligned ? "true" : "false");
    double rtol = c->dtype == LOOM_DTYPE_F64 ? 1e-12 : c->dtype == LOOM_DTYPE_F32 ? 1e-5 : 0x1p-7;
    double atol = c->dtype == LOOM_DTYPE_F64 ? 1e-12 : c->dtype == LOOM_DTYPE_F32 ? 1e-5 : 0x1p-6;
    cf_tol_all(c, CF_CLOSE, rtol, atol);
    cf_what(c, "scale %g, sampling %lld%s", r.spatial_scale, (long long)r.sampling_ratio,
            r.aligned ? ", aligned" : "");
    return 1;
}

/* ------------------------------------------------------ deform module */

/* N, Cin, H, W, Cout, groups, offset_groups, k, stride, pad, dil, mask, bias */
static const int64_t conv_cfgs[][13] = {
    { 2, 4, 9, 9, 8, 1, 1, 3, 1, 1, 1, 1, 1 },
    { 1, 6, 17, 13, 9, 3, 2, 3, 2, 1, 1, 1, 0 },
    { 3, 8, 16, 16, 16, 2, 4, 3, 1, 2, 2, 0, 1 },
    { 1, 16, 33, 31, 7, 1, 1, 1, 1, 0, 1, 1, 1 },
};
#define N_CONV_CFGS ((int)(sizeof conv_cfgs / sizeof conv_cfgs[0]))

static int deform_make(cf_case *c)
{
    const int64_t *f = conv_cfgs[c->index];
    const int64_t n = f[0], cin = f[1], h = f[2], w = f[3], cout = f[4], grp = f[5], og = f[6], k = f[7];
    const int64_t s = f[8], p = f[9], d = f[10];
    const int64_t ho = (h + 2 * p - (d * (k - 1) + 1)) / s + 1, wo = (w + 2 * p - (d * (k - 1) + 1)) / s + 1;
    const loom_dtype dt = c->dtype;
    const int backward = strstr(c->op, "_backward") != NULL;
    double tol = dt == LOOM_DTYPE_F32 ? 1e-4 : dt == LOOM_DTYPE_F64 ? 1e-10 : 2e-2;
    loom_tensor *in = cf_uniform(c, dt, 4, (const int64_t[]){ n, cin, h, w }, 0, -1, 1);
    loom_tensor *off = cf_uniform(c, dt, 4, (const int64_t[]){ n, 2 * og * k * k, ho, wo }, 1, -3, 3);
    loom_tensor *wt = cf_uniform(c, dt, 4, (const int64_t[]){ cout, cin / grp, k, k }, 2, -0.5, 0.5);
    loom_tensor *bias = f[12] ? cf_uniform(c, dt, 1, &cout, 3, -1, 1) : NULL;
    loom_tensor *mask = f[11] ? cf_uniform(c, dt, 4, (const int64_t[]){ n, og * k * k, ho, wo }, 4, 0, 1) : NULL;
    if (backward) {
        const loom_tensor *args[6] = { cf_uniform(c, dt, 4, (const int64_t[]){ n, cout, ho, wo }, 5, -1, 1),
                                       in, wt, off, mask, bias };
        memcpy(c->in, args, sizeof args);
        c->n_in = 6;
        tol *= 10;
    } else {
        const loom_tensor *args[5] = { in, off, wt, bias, mask };
        memcpy(c->in, args, sizeof args);
        c->n_in = 5;
    }
    cf_attrs(c, "stride=%lld,%lld;padding=%lld,%lld;dilation=%lld,%lld", (long long)s, (long long)s, (long long)p,
             (long long)p, (long long)d, (long long)d);
    cf_tol_all(c, CF_CLOSE, tol, tol);
    cf_what(c, "[%lld,%lld,%lld,%lld] -> %lld, k %lld, groups %lld/%lld%s%s", (long long)n, (long long)cin,
            (long long)h, (long long)w, (long long)cout, (long long)k, (long long)grp, (long long)og,
            f[11] ? ", mask" : "", f[12] ? ", bias" : "");
    return 1;
}

/* 1 where a draw falls in its lowest fifth, else 0 (binary, so every
** backend sums the mask exactly) */
static loom_tensor *binary_noise(cf_case *c, int32_t ndim, const int64_t *shape, uint64_t stream)
{
    loom_tensor *u = cf_uniform(c, LOOM_DTYPE_F64, ndim, shape, stream, 0, 1);
    double *p = loom_data(u);
    for (int64_t i = 0; i < loom_numel(u); i++)
        p[i] = p[i] < 0.2 ? 1.0 : 0.0;
    return c->dtype == LOOM_DTYPE_F64 ? u : cf_cast(c, u, c->dtype);
}

/* drop_block2d: seeds 0..2 without noise, then with a given noise;
** drop_block3d: seeds 0..2 */
static int drop_block_make(cf_case *c)
{
    const int three = strcmp(c->op, "vision.drop_block3d") == 0, noise = !three && c->index >= 3;
    const int64_t seed = c->index % 3;
    if (three && c->index >= 3)
        return 0;
    c->in[0] = three ? cf_uniform(c, c->dtype, 5, (const int64_t[]){ 2, 3, 7, 9, 11 }, 0, -2, 2)
                     : cf_uniform(c, c->dtype, 4, (const int64_t[]){ 3, 5, 17, 19 }, 0, -2, 2);
    c->in[1] = noise ? binary_noise(c, 4, (const int64_t[]){ 3, 5, 13, 15 }, 1) : NULL;
    c->n_in = 2;
    cf_attrs(c, "p=0.35;block_size=5;seed=%lld", (long long)seed);
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "seed %lld%s", (long long)seed, noise ? ", noise given" : "");
    return 1;
}

/* seeds 0..2, mode "row" (seed 2: "batch") */
static int stochastic_depth_make(cf_case *c)
{
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 3, 5, 17, 19 }, 0, -2, 2);
    c->in[1] = NULL;
    c->n_in = 2;
    cf_attrs(c, "p=0.35;mode=%s;seed=%d", c->index == 2 ? "batch" : "row", c->index);
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "seed %d, %s", c->index, c->index == 2 ? "batch" : "row");
    return 1;
}

/* ------------------------------------------------------ layers module */

/* N, Cin, H, W, Cout, groups, kh, kw, stride, pad, dil, bias, padding_mode, activation, residual.
** Zero padding only: the other modes are the cpu kernel's alone on onednn
** (which declines them), and so is a residual after the activation; the
** cuda kernel's padding copies and residual_after_activation are checked
** against the cpu in tests/vision/layers_cuda. The rows after the stem's
** reach each epilogue of the cuda kernel (conv2d_cuda.c): relu fused with a
** residual and no bias (cuDNN's bias + activation call with a zero bias),
** none with a bias (the identity fusion or the separate epilogue, by the
** algorithm cuDNN picks), none with a residual (accumulated with beta = 1).
** Tolerance: f32 sums of up to 576 products of |x| <= 1, |w| <= 1/sqrt(K)
** in another order (cuDNN's implicit GEMMs and Winograd transforms, FMA math
** without TF32): a few ulps of ~sqrt(K), well within 1e-5. */
static const struct { int64_t n, cin, h, w, cout, groups, kh, kw, s, p, d, bias; const char *mode, *act; int residual; }
layer_convs[] = {
    { 2, 16, 14, 14, 32, 1, 3, 3, 1, 1, 1, 1, "zeros", "relu", 0 },      /* a ResNet 3x3 */
    { 1, 3, 32, 32, 16, 1, 7, 7, 2, 3, 1, 0, "zeros", "none", 0 },       /* the stem */
    { 1, 64, 8, 8, 256, 1, 1, 1, 1, 0, 1, 1, "zeros", "none", 0 },       /* a bottleneck's 1x1 */
    { 2, 32, 9, 9, 64, 32, 3, 3, 2, 1, 1, 1, "zeros", "silu", 0 },      /* grouped: ResNeXt */
    { 1, 24, 11, 10, 24, 24, 3, 3, 1, 2, 2, 1, "zeros", "none", 0 },     /* depthwise, dilated */
    { 1, 4, 9, 9, 8, 1, 3, 3, 1, 2, 1, 1, "zeros", "gelu", 0 },
    { 1, 8, 10, 10, 16, 2, 1, 1, 2, 0, 1, 0, "zeros", "none", 0 },     /* a strided 1x1: ResNet's downsample */
    { 2, 16, 10, 10, 16, 1, 3, 3, 1, 1, 1, 0, "zeros", "relu", 1 },     /* a block's end: relu(conv + identity) */
    { 1, 64, 28, 28, 64, 1, 3, 3, 1, 1, 1, 1, "zeros", "none", 0 },     /* K = 576 */
    { 2, 32, 15, 15, 32, 32, 5, 5, 2, 2, 1, 1, "zeros", "relu", 0 },    /* depthwise 5x5: MNASNet, EfficientNet */
    { 1, 32, 7, 7, 64, 1, 1, 1, 1, 0, 1, 1, "zeros", "none", 1 },       /* a 1x1 onto a residual */
};
#define N_LAYER_CONVS ((int)(sizeof layer_convs / sizeof layer_convs[0]))

static int layer_conv_make(cf_case *c)
{
    const __typeof__(layer_convs[0]) *f = &layer_convs[c->index];
    const int64_t k = f->cin / f->groups * f->kh * f->kw;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ f->n, f->cin, f->h, f->w }, 0, -1, 1);
    c->in[1] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ f->cout, f->cin / f->groups, f->kh, f->kw }, 1,
                          -1.0 / sqrt((double)k), 1.0 / sqrt((double)k));
    c->in[2] = f->bias ? cf_uniform(c, c->dtype, 1, &f->cout, 2, -1, 1) : NULL;
    c->n_in = 3;
    if (f->residual) {
        const int64_t ho = (f->h + 2 * f->p - f->d * (f->kh - 1) - 1) / f->s + 1;
        const int64_t wo = (f->w + 2 * f->p - f->d * (f->kw - 1) - 1) / f->s + 1;
        c->in[3] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ f->n, f->cout, ho, wo }, 3, -1, 1);
        c->n_in = 4;
    }
    cf_attrs(c, "stride=%lld;padding=%lld;dilation=%lld;groups=%lld;padding_mode=%s;activation=%s",
             (long long)f->s, (long long)f->p, (long long)f->d, (long long)f->groups, f->mode, f->act);
    /* f32 sums of up to 784 products of |x| <= 1, |w| <= 1/sqrt(K): another
    ** summation order moves them by a few ulps of ~sqrt(K) */
    cf_tol_all(c, CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "[%lld,%lld,%lld,%lld] -> %lld, %lldx%lld, groups %lld, %s, %s%s", (long long)f->n,
            (long long)f->cin, (long long)f->h, (long long)f->w, (long long)f->cout, (long long)f->kh,
            (long long)f->kw, (long long)f->groups, f->mode, f->act, f->residual ? ", residual" : "");
    return 1;
}

/* N, Cin, H, W, Cout/groups, groups, kh, kw, stride, pad, output_padding, dilation, bias: Mask R-CNN's
** predictor (2x2, stride 2), then a grouped, dilated, padded one with output_padding.
** Tolerance: f32 sums of up to 72 products of |x| <= 1, |w| <= 1/sqrt(K)
** in another order (GEMM + col2im on the cpu, a per-output gather on cuda):
** a few ulps of ~sqrt(K), well within 1e-5. */
static const struct { int64_t n, cin, h, w, cout_g, groups, kh, kw, s, p, op, d, bias; } transposed_convs[] = {
    { 3, 32, 14, 14, 8, 1, 2, 2, 2, 0, 0, 1, 1 },
    { 2, 8, 6, 5, 3, 2, 3, 3, 2, 1, 1, 2, 0 },
};

static int conv_transpose_make(cf_case *c)
{
    const __typeof__(transposed_convs[0]) *f = &transposed_convs[c->index];
    const int64_t k = f->cin / f->groups * f->kh * f->kw;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ f->n, f->cin, f->h, f->w }, 0, -1, 1);
    c->in[1] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ f->cin, f->cout_g, f->kh, f->kw }, 1,
                          -1.0 / sqrt((double)k), 1.0 / sqrt((double)k));
    const int64_t cout = f->cout_g * f->groups;
    c->in[2] = f->bias ? cf_uniform(c, c->dtype, 1, &cout, 2, -1, 1) : NULL;
    c->n_in = 3;
    cf_attrs(c, "stride=%lld;padding=%lld;output_padding=%lld;dilation=%lld;groups=%lld", (long long)f->s,
             (long long)f->p, (long long)f->op, (long long)f->d, (long long)f->groups);
    cf_tol_all(c, CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "[%lld,%lld,%lld,%lld] -> %lld, %lldx%lld, stride %lld, groups %lld", (long long)f->n,
            (long long)f->cin, (long long)f->h, (long long)f->w, (long long)cout, (long long)f->kh,
            (long long)f->kw, (long long)f->s, (long long)f->groups);
    return 1;
}

/* paste_masks: 28 x 28 probabilities into a 40 x 52 image, boxes inside, across each edge, under a
** pixel and inverted. Tolerance: the cpu and cuda kernels run the same f32 steps (paste_masks.h,
** each rounded alone on the device), so they agree to the bit. */
static int paste_masks_make(cf_case *c)
{
    if (c->index >= 1)
        return 0;
    static const double boxes[6 * 4] = { 4.3, 6.1, 30.7, 25.2, -5.5, 10.0, 12.25, 45.9, 35.2, -3.7, 60.0, 8.4,
                                         20.0, 20.0, 20.4, 20.3, 11.6, 3.2, 11.1, 9.8, 0.0, 0.0, 51.9, 39.0 };
    c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 6, 1, 28, 28 }, 0, 0, 1);
    c->in[1] = cf_values(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 6, 4 }, boxes);
    c->n_in = 2;
    cf_attrs(c, "image_size=40,52;padding=1");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "6 masks of 28 x 28 into 40 x 52");
    return 1;
}

/* Case 1 of the element-wise and row-wise layers: the models' other uses
** of each (a classifier's rows, a global pool, Swin's token rows, the
** optional inputs left out, gelu's tanh form, ceil_mode and dilation). The
** tolerance is case 0's: f32 formulas and short sums; the device's expf,
** erff and tanhf are within 2 ulps (CUDA's documented bounds). */
static int layer_variant_make(cf_case *c)
{
    const char *op = c->op;
    c->n_in = 1;
    if (strcmp(op, "vision.batch_norm") == 0) {
        const int64_t shape[3] = { 3, 5, 7 };
        c->in[0] = cf_uniform(c, c->dtype, 3, shape, 0, -8, 8);
        c->in[1] = cf_uniform(c, c->dtype, 1, &shape[1], 1, -1, 1);
        c->in[2] = cf_uniform(c, c->dtype, 1, &shape[1], 2, 0.25, 2);
        c->in[3] = c->in[4] = NULL;
        c->n_in = 5;
        cf_attrs(c, "eps=0.001");
        cf_what(c, "[3,5,7], no weight or bias, eps 1e-3");
    } else if (strcmp(op, "vision.layer_norm") == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 3, (const int64_t[]){ 2, 49, 96 }, 0, -4, 4);
        c->in[1] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 96 }, 1, -1, 1);
        c->in[2] = NULL;
        c->n_in = 3;
        cf_attrs(c, "eps=1e-6");
        cf_what(c, "[2,49,96] over [96], no bias, eps 1e-6");
    } else if (strcmp(op, "vision.group_norm") == 0) {
        /* a RetinaNet v2 head's GroupNorm(32, C) without the affine inputs, rank 3 */
        c->in[0] = cf_uniform(c, c->dtype, 3, (const int64_t[]){ 2, 64, 37 }, 0, -4, 12);
        c->in[1] = c->in[2] = NULL;
        c->n_in = 3;
        cf_attrs(c, "num_groups=32;eps=1e-6");
        cf_what(c, "[2,64,37], 32 groups, no weight or bias, eps 1e-6");
    } else if (strcmp(op, "vision.linear") == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 5, 300 }, 0, -1, 1);
        c->in[1] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 37, 300 }, 1, -0.06, 0.06);
        c->in[2] = NULL;
        c->n_in = 3;
        cf_what(c, "[5,300] x [37,300]^T, no bias");
    } else if (strcmp(op, "vision.softmax") == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 4, 1000 }, 0, -8, 8);
        cf_attrs(c, "dim=-1");
        cf_what(c, "[4,1000], dim -1");
    } else if (strcmp(op, "vision.max_pool2d") == 0 || strcmp(op, "vision.avg_pool2d") == 0
               || strcmp(op, "vision.adaptive_avg_pool2d") == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 8, 13, 17 }, 0, -8, 8);
        if (strcmp(op, "vision.max_pool2d") == 0)
            cf_attrs(c, "kernel_size=3;stride=2;padding=1;dilation=2;ceil_mode=true");
        else if (strcmp(op, "vision.avg_pool2d") == 0)
            cf_attrs(c, "kernel_size=3;stride=2;padding=1;ceil_mode=true;count_include_pad=true");
        else
            cf_attrs(c, "output_size=1");
        cf_what(c, "[2,8,13,17], %s", strcmp(op, "vision.max_pool2d") == 0 ? "dilation 2, ceil_mode"
                                      : strcmp(op, "vision.avg_pool2d") == 0 ? "ceil_mode, count_include_pad"
                                                                             : "output 1");
    } else {
        /* the activations: [3, 1001] rows (not a multiple of the device's 256-thread blocks) */
        c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 3, 1001 }, 0, -8, 8);
        if (strcmp(op, "vision.gelu") == 0)
            cf_attrs(c, "approximate=tanh");
        cf_what(c, "[3,1001]%s", strcmp(op, "vision.gelu") == 0 ? ", tanh" : "");
    }
    cf_tol_all(c, CF_CLOSE, 1e-5, 1e-5);
    return 1;
}

/* RetinaNet's head, v2 (GroupNorm(32) after each conv, no conv biases): two
** levels of a batch of two, 32 channels, 3 anchors x 2 classes; f32 convs
** on the dispatched layers, so another backend's layers move it by ulps. */
static int retinanet_head_make(cf_case *c)
{
    if (c->index >= 1)
        return 0;
    c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 5, (const int64_t[]){ 4, 32, 32, 3, 3 }, 0, -0.06, 0.06);
    c->in[1] = NULL;
    c->in[2] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 4, 32 }, 1, 0.5, 1.5);
    c->in[3] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 4, 32 }, 2, -0.2, 0.2);
    c->in[4] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 6, 32, 3, 3 }, 3, -0.06, 0.06);
    c->in[5] = cf_uniform(c, LOOM_DTYPE_F32, 1, (const int64_t[]){ 6 }, 4, -1, 1);
    c->in[6] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 32, 6, 5 }, 5, -2, 2);
    c->in[7] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 32, 3, 3 }, 6, -2, 2);
    c->n_in = 8;
    cf_attrs(c, "num_outputs=2");
    cf_tol_all(c, CF_CLOSE, 1e-4, 1e-4);
    cf_what(c, "v2, 2 levels of [2,32,*], 3 anchors x 2 classes");
    return 1;
}

/* RetinaNet's postprocess: two images, two levels of anchors, a top-k cut
** and a detections_per_img cap; one case, its cpu kernel the reference. */
static int retinanet_make(cf_case *c)
{
    if (c->index >= 1)
        return 0;
    cf_tol_all(c, CF_BYTES, 0, 0);
    c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 3, (const int64_t[]){ 2, 60, 3 }, 0, -4, 2);
    c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 3, (const int64_t[]){ 2, 60, 4 }, 1, -1, 1);
    double a[240];
    for (int i = 0; i < 60; i++) {
        const double x = cf_draw(c, 2, 2 * (uint64_t)i) * 40, y = cf_draw(c, 2, 2 * (uint64_t)i + 1) * 30;
        a[4 * i] = x;
        a[4 * i + 1] = y;
        a[4 * i + 2] = x + 4 + (i % 13);
        a[4 * i + 3] = y + 3 + (i % 9);
    }
    c->in[2] = cf_values(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 60, 4 }, a);
    c->in[3] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 40, 50, 35, 45 });
    c->n_in = 4;
    cf_attrs(c, "num_anchors_per_level=40,20;topk_candidates=25;detections_per_img=12");
    c->tol[0] = c->tol[1] = (cf_tol){ CF_CLOSE, 1e-4, 1e-4 };
    cf_what(c, "60 anchors in 2 levels on 2 images, 3 classes, top 25, 12 kept");
    return 1;
}

/* the element-wise and row-wise layers: one map, the op's usual attributes
** (case 0), then layer_variant_make's (case 1) */
static int layer_simple_make(cf_case *c)
{
    const int64_t shape[4] = { 2, 8, 13, 17 };
    if (c->index == 1)
        return layer_variant_make(c);
    c->in[0] = cf_uniform(c, c->dtype, 4, shape, 0, -8, 8);
    c->n_in = 1;
    if (strcmp(c->op, "vision.batch_norm") == 0) {
        c->in[1] = cf_uniform(c, c->dtype, 1, &shape[1], 1, -1, 1);
        c->in[2] = cf_uniform(c, c->dtype, 1, &shape[1], 2, 0.25, 2);
        c->in[3] = cf_uniform(c, c->dtype, 1, &shape[1], 3, -1, 1);
        c->in[4] = cf_uniform(c, c->dtype, 1, &shape[1], 4, -1, 1);
        c->n_in = 5;
    } else if (strcmp(c->op, "vision.layer_norm") == 0) {
        c->in[1] = cf_uniform(c, c->dtype, 2, &shape[2], 1, -1, 1);
        c->in[2] = cf_uniform(c, c->dtype, 2, &shape[2], 2, -1, 1);
        c->n_in = 3;
    } else if (strcmp(c->op, "vision.group_norm") == 0) {
        c->in[1] = cf_uniform(c, c->dtype, 1, &shape[1], 1, -1, 1);
        c->in[2] = cf_uniform(c, c->dtype, 1, &shape[1], 2, -1, 1);
        c->n_in = 3;
    } else if (strcmp(c->op, "vision.linear") == 0) {
        c->in[1] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 24, 17 }, 1, -0.25, 0.25);
        c->in[2] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 24 }, 2, -1, 1);
        c->n_in = 3;
    }
    if (strcmp(c->op, "vision.max_pool2d") == 0)
        cf_attrs(c, "kernel_size=3;stride=2;padding=1");
    else if (strcmp(c->op, "vision.avg_pool2d") == 0)
        cf_attrs(c, "kernel_size=3;stride=2;padding=1;count_include_pad=false");
    else if (strcmp(c->op, "vision.adaptive_avg_pool2d") == 0)
        cf_attrs(c, "output_size=3,4");
    else if (strcmp(c->op, "vision.softmax") == 0)
        cf_attrs(c, "dim=1");
    else if (strcmp(c->op, "vision.group_norm") == 0)
        cf_attrs(c, "num_groups=4");
    /* f32 formulas and short sums: within a few ulps on any backend */
    cf_tol_all(c, CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "[2,8,13,17]");
    return 1;
}

/* the models' blocks: a squeeze-excitation of EfficientNet's kind and a
** ShuffleNetV2 channel shuffle */
static int layer_block_make(cf_case *c)
{
    if (c->index == 1 && strcmp(c->op, "vision.channel_shuffle") == 0) {
        /* ShuffleNetV2's block end: cat([input, other], 1) shuffled */
        c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 6, 5, 7 }, 0, -8, 8);
        c->in[1] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 6, 5, 7 }, 1, -8, 8);
        c->n_in = 2;
        cf_attrs(c, "groups=2");
        cf_tol_all(c, CF_BYTES, 0, 0);
        cf_what(c, "[2,6,5,7] + other [2,6,5,7], groups 2");
        return 1;
    }
    if (c->index == 1) {
        /* MobileNetV3's kind: relu, then hardsigmoid */
        c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 1, 16, 7, 7 }, 0, -2, 2);
        c->in[1] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 4, 16, 1, 1 }, 1, -0.5, 0.5);
        c->in[2] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 4 }, 2, -0.5, 0.5);
        c->in[3] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 16, 4, 1, 1 }, 3, -0.5, 0.5);
        c->in[4] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 16 }, 4, -0.5, 0.5);
        c->n_in = 5;
        cf_attrs(c, "activation=relu;scale_activation=hardsigmoid");
        cf_tol_all(c, CF_CLOSE, 1e-5, 1e-6);
        cf_what(c, "[1,16,7,7], squeeze 4, relu, hardsigmoid");
        return 1;
    }
    if (strcmp(c->op, "vision.channel_shuffle") == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 12, 5, 7 }, 0, -8, 8);
        c->n_in = 1;
        cf_attrs(c, "groups=3");
        cf_tol_all(c, CF_BYTES, 0, 0);
        cf_what(c, "[2,12,5,7], groups 3");
        return 1;
    }
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 24, 9, 11 }, 0, -2, 2);
    c->in[1] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 6, 24, 1, 1 }, 1, -0.5, 0.5);
    c->in[2] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 6 }, 2, -0.5, 0.5);
    c->in[3] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 24, 6, 1, 1 }, 3, -0.5, 0.5);
    c->in[4] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 24 }, 4, -0.5, 0.5);
    c->n_in = 5;
    cf_attrs(c, "activation=silu");
    /* f32 means of 99 values and dot products of 24: a few ulps on any backend */
    cf_tol_all(c, CF_CLOSE, 1e-5, 1e-6);
    cf_what(c, "[2,24,9,11], squeeze 6, silu");
    return 1;
}

#define MODEL_COVERED                                                                              \
    "tests/vision/models/test_models.c: the model's only kernel is cpu:ops, which dispatches the layer ops "   \
    "(each compared across backends above); its weights are tens of MB, made at goldens time"
/* Transforms module (resize on images, masks, boxes): a backend must give
** the same uint8 bits (PyTorch's fixed point is integer arithmetic), masks
** and boxes alike (a copy; one float32 product); float32 images in [0, 1)
** within 1e-5 (taps summed in another order). Cases: down with antialias,
** up, short edge with max_size, nearest-exact; bilinear then bicubic. */
static int resize_make(cf_case *c)
{
    static const char *const attrs[] = {
        "size=13,17;interpolation=bilinear", "size=40,52;interpolation=bicubic;antialias=false",
        "size=12;max_size=15;interpolation=bicubic", "size=9,44;interpolation=nearest-exact",
    };
    if (c->index >= 4)
        return 0;
    const int u8 = c->dtype == LOOM_DTYPE_U8;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 3, 29, 37 }, 0, 0, u8 ? 255.99 : 1);
    c->n_in = 1;
    cf_attrs(c, "%s", attrs[c->index]);
    cf_tol_all(c, u8 ? CF_BYTES : CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "%s", attrs[c->index]);
    return 1;
}

static int resize_mask_make(cf_case *c)
{
    if (c->index >= 2)
        return 0;
    c->in[0] = cf_uniform(c, c->dtype, 3, (const int64_t[]){ 2, 29, 37 }, 0, 0, 5.99);
    c->n_in = 1;
    cf_attrs(c, c->index ? "size=50,20;interpolation=nearest-exact" : "size=11");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, c->index ? "nearest-exact up and down" : "short edge 11");
    return 1;
}

static int resize_boxes_make(cf_case *c)
{
    if (c->index >= 1)
        return 0;
    c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 17, 4 }, 0, 0, 30);
    c->n_in = 1;
    cf_attrs(c, "canvas_size=29,37;size=12;max_size=15");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "17 boxes, short edge 12, max_size 15");
    return 1;
}

/* crop, center_crop, pad, flips: copies, identical bytes on every backend;
** resized_crop as resize; affine and rotate: uint8 identical, float32 within
** 1e-5 (the grid's products may be summed in another order). */
static int geometry_make(cf_case *c)
{
    static const struct { const char *op, *attrs; } cfg[] = {
        { "vision.crop", "top=-3;left=5;height=20;width=40" },
        { "vision.center_crop", "output_size=31,22" },
        { "vision.resized_crop", "top=2;left=-1;height=20;width=30;size=17,9" },
        { "vision.pad", "padding=3,1,4,2;padding_mode=reflect" },
        { "vision.pad", "padding=5;fill=1,2,3" },
        { "vision.affine", "angle=17;translate=2.5,-3;scale=0.9;shear=5,-3;interpolation=bilinear" },
        { "vision.rotate", "angle=30;interpolation=bilinear;expand=true;fill=0.5" },
        { "vision.perspective", "startpoints=0,0,36,0,36,28,0,28;endpoints=3,2,33,1,35,26,1,27" },
        { "vision.horizontal_flip", NULL },
        { "vision.vertical_flip", NULL },
    };
    int k = -1;
    for (size_t i = 0, seen = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        if (strcmp(cfg[i].op, c->op) == 0 && (int)seen++ == c->index)
            k = (int)i;
    if (k < 0)
        return 0;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 3, 29, 37 }, 0, 0,
                          c->dtype == LOOM_DTYPE_U8 ? 255.99 : 1);
    c->n_in = 1;
    if (cfg[k].attrs)
        cf_attrs(c, "%s", cfg[k].attrs);
    if (strcmp(c->op, "vision.resized_crop") == 0 || strcmp(c->op, "vision.affine") == 0 ||
        strcmp(c->op, "vision.rotate") == 0 || strcmp(c->op, "vision.perspective") == 0)
        cf_tol_all(c, c->dtype == LOOM_DTYPE_U8 ? CF_BYTES : CF_CLOSE, 1e-5, 1e-5);
    else
        cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "%s", cfg[k].attrs ? cfg[k].attrs : "2x3x29x37");
    return 1;
}

/* The box ops of the transforms module: float32 formulas in torchvision's
** order, identical bytes on every backend. */
static int transform_boxes_make(cf_case *c)
{
    static const struct { const char *op, *attrs; } cfg[] = {
        { "vision.convert_bounding_box_format", "old_format=cxcywh;new_format=xywh" },
        { "vision.clamp_bounding_boxes", "format=xywh;canvas_size=20,25" },
        { "vision.sanitize_bounding_boxes", "canvas_size=20,25;min_size=2" },
        { "vision.horizontal_flip_bounding_boxes", "canvas_size=20,25" },
        { "vision.vertical_flip_bounding_boxes", "format=xywh;canvas_size=20,25" },
        { "vision.crop_bounding_boxes", "top=3;left=-2;height=12;width=15" },
        { "vision.center_crop_bounding_boxes", "format=cxcywh;canvas_size=20,25;output_size=11" },
        { "vision.resized_crop_bounding_boxes", "top=1;left=2;height=10;width=12;size=30,7" },
        { "vision.pad_bounding_boxes", "canvas_size=20,25;padding=2,3" },
        { "vision.affine_bounding_boxes", "canvas_size=20,25;angle=17;translate=2.5,-3;scale=0.9;shear=5,-3" },
        { "vision.rotate_bounding_boxes", "format=xywh;canvas_size=20,25;angle=33;expand=true" },
        { "vision.perspective_bounding_boxes",
          "format=cxcywh;canvas_size=20,25;startpoints=0,0,24,0,24,19,0,19;endpoints=3,2,22,1,23,17,1,18" },
    };
    if (c->index > 0)
        return 0;
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        if (strcmp(cfg[i].op, c->op) == 0) {
            c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 19, 4 }, 0, -5, 30);
            c->n_in = 1;
            cf_attrs(c, "%s", cfg[i].attrs);
            cf_tol_all(c, CF_BYTES, 0, 0);
            cf_what(c, "19 boxes, %s", cfg[i].attrs);
            return 1;
        }
    return 0;
}

/* Colour ops: the same float32 expressions on every backend; uint8 results
** identical (truncations of those expressions), float32 within 1e-5 (a
** backend may sum the contrast mean or the blur in another order). */
static int colour_make(cf_case *c)
{
    static const struct { const char *op, *attrs; } cfg[] = {
        { "vision.adjust_brightness", "brightness_factor=1.3" }, { "vision.adjust_sharpness", "sharpness_factor=1.7" }, { "vision.adjust_contrast", "contrast_factor=0.6" },
        { "vision.adjust_saturation", "saturation_factor=1.6" }, { "vision.adjust_hue", "hue_factor=-0.2" },
        { "vision.adjust_gamma", "gamma=1.7;gain=1.1" }, { "vision.autocontrast", NULL }, { "vision.equalize", NULL },
        { "vision.posterize", "bits=2" }, { "vision.solarize", "threshold=0.5" }, { "vision.invert", NULL },
        { "vision.gaussian_blur", "kernel_size=5,3;sigma=1.2" }, { "vision.normalize", "mean=0.4,0.5,0.6;std=0.2" },
        { "vision.to_dtype", "dtype=uint8;scale=true" }, { "vision.rgb_to_grayscale", "num_output_channels=3" },
    };
    if (c->index > 0)
        return 0;
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        if (strcmp(cfg[i].op, c->op) == 0) {
            const int u8 = c->dtype == LOOM_DTYPE_U8;
            c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 3, 17, 23 }, 0, 0, u8 ? 255.99 : 1);
            c->n_in = 1;
            if (cfg[i].attrs)
                cf_attrs(c, "%s", cfg[i].attrs);
            cf_tol_all(c, u8 ? CF_BYTES : CF_CLOSE, 1e-5, 1e-5);
            cf_what(c, "2x3x17x23 %s", cfg[i].attrs ? cfg[i].attrs : "");
            return 1;
        }
    return 0;
}

/* preprocess: uint8 identical after the rounding, float32 within 1e-5 */
static int preprocess_make(cf_case *c)
{
    if (c->index > 1)
        return 0;
    const int u8 = c->dtype == LOOM_DTYPE_U8;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 3, 61, 47 }, 0, 0, u8 ? 255.99 : 1);
    c->n_in = 1;
    cf_attrs(c, "resize_size=40;crop_size=32;interpolation=%s", c->index ? "bicubic" : "bilinear");
    cf_tol_all(c, u8 ? CF_BYTES : CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "2x3x61x47 -> 40 -> 32, %s", c->index ? "bicubic" : "bilinear");
    return 1;
}

/* elastic: a small random displacement; as affine */
static int elastic_make(cf_case *c)
{
    if (c->index > 0)
        return 0;
    const int u8 = c->dtype == LOOM_DTYPE_U8;
    c->in[0] = cf_uniform(c, c->dtype, 4, (const int64_t[]){ 2, 3, 29, 37 }, 0, 0, u8 ? 255.99 : 1);
    c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, 29, 37, 2 }, 1, -0.1, 0.1);
    c->n_in = 2;
    cf_attrs(c, "interpolation=bilinear;fill=3");
    cf_tol_all(c, u8 ? CF_BYTES : CF_CLOSE, 1e-5, 1e-5);
    cf_what(c, "2x3x29x37, displacement in [-0.1, 0.1)");
    return 1;
}

/* Masks through affine, rotate, perspective, elastic: nearest copies of
** the labels, identical bytes on every backend; elastic boxes likewise. */
static int mask_warp_make(cf_case *c)
{
    static const struct { const char *op, *attrs; } cfg[] = {
        { "vision.affine_mask", "angle=17;translate=2.5,-3;scale=0.9;shear=5,-3;fill=2" },
        { "vision.rotate_mask", "angle=30;expand=true" },
        { "vision.perspective_mask", "startpoints=0,0,36,0,36,28,0,28;endpoints=3,2,33,1,35,26,1,27" },
        { "vision.elastic_mask", "fill=1" },
        { "vision.elastic_bounding_boxes", "format=xywh;canvas_size=29,37" },
    };
    if (c->index > 0)
        return 0;
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        if (strcmp(cfg[i].op, c->op) == 0) {
            const int boxes = strstr(c->op, "boxes") != NULL;
            c->in[0] = boxes ? cf_uniform(c, c->dtype, 2, (const int64_t[]){ 19, 4 }, 0, -5, 35)
                             : cf_uniform(c, c->dtype, 3, (const int64_t[]){ 2, 29, 37 }, 0, 0, 5.99);
            c->n_in = 1;
            if (strstr(c->op, "elastic")) {
                c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, 29, 37, 2 }, 1, -0.1, 0.1);
                c->n_in = 2;
            }
            cf_attrs(c, "%s", cfg[i].attrs);
            cf_tol_all(c, CF_BYTES, 0, 0);
            cf_what(c, "%s", cfg[i].attrs);
            return 1;
        }
    return 0;
}

#define AUGMENT_COVERED                                                                            \
    "tests/vision/transforms_augment: cpu only, torchvision's results from its recorded draws, and seeded"

/* Detection module (cpu only; its cases keep it under the harness for any
** backend that adds kernels): the transform of two images of different
** sizes, its resize and postprocess, the anchors of two levels, the box
** decode with the RoI heads' weights, the RPN's proposals of two images,
** boxes pooled from three levels, the detections of two images.
** Tolerances: sizes, anchors, offsets and postprocessed boxes are the same
** float32 operations (bytes); resized pixels within 1e-5 (vision.resize's
** taps), decoded boxes and proposals within 1e-4 relative (exp in another
** library: an ulp), nms picks on those boxes: the same rows. */
static int detection_make(cf_case *c)
{
    if (c->index >= 1)
        return 0;
    cf_tol_all(c, CF_BYTES, 0, 0);
    if (strcmp(c->op, "vision.rcnn_transform") == 0) {
        const int64_t n = 3 * 11 * 17 + 3 * 9 * 5;
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 1, &n, 0, 0, 1);
        c->in[1] = cf_index(c, LOOM_DTYPE_I64, 1, (const int64_t[]){ 3 }, (const int64_t[]){ 0, 3 * 11 * 17, n });
        c->in[2] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 11, 17, 9, 5 });
        c->n_in = 3;
        cf_attrs(c, "min_size=20;max_size=40");
        c->tol[0] = (cf_tol){ CF_CLOSE, 1e-5, 1e-5 };
        cf_what(c, "[3,11,17] and [3,9,5], min_size 20, max_size 40");
    } else if (strcmp(c->op, "vision.rcnn_resize") == 0) {
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 3, (const int64_t[]){ 3, 13, 17 }, 0, -2, 2);
        c->n_in = 1;
        cf_attrs(c, "min_size=20;max_size=24");
        cf_tol_all(c, CF_CLOSE, 1e-5, 1e-5);
        cf_what(c, "[3,13,17], min_size 20, max_size 24");
    } else if (strcmp(c->op, "vision.rcnn_postprocess_boxes") == 0) {
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 17, 4 }, 0, 0, 40);
        c->n_in = 1;
        cf_attrs(c, "image_size=40,53;original_size=31,17");
        cf_what(c, "17 boxes, 40 x 53 to 31 x 17");
    } else if (strcmp(c->op, "vision.anchor_generator") == 0) {
        c->in[0] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 8, 10, 4, 5 });
        c->n_in = 1;
        cf_attrs(c, "sizes=32,40,64,80;aspect_ratios=0.5,1,2;image_size=64,80");
        cf_what(c, "2 levels, 2 sizes x 3 ratios");
    } else if (strcmp(c->op, "vision.box_coder_decode") == 0) {
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 29, 8 }, 0, -3, 6);
        c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 29, 4 }, 1, 0, 50);
        c->n_in = 2;
        cf_attrs(c, "weights=10,10,5,5");
        cf_tol_all(c, CF_CLOSE, 1e-4, 1e-4);
        cf_what(c, "29 boxes x 2 classes, weights 10,10,5,5");
    } else if (strcmp(c->op, "vision.multiscale_roi_align") == 0) {
        double b[4 * 14];
        for (int i = 0; i < 14; i++) {
            const double x = cf_draw(c, 0, 3 * (uint64_t)i) * 40, y = cf_draw(c, 0, 3 * (uint64_t)i + 1) * 40;
            const double side = 4 + cf_draw(c, 0, 3 * (uint64_t)i + 2) * 120;
            b[4 * i] = x;
            b[4 * i + 1] = y;
            b[4 * i + 2] = x + side;
            b[4 * i + 3] = y + side * 0.7;
        }
        c->in[0] = cf_values(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 14, 4 }, b);
        c->in[1] = cf_index(c, LOOM_DTYPE_I64, 1, (const int64_t[]){ 3 }, (const int64_t[]){ 0, 8, 14 });
        c->in[2] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 64, 60, 50, 64 });
        c->in[3] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 3, 16, 16 }, 1, -1, 1);
        c->in[4] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 3, 8, 8 }, 2, -1, 1);
        c->in[5] = cf_uniform(c, LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 3, 4, 4 }, 3, -1, 1);
        c->n_in = 6;
        cf_attrs(c, "output_size=5");
        cf_what(c, "14 boxes on 2 images, 3 levels, 5 x 5");
    } else if (strcmp(c->op, "vision.rcnn_postprocess_detections") == 0) {
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 30, 4 }, 0, -3, 3);
        c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 30, 16 }, 1, -1, 1);
        double p[120];
        for (int i = 0; i < 30; i++) {
            const double x = cf_draw(c, 2, 2 * (uint64_t)i) * 40, y = cf_draw(c, 2, 2 * (uint64_t)i + 1) * 30;
            p[4 * i] = x;
            p[4 * i + 1] = y;
            p[4 * i + 2] = x + 3 + (i % 11);
            p[4 * i + 3] = y + 2 + (i % 7);
        }
        c->in[2] = cf_values(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 30, 4 }, p);
        c->in[3] = cf_index(c, LOOM_DTYPE_I64, 1, (const int64_t[]){ 3 }, (const int64_t[]){ 0, 18, 30 });
        c->in[4] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 40, 50, 35, 45 });
        c->n_in = 5;
        cf_attrs(c, "score_thresh=0.2;detections_per_img=9");
        c->tol[0] = c->tol[1] = (cf_tol){ CF_CLOSE, 1e-4, 1e-4 };
        cf_what(c, "30 proposals on 2 images, 4 classes, 9 kept");
    } else {
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 2, 60 }, 0, -4, 4);
        c->in[1] = cf_uniform(c, LOOM_DTYPE_F32, 3, (const int64_t[]){ 2, 60, 4 }, 1, -1, 1);
        double a[240];
        for (int i = 0; i < 60; i++) {
            const double x = cf_draw(c, 2, 2 * (uint64_t)i) * 40, y = cf_draw(c, 2, 2 * (uint64_t)i + 1) * 30;
            a[4 * i] = x;
            a[4 * i + 1] = y;
            a[4 * i + 2] = x + 4 + (i % 7);
            a[4 * i + 3] = y + 3 + (i % 5);
        }
        c->in[2] = cf_values(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 60, 4 }, a);
        c->in[3] = cf_index(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, (const int64_t[]){ 30, 40, 25, 33 });
        c->n_in = 4;
        cf_attrs(c, "num_anchors_per_level=40,20;pre_nms_top_n=25;post_nms_top_n=12;nms_thresh=0.5");
        c->tol[0] = c->tol[1] = (cf_tol){ CF_CLOSE, 1e-4, 1e-4 };
        cf_what(c, "2 images, 60 anchors in 2 levels, top 25, nms 0.5, 12 kept");
    }
    return 1;
}

const cf_gen cf_vision_gens[] = {
    { "vision.nms", F32_F64, N_BOX_SIZES, nms_make, NULL },
    { "vision.batched_nms", F32_F64, N_BOX_SIZES, nms_make, NULL },
    { "vision.box_iou", FLOATS3, N_BOX_SIZES, pair_make, NULL },
    { "vision.generalized_box_iou", FLOATS3, N_BOX_SIZES, pair_make, NULL },
    { "vision.distance_box_iou", FLOATS3, N_BOX_SIZES, pair_make, NULL },
    { "vision.complete_box_iou", FLOATS3, N_BOX_SIZES, pair_make, NULL },
    { "vision.generalized_box_iou_loss", FLOATS3, N_BOX_SIZES, loss_make, NULL },
    { "vision.distance_box_iou_loss", FLOATS3, N_BOX_SIZES, loss_make, NULL },
    { "vision.complete_box_iou_loss", FLOATS3, N_BOX_SIZES, loss_make, NULL },
    { "vision.box_convert", FLOATS3, N_BOX_SIZES, convert_make, NULL },
    { "vision.box_area", FLOATS3, N_BOX_SIZES, area_make, NULL },
    { "vision.clip_boxes_to_image", FLOATS3, N_BOX_SIZES, clip_make, NULL },
    { "vision.remove_small_boxes", FLOATS3, N_BOX_SIZES, small_make, NULL },
    { "vision.roi_align", FLOATS3, 4, roi_forward_make, NULL },
    { "vision.roi_align_backward", FLOATS3, 4, roi_backward_make, NULL },
    { "vision.roi_pool", F32_F64, 4, roi_forward_make, NULL },
    { "vision.roi_pool_backward", F32_F64, 4, roi_backward_make, NULL },
    { "vision.ps_roi_align", FLOATS3, 4, roi_forward_make, NULL },
    { "vision.ps_roi_align_backward", FLOATS3, 4, roi_backward_make, NULL },
    { "vision.ps_roi_pool", F32_F64, 4, roi_forward_make, NULL },
    { "vision.ps_roi_pool_backward", F32_F64, 4, roi_backward_make, NULL },
    { "vision.deform_conv2d", FLOATS3, N_CONV_CFGS, deform_make, NULL },
    { "vision.deform_conv2d_backward", FLOATS3, N_CONV_CFGS, deform_make, NULL },
    { "vision.drop_block2d", FLOATS3, 6, drop_block_make, NULL },
    { "vision.drop_block3d", FLOATS3, 6, drop_block_make, NULL },
    { "vision.stochastic_depth", FLOATS3, 3, stochastic_depth_make, NULL },
    { "vision.conv2d", BIT(F32), N_LAYER_CONVS, layer_conv_make, NULL },
    { "vision.batch_norm", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.relu", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.relu6", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.silu", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.gelu", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.hardswish", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.sigmoid", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.max_pool2d", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.avg_pool2d", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.adaptive_avg_pool2d", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.linear", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.softmax", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.layer_norm", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.group_norm", BIT(F32), 2, layer_simple_make, NULL },
    { "vision.conv_transpose2d", BIT(F32), 2, conv_transpose_make, NULL },
    { "vision.paste_masks", BIT(F32), 1, paste_masks_make, NULL },
    { "vision.squeeze_excitation", BIT(F32), 2, layer_block_make, NULL },
    { "vision.channel_shuffle", BIT(F32), 2, layer_block_make, NULL },
    /* the models: one cpu kernel (a sequence of dispatched layer ops, each
    ** with its own cases above), made from weights of tens of MB */
    { "vision.resnet18", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnet34", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnet50", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnet101", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnet152", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnext50_32x4d", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnext101_32x8d", 0, 0, NULL, MODEL_COVERED },
    { "vision.resnext101_64x4d", 0, 0, NULL, MODEL_COVERED },
    { "vision.wide_resnet50_2", 0, 0, NULL, MODEL_COVERED },
    { "vision.wide_resnet101_2", 0, 0, NULL, MODEL_COVERED },
    { "vision.weights_meta", 0, 0, NULL, "tests/vision/models/test_weights_meta.c: cpu only, a table as JSON" },
#define REGNET_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/models/test_models_regnet.c: cpu:ops only, " \
                             "dispatching the layer ops (each compared across backends above)" },
    REGNET_COVERED(regnet_y_400mf) REGNET_COVERED(regnet_y_800mf) REGNET_COVERED(regnet_y_1_6gf)
    REGNET_COVERED(regnet_y_3_2gf) REGNET_COVERED(regnet_y_8gf) REGNET_COVERED(regnet_y_16gf)
    REGNET_COVERED(regnet_y_32gf) REGNET_COVERED(regnet_y_128gf) REGNET_COVERED(regnet_x_400mf)
    REGNET_COVERED(regnet_x_800mf) REGNET_COVERED(regnet_x_1_6gf) REGNET_COVERED(regnet_x_3_2gf)
    REGNET_COVERED(regnet_x_8gf) REGNET_COVERED(regnet_x_16gf) REGNET_COVERED(regnet_x_32gf)
#undef REGNET_COVERED
#define EFFNET_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/models/test_models_efficientnet.c: cpu:ops " \
                             "only, dispatching the layer ops (each compared across backends above)" },
    EFFNET_COVERED(efficientnet_v2_s) EFFNET_COVERED(efficientnet_v2_m) EFFNET_COVERED(efficientnet_v2_l)
#undef EFFNET_COVERED
#define SMALL_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/models/test_models_shufflenet_mnasnet.c: " \
                            "cpu:ops only, dispatching the layer ops (each compared across backends above)" },
    SMALL_COVERED(shufflenet_v2_x0_5) SMALL_COVERED(shufflenet_v2_x1_0) SMALL_COVERED(shufflenet_v2_x1_5)
    SMALL_COVERED(shufflenet_v2_x2_0) SMALL_COVERED(mnasnet0_5) SMALL_COVERED(mnasnet0_75)
    SMALL_COVERED(mnasnet1_0) SMALL_COVERED(mnasnet1_3)
#undef SMALL_COVERED
#define TINY_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/models/test_models_tiny.c: cpu:ops only, " \
                           "dispatching the layer ops (each compared across backends above)" },
    TINY_COVERED(resnet) TINY_COVERED(regnet) TINY_COVERED(efficientnet_v2) TINY_COVERED(shufflenet_v2)
    TINY_COVERED(mnasnet)
#undef TINY_COVERED
#define FRCNN_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/detection/test_fasterrcnn.c: cpu:ops only, " \
                            "dispatching the layer and detection ops (each with its own cases)" },
    FRCNN_COVERED(fasterrcnn) FRCNN_COVERED(fasterrcnn_resnet50_fpn) FRCNN_COVERED(fasterrcnn_resnet50_fpn_v2)
    FRCNN_COVERED(fasterrcnn_rpn) FRCNN_COVERED(fasterrcnn_resnet50_fpn_rpn)
    FRCNN_COVERED(fasterrcnn_resnet50_fpn_v2_rpn)
#undef FRCNN_COVERED
#define MRCNN_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/detection/test_maskrcnn.c: cpu:ops only, " \
                            "dispatching the layer and detection ops (each with its own cases)" },
    MRCNN_COVERED(maskrcnn) MRCNN_COVERED(maskrcnn_resnet50_fpn) MRCNN_COVERED(maskrcnn_resnet50_fpn_v2)
#undef MRCNN_COVERED
#define RETINA_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/detection/test_retinanet_model.c: cpu:ops " \
                             "only, dispatching the layer and detection ops (each with its own cases)" },
    RETINA_COVERED(retinanet) RETINA_COVERED(retinanet_resnet50_fpn) RETINA_COVERED(retinanet_resnet50_fpn_v2)
    RETINA_COVERED(retinanet_features) RETINA_COVERED(retinanet_resnet50_fpn_features)
    RETINA_COVERED(retinanet_resnet50_fpn_v2_features)
#undef RETINA_COVERED
#define FRCNN_MNV3_COVERED(id) { "vision." #id, 0, 0, NULL, "tests/vision/detection/test_fasterrcnn_mobilenet.c: " \
                                 "cpu:ops only, dispatching the layer and detection ops (each with its own cases)" },
    FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3) FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3_large_fpn)
    FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3_large_320_fpn) FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3_rpn)
    FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3_large_fpn_rpn) FRCNN_MNV3_COVERED(fasterrcnn_mobilenet_v3_large_320_fpn_rpn)
#undef FRCNN_MNV3_COVERED
    { "vision.vit_encoder_block", 0, 0, NULL, "tests/vision/models_vit: cpu only, torchvision goldens" },
    { "vision.vit_b_16", 0, 0, NULL, MODEL_COVERED },
    { "vision.vit_b_32", 0, 0, NULL, MODEL_COVERED },
    { "vision.vit_l_16", 0, 0, NULL, MODEL_COVERED },
    { "vision.vit_h_14", 0, 0, NULL, MODEL_COVERED },
    { "vision.vision_transformer", 0, 0, NULL, MODEL_COVERED },
    { "vision.swin_window_attention", 0, 0, NULL, "tests/vision/models_swin: cpu only, torchvision goldens" },
    { "vision.swin_patch_merging", 0, 0, NULL, "tests/vision/models_swin: cpu only, torchvision goldens" },
    { "vision.swin_mlp", 0, 0, NULL, "tests/vision/models_swin: cpu only, against its ops" },
    { "vision.swin_t", 0, 0, NULL, MODEL_COVERED },
    { "vision.swin_s", 0, 0, NULL, MODEL_COVERED },
    { "vision.swin_b", 0, 0, NULL, MODEL_COVERED },
    { "vision.swin_transformer", 0, 0, NULL, MODEL_COVERED },
    /* image_io: cpu kernels only (files are decoded on the host); the goldens are torchvision's */
    { "vision.decode_jpeg", 0, 0, NULL, "tests/vision/image_io/test_image_io_decode.c: cpu only, torchvision goldens" },
    { "vision.decode_png", 0, 0, NULL, "tests/vision/image_io/test_image_io_decode.c: cpu only, torchvision goldens" },
    { "vision.decode_image", 0, 0, NULL, "tests/vision/image_io/test_image_io_decode.c: cpu only, torchvision goldens" },
    { "vision.encode_jpeg", 0, 0, NULL, "tests/vision/image_io/test_image_io_encode.c: cpu only, torchvision's bytes" },
    { "vision.encode_png", 0, 0, NULL, "tests/vision/image_io/test_image_io_encode.c: cpu only, torchvision's bytes" },
    { "vision.read_file", 0, 0, NULL, "tests/vision/image_io/test_image_io_encode.c: cpu only, a file's bytes" },
    { "vision.resize", BIT(U8) | BIT(F32), 4, resize_make, NULL },
    { "vision.resize_mask", BIT(U8) | BIT(I64), 2, resize_mask_make, NULL },
    { "vision.resize_bounding_boxes", BIT(F32), 1, resize_boxes_make, NULL },
    { "vision.crop", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.center_crop", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.resized_crop", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.pad", BIT(U8) | BIT(F32), 2, geometry_make, NULL },
    { "vision.horizontal_flip", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.vertical_flip", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.affine", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.rotate", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.perspective", BIT(U8) | BIT(F32), 1, geometry_make, NULL },
    { "vision.elastic", BIT(U8) | BIT(F32), 1, elastic_make, NULL },
    { "vision.convert_bounding_box_format", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.clamp_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.sanitize_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.horizontal_flip_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.vertical_flip_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.crop_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.center_crop_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.resized_crop_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.pad_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.affine_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.rotate_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.perspective_bounding_boxes", BIT(F32), 1, transform_boxes_make, NULL },
    { "vision.elastic_bounding_boxes", BIT(F32), 1, mask_warp_make, NULL },
    { "vision.affine_mask", BIT(U8) | BIT(I64), 1, mask_warp_make, NULL },
    { "vision.rotate_mask", BIT(U8) | BIT(I64), 1, mask_warp_make, NULL },
    { "vision.perspective_mask", BIT(U8) | BIT(I64), 1, mask_warp_make, NULL },
    { "vision.elastic_mask", BIT(U8) | BIT(I64), 1, mask_warp_make, NULL },
    { "vision.adjust_brightness", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.adjust_sharpness", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    /* the augmentations: cpu kernels only (chains of the ops above, by op_call) */
    { "vision.augmix", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.rand_augment", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.trivial_augment_wide", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.auto_augment", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.random_erasing", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.mixup", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.cutmix", 0, 0, NULL, AUGMENT_COVERED },
    { "vision.transform_sample", 0, 0, NULL,
      "tests/vision/transforms_sample: cpu only, a pipeline of the ops above; torchvision's Compose from its draws" },
    { "vision.adjust_contrast", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.adjust_saturation", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.adjust_hue", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.adjust_gamma", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.autocontrast", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.equalize", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.posterize", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.solarize", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.invert", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.gaussian_blur", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.to_dtype", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.rgb_to_grayscale", BIT(U8) | BIT(F32), 1, colour_make, NULL },
    { "vision.normalize", BIT(F32), 1, colour_make, NULL },
    { "vision.preprocess", BIT(U8) | BIT(F32), 2, preprocess_make, NULL },
    { "vision.rcnn_transform", BIT(F32), 1, detection_make, NULL },
    { "vision.rcnn_resize", BIT(F32), 1, detection_make, NULL },
    { "vision.rcnn_postprocess_boxes", BIT(F32), 1, detection_make, NULL },
    { "vision.anchor_generator", BIT(I64), 1, detection_make, NULL },
    { "vision.box_coder_decode", BIT(F32), 1, detection_make, NULL },
    { "vision.rpn_proposals", BIT(F32), 1, detection_make, NULL },
    { "vision.multiscale_roi_align", BIT(F32), 1, detection_make, NULL },
    { "vision.rcnn_postprocess_detections", BIT(F32), 1, detection_make, NULL },
    { "vision.retinanet_head", BIT(F32), 1, retinanet_head_make, NULL },
    { "vision.retinanet_postprocess", BIT(F32), 1, retinanet_make, NULL },
};
const size_t cf_vision_n_gens = sizeof cf_vision_gens / sizeof cf_vision_gens[0];
