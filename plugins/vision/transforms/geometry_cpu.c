/* SPDX-License-Identifier: BSD-3-Clause */
/*
** geometry_cpu.c - the cpu kernels of crop, center_crop, resized_crop, pad
** and the flips, on images and masks [..., H, W] of any element dtype.
**
** Each is one window copy: output (y, x) takes input (iy[y], ix[x]), or the
** fill value of its channel where either index is -1 (outside the image).
** The index maps follow torchvision: crop pads with zeros where the window
** leaves the image (crop_image); center_crop pads (w-W)//2 left and
** (w-W+1)//2 right when the crop is larger, then anchors at
** int(round((H-h)/2)) with Python's round (half to even); pad's edge,
** reflect (edge pixel not repeated) and symmetric (repeated) modes are
** torch.nn.functional.pad's replicate / reflect and torchvision's
** _pad_symmetric. Rows run over the core's pool; contiguous runs of a row
** are copied with memcpy.
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

/* ---------------------------------------------------------- window copy */

typedef struct window_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t esize;
    int64_t in_h, in_w, out_h, out_w, channels;
    const int64_t *iy, *ix;     /* -1: fill */
    const uint8_t *fill;        /* channels * esize bytes */
} window_job;

static void window_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const window_job *j = user;
    const size_t es = j->esize;
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->out_h, y = r % j->out_h;
        const uint8_t *fill = j->fill + (size_t)(plane % j->channels) * es;
        uint8_t *d = j->dst + (size_t)r * (size_t)j->out_w * es;
        const uint8_t *s = j->iy[y] < 0 ? NULL : j->src + (size_t)(plane * j->in_h + j->iy[y]) * (size_t)j->in_w * es;
        int64_t x = 0;
        while (x < j->out_w) {
            if (!s || j->ix[x] < 0) {
                memcpy(d + (size_t)x * es, fill, es);
                x++;
                continue;
            }
            int64_t n = 1;
            while (x + n < j->out_w && j->ix[x + n] == j->ix[x] + n)
                n++;
            if (n > 1) {
                memcpy(d + (size_t)x * es, s + (size_t)j->ix[x] * es, (size_t)n * es);
            } else {
                memcpy(d + (size_t)x * es, s + (size_t)j->ix[x] * es, es);
            }
            x += n;
        }
    }
}

/* The output [..., out_h, out_w] of image x. */
static loom_status alloc_window(loom_call *call, const loom_tensor *x, int64_t out_h, int64_t out_w,
                                loom_tensor **out)
{
    int64_t shape[LOOM_MAX_NDIM];
    for (int32_t d = 0; d < x->ndim; d++)
        shape[d] = x->shape[d];
    shape[x->ndim - 2] = out_h;
    shape[x->ndim - 1] = out_w;
    return pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, shape, out);
}

static loom_status check_image(const loom_tensor *x)
{
    char b[160];
    if (x->ndim < 2)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., H, W] (rank >= 2)",
                             vision_describe(x, b, sizeof b));
    return LOOM_OK;
}

static int64_t channels_of(const loom_tensor *x) { return x->ndim >= 3 && x->shape[x->ndim - 3] > 0 ? x->shape[x->ndim - 3] : 1; }

/* Copy the window of x given by the maps into out (allocated), with the
** fill bytes (NULL: zeros). */
static loom_status window_copy(loom_call *call, const loom_tensor *x, const loom_tensor *out, const int64_t *iy,
                               const int64_t *ix, const uint8_t *fill)
{
    const int64_t out_h = out->shape[out->ndim - 2], out_w = out->shape[out->ndim - 1];
    const int64_t in_h = x->shape[x->ndim - 2], in_w = x->shape[x->ndim - 1];
    const size_t es = pk_host->dtype_size(loom_tensor_dtype_of(x));
    const int64_t channels = fill ? channels_of(x) : 1;
    static const uint8_t zeros[8] = { 0 };
    if (loom_numel(out) == 0)
        return LOOM_OK;
    const int64_t planes = loom_numel(out) / (out_h * out_w);
    window_job job = { loom_data(x), loom_data(out), es, in_h, in_w, out_h, out_w, channels, iy, ix,
                       fill ? fill : zeros };
    if (loom_numel(x) == 0)   /* every index is -1 then (the maps see an empty image) */
        job.src = NULL;
    const int64_t grain = out_w >= 8192 ? 1 : 8192 / out_w;
    return pk_host->parallel_for(call->ctx, planes * out_h, grain, window_rows, &job);
}

/* ix/iy maps in scratch: n entries. */
static int64_t *index_map(loom_call *call, int64_t n)
{
    return pk_host->scratch(call->ctx, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

/* Window [start, start + n) of an axis of size in: index or -1 outside. */
static void window_map(int64_t *m, int64_t n, int64_t start, int64_t in)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = start + i;
        m[i] = s >= 0 && s < in ? s : -1;
    }
}

/* A crop of x at (top, left) of out_h x out_w, zeros outside. */
static loom_status crop_window(loom_call *call, const loom_tensor *x, int64_t top, int64_t left, int64_t out_h,
                               int64_t out_w)
{
    loom_tensor *out;
    loom_status st = alloc_window(call, x, out_h, out_w, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t *iy = index_map(call, out_h), *ix = index_map(call, out_w);
    if (!iy || !ix)
        return LOOM_ENOMEM;
    window_map(iy, out_h, top, x->shape[x->ndim - 2]);
    window_map(ix, out_w, left, x->shape[x->ndim - 1]);
    return window_copy(call, x, out, iy, ix, NULL);
}

/* ------------------------------------------------------------------ ops */

loom_status vision_crop_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_image(x);
    if (st != LOOM_OK)
        return st;
    return crop_window(call, x, call->attrs[PK_ATTR(crop, top)].u.i, call->attrs[PK_ATTR(crop, left)].u.i,
                       call->attrs[PK_ATTR(crop, height)].u.i, call->attrs[PK_ATTR(crop, width)].u.i);
}

int64_t transforms_round_half(int64_t d)
{
    const int64_t fl = d >= 0 ? d / 2 : -((-d + 1) / 2);   /* floor(d / 2) */
    return (d % 2 == 0 || fl % 2 == 0) ? fl : fl + 1;
}

loom_status vision_center_crop_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *os = &call->attrs[PK_ATTR(center_crop, output_size)];
    loom_status st = check_image(x);
    if (st != LOOM_OK)
        return st;
    if (os->count != 1 && os->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'output_size' must be [s] or [h, w], not %lld values",
                             (long long)os->count);
    const int64_t ch = os->u.ints[0], cw = os->u.ints[os->count - 1];
    int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    if (loom_numel(x) == 0 && h > 0 && w > 0)   /* no planes: torchvision reshapes the empty image */
        return crop_window(call, x, 0, 0, ch, cw);
    if (h == 0 || w == 0) {
        char b[160];
        return pk_host->fail(LOOM_EINVAL, "'image' %s has no pixels to crop %lld x %lld from",
                             vision_describe(x, b, sizeof b), (long long)ch, (long long)cw);
    }
    int64_t top, left;
    center_crop_anchor(h, w, ch, cw, &top, &left);
    return crop_window(call, x, top, left, ch, cw);
}

void center_crop_anchor(int64_t h, int64_t w, int64_t ch, int64_t cw, int64_t *top, int64_t *left)
{
    int64_t pt = 0, pl = 0;
    if (ch > h || cw > w) {
        pl = cw > w ? (cw - w) / 2 : 0;
        pt = ch > h ? (ch - h) / 2 : 0;
        w += cw > w ? cw - w : 0;
        h += ch > h ? ch - h : 0;
        if (cw == w && ch == h) {
            *top = -pt;
            *left = -pl;
            return;
        }
    }
    *top = transforms_round_half(h - ch) - pt;
    *left = transforms_round_half(w - cw) - pl;
}

loom_status vision_resized_crop_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_image(x);
    if (st != LOOM_OK)
        return st;
    const int64_t top = call->attrs[PK_ATTR(resized_crop, top)].u.i, left = call->attrs[PK_ATTR(resized_crop, left)].u.i;
    const int64_t ch = call->attrs[PK_ATTR(resized_crop, height)].u.i, cw = call->attrs[PK_ATTR(resized_crop, width)].u.i;
    const resize_mode mode = resize_mode_of(call->attrs[PK_ATTR(resized_crop, interpolation)].u.s);
    const loom_dtype dt = loom_tensor_dtype_of(x);
    char b[160];
    if (ch == 0 || cw == 0)
        return pk_host->fail(LOOM_EINVAL, "'height' and 'width' must be > 0 (a %lld x %lld crop cannot be resized)",
                             (long long)ch, (long long)cw);
    if (mode >= RESIZE_BILINEAR && dt != LOOM_DTYPE_U8 && dt != LOOM_DTYPE_F32)
        return pk_host->fail(LOOM_EINVAL, "'interpolation' %s needs a uint8 or float32 'image', not %s",
                             call->attrs[PK_ATTR(resized_crop, interpolation)].u.s, vision_describe(x, b, sizeof b));
    int64_t out_h, out_w;
    if ((st = resize_output_size_of(&call->attrs[PK_ATTR(resized_crop, size)], NULL, ch, cw, &out_h, &out_w)) !=
        LOOM_OK)
        return st;
    loom_tensor *out;
    if ((st = alloc_window(call, x, out_h, out_w, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    /* the crop into scratch, then the resize of its planes */
    const size_t es = pk_host->dtype_size(dt);
    const int64_t planes = loom_numel(out) / (out_h * out_w);
    void *crop = pk_host->scratch(call->ctx, (size_t)(planes * ch * cw) * es);
    int64_t *iy = index_map(call, ch), *ix = index_map(call, cw);
    if (!crop || !iy || !ix)
        return LOOM_ENOMEM;
    window_map(iy, ch, top, x->shape[x->ndim - 2]);
    window_map(ix, cw, left, x->shape[x->ndim - 1]);
    loom_tensor view = *out;   /* the crop's geometry for window_copy: same leading dims */
    int64_t vshape[LOOM_MAX_NDIM];
    memcpy(vshape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    vshape[out->ndim - 2] = ch;
    vshape[out->ndim - 1] = cw;
    view.shape = vshape;
    view.strides = NULL;
    view.data = crop;
    view.byte_offset = 0;
    if ((st = window_copy(call, x, &view, iy, ix, NULL)) != LOOM_OK)
        return st;
    const int antialias = mode >= RESIZE_BILINEAR && call->attrs[PK_ATTR(resized_crop, antialias)].u.b;
    return resize_planes(call->ctx, crop, loom_data(out), dt, planes, ch, cw, out_h, out_w, mode, antialias);
}

/* The fill of channel c as dt's bytes (torch's float -> dtype conversion:
** truncation toward zero for the integer dtypes). */
static loom_status fill_bytes(loom_dtype dt, double v, uint8_t *out)
{
    switch (dt) {
    case LOOM_DTYPE_U8:
        if (v <= -1.0 || v >= 256.0)
            return pk_host->fail(LOOM_EINVAL, "'fill' %g does not fit the uint8 image", v);
        *out = (uint8_t)v;
        return LOOM_OK;
    case LOOM_DTYPE_BOOL:
        *out = v != 0.0;
        return LOOM_OK;
    case LOOM_DTYPE_I32: {
        if (v <= -2147483649.0 || v >= 2147483648.0)
            return pk_host->fail(LOOM_EINVAL, "'fill' %g does not fit the int32 image", v);
        const int32_t i = (int32_t)v;
        memcpy(out, &i, 4);
        return LOOM_OK;
    }
    case LOOM_DTYPE_I64: {
        if (v <= -9223372036854775808.0 || v >= 9223372036854775808.0)
            return pk_host->fail(LOOM_EINVAL, "'fill' %g does not fit the int64 image", v);
        const int64_t i = (int64_t)v;
        memcpy(out, &i, 8);
        return LOOM_OK;
    }
    default: {
        const float f = (float)v;
        memcpy(out, &f, 4);
        return LOOM_OK;
    }
    }
}

/* One axis of a pad: output i of [0, lo + n + hi) reads input m[i] (-1: fill). */
static loom_status pad_map(int64_t *m, int64_t n, int64_t lo, int64_t hi, const char *mode, const char *side)
{
    const int64_t total = lo + n + hi;
    if (strcmp(mode, "constant") != 0 && n == 0 && (lo > 0 || hi > 0))
        return pk_host->fail(LOOM_EINVAL, "'padding_mode' %s: the image has no %s to repeat", mode, side);
    if (strcmp(mode, "reflect") == 0 && (lo >= n || hi >= n) && (lo > 0 || hi > 0))
        return pk_host->fail(LOOM_EINVAL,
                             "'padding' %lld, %lld of the %s must be < its size %lld in reflect mode (torch's rule)",
                             (long long)lo, (long long)hi, side, (long long)n);
    if (strcmp(mode, "symmetric") == 0 && (lo > n || hi > n))
        return pk_host->fail(LOOM_EINVAL, "'padding' %lld, %lld of the %s must be <= its size %lld in symmetric mode",
                             (long long)lo, (long long)hi, side, (long long)n);
    for (int64_t i = 0; i < total; i++) {
        int64_t j = i - lo;
        if (j < 0 || j >= n) {
            if (mode[0] == 'c')
                j = -1;
            else if (mode[0] == 'e')
                j = j < 0 ? 0 : n - 1;
            else if (mode[0] == 'r')
                j = j < 0 ? -j : 2 * (n - 1) - j;
            else
                j = j < 0 ? -j - 1 : 2 * n - 1 - j;
        }
        m[i] = j;
    }
    return LOOM_OK;
}

loom_status vision_pad_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *pad = &call->attrs[PK_ATTR(pad, padding)], *fill = &call->attrs[PK_ATTR(pad, fill)];
    const char *mode = call->attrs[PK_ATTR(pad, padding_mode)].u.s;
    loom_status st = check_image(x);
    if (st != LOOM_OK)
        return st;
    int64_t l, t, r, bt;
    if (pad->count == 1) {
        l = t = r = bt = pad->u.ints[0];
    } else if (pad->count == 2) {
        l = r = pad->u.ints[0];
        t = bt = pad->u.ints[1];
    } else if (pad->count == 4) {
        l = pad->u.ints[0], t = pad->u.ints[1], r = pad->u.ints[2], bt = pad->u.ints[3];
    } else {
        return pk_host->fail(LOOM_EINVAL, "'padding' must have 1, 2 or 4 values, not %lld", (long long)pad->count);
    }
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1], channels = channels_of(x);
    const loom_dtype dt = loom_tensor_dtype_of(x);
    const size_t es = pk_host->dtype_size(dt);
    if (fill->is_set && fill->count != 1 && fill->count != channels)
        return pk_host->fail(LOOM_EINVAL, "'fill' has %lld values: one, or one per channel (%lld)",
                             (long long)fill->count, (long long)channels);
    if (fill->is_set && fill->count > 1 && strcmp(mode, "constant") != 0)
        return pk_host->fail(LOOM_EINVAL, "'padding_mode' %s is not supported if 'fill' is not scalar", mode);
    if (l > (INT64_C(1) << 30) || t > (INT64_C(1) << 30) || r > (INT64_C(1) << 30) || bt > (INT64_C(1) << 30))
        return pk_host->fail(LOOM_EINVAL, "'padding' values must be <= 2^30");
    loom_tensor *out;
    if ((st = alloc_window(call, x, t + h + bt, l + w + r, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t *iy = index_map(call, t + h + bt), *ix = index_map(call, l + w + r);
    uint8_t *fb = pk_host->scratch(call->ctx, (size_t)channels * es);
    if (!iy || !ix || !fb)
        return LOOM_ENOMEM;
    if ((st = pad_map(iy, h, t, bt, mode, "height")) != LOOM_OK || (st = pad_map(ix, w, l, r, mode, "width")) != LOOM_OK)
        return st;
    for (int64_t c = 0; c < channels; c++) {
        const double v = !fill->is_set ? 0.0 : fill->u.floats[fill->count == 1 ? 0 : c];
        if ((st = fill_bytes(dt, v, fb + (size_t)c * es)) != LOOM_OK)
            return st;
    }
    return window_copy(call, x, out, iy, ix, fb);
}

static loom_status flip(loom_call *call, int horizontal)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_image(x);
    if (st != LOOM_OK)
        return st;
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    loom_tensor *out;
    if ((st = alloc_window(call, x, h, w, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    int64_t *iy = index_map(call, h), *ix = index_map(call, w);
    if (!iy || !ix)
        return LOOM_ENOMEM;
    for (int64_t i = 0; i < h; i++)
        iy[i] = horizontal ? i : h - 1 - i;
    for (int64_t i = 0; i < w; i++)
        ix[i] = horizontal ? w - 1 - i : i;
    return window_copy(call, x, out, iy, ix, NULL);
}

loom_status vision_horizontal_flip_cpu(loom_call *call) { return flip(call, 1); }
loom_status vision_vertical_flip_cpu(loom_call *call) { return flip(call, 0); }
