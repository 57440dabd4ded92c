/* SPDX-License-Identifier: BSD-3-Clause */
/*
** affine_cpu.c - the cpu kernels of vision.affine and vision.rotate, as
** torchvision.transforms.v2.functional computes them:
**   - the inverse affine matrix in double (transforms/functional.py
**     _get_inverse_affine_matrix), rounded to float32 as theta;
**   - the affine grid (_affine_grid): base x, y from torch.linspace in
**     float32, theta^T divided by (w/2, h/2), the 3-term products summed
**     left to right;
**   - grid_sample with zeros padding and align_corners false, as PyTorch's
**     vectorised CPU kernel compiled for AVX2 (its multiply-adds contracted
**     to FMAs): x = fma(g + 1, size / 2, -0.5), nearest rounds half to
**     even, bilinear weights (1 - dx)(1 - dy) ... summed nw, ne, sw, se as
**     a chain of FMAs; a fill goes through a ones channel resampled alike (nearest: mask
**     < 0.5; bilinear: (v - fill) * mask + fill);
**   - uint8 images are resampled in float32 and rounded half to even.
**   - perspective: _perspective_grid's [x y 1] @ theta1^T / (w/2, h/2) over
**     [x y 1] @ (c6, c7, 1), minus 1, from pixel-centre base coordinates;
**     elastic: the identity grid plus the displacement;
**   - rotate: multiples of 90 degrees about the centre are exact rotations
**     (torch.rot90), as in rotate_image; expand sizes the output as
**     _compute_affine_output_size does.
**   - masks (vision.*_mask, [..., H, W] of any TRANSFORMS_ANY_DTYPES): the
**     image kernels' grid with nearest sampling, as torchvision's *_mask
**     kernels call them; the sampled element is copied (torchvision goes
**     through float32 and back, the same value for labels below 2^24) and a
**     pixel from outside takes the fill (default 0), rounded half to even
**     and saturated to the dtype.
** The grid's three products are summed left to right, as PyTorch's bmm
** (MKL) does for these shapes. With several planes (a batch, channels) the
** sampling of each output pixel (corner, inside flags, weights) is worked
** out once and shared by all of them (grid_tap).
*/
#include <math.h>
#include <string.h>

#include "transforms.h"

typedef enum grid_kind { GRID_AFFINE, GRID_PERSPECTIVE, GRID_ELASTIC } grid_kind;

typedef struct grid_job {
    const void *src;
    void *dst;
    int u8, nearest, has_fill;
    int mask;              /* copy elements of es bytes; fill_bytes from outside */
    size_t es;
    uint8_t fill_bytes[8];
    grid_kind kind;
    int64_t c, h, w, oh, ow, planes;
    float r[6];            /* R00 R01 R10 R11 R20 R21: [x y 1] @ R = (gx, gy) */
    float q[3];            /* perspective: the denominator's [c6, c7, 1] */
    const float *xs, *ys;  /* base grid */
    const float *disp;     /* elastic: [oh, ow, 2] */
    float *grid;           /* (ix, iy) of every output pixel, shared by the planes */
    struct grid_tap *taps; /* images: the sampling of every output pixel, shared by the planes */
    grid_lanes *lanes;     /* the same for the AVX2 row (NULL: the portable row alone) */
    const float *fill;     /* per channel */
} grid_job;

/* How one output pixel samples every plane, computed once from its grid
** point with the expressions of the per-plane code: the top-left corner's
** offset in a plane, which of the four corners (bit 0 nw, 1 ne, 2 sw, 3 se;
** nearest: bit 0 alone) lie inside, and the bilinear weights. */
typedef struct grid_tap {
    int64_t off;
    float nw, ne, sw, se;
    int32_t inside;
} grid_tap;

static inline float px(const grid_job *j, int64_t plane, int64_t y, int64_t x)
{
    if (x < 0 || y < 0 || x >= j->w || y >= j->h)
        return 0.0f;
    const int64_t i = (plane * j->h + y) * j->w + x;
    return j->u8 ? (float)((const uint8_t *)j->src)[i] : ((const float *)j->src)[i];
}

static inline float inside(const grid_job *j, int64_t y, int64_t x)
{
    return (x < 0 || y < 0 || x >= j->w || y >= j->h) ? 0.0f : 1.0f;
}

/* The sampling point (ix, iy), in input pixels, of output (oy, ox). */
static inline void grid_point(const grid_job *j, int64_t oy, int64_t ox, float *ix, float *iy)
{
    const float sw = (float)j->w / 2, sh = (float)j->h / 2;
    const float bx = j->xs[ox], by = j->ys[oy];
    float gx, gy;
    if (j->kind == GRID_ELASTIC) {
        gx = bx + j->disp[2 * (oy * j->ow + ox)];
        gy = by + j->disp[2 * (oy * j->ow + ox) + 1];
    } else {
        gx = bx * j->r[0] + by * j->r[2] + j->r[4];
        gy = bx * j->r[1] + by * j->r[3] + j->r[5];
        if (j->kind == GRID_PERSPECTIVE) {   /* output_grid1 / output_grid2 - 1 */
            const float den = bx * j->q[0] + by * j->q[1] + j->q[2];
            gx = gx / den - 1.0f;
            gy = gy / den - 1.0f;
        }
    }
    *ix = fmaf(gx + 1.0f, sw, -0.5f);   /* PyTorch's unnormalize, contracted as its AVX2 build is */
    *iy = fmaf(gy + 1.0f, sh, -0.5f);
}

/* masks: nearest sample copied, or the fill */
static void grid_rows_mask(const grid_job *j, int64_t begin, int64_t end)
{
    const uint8_t *src = j->src;
    uint8_t *dst = j->dst;
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->oh, oy = r % j->oh;
        for (int64_t ox = 0; ox < j->ow; ox++) {
            const float ix = j->grid[2 * (oy * j->ow + ox)], iy = j->grid[2 * (oy * j->ow + ox) + 1];
            const float nx = nearbyintf(ix), ny = nearbyintf(iy);
            uint8_t *d = dst + (size_t)(r * j->ow + ox) * j->es;
            if (nx >= 0 && ny >= 0 && nx < (float)j->w && ny < (float)j->h)
                memcpy(d, src + (size_t)((plane * j->h + (int64_t)ny) * j->w + (int64_t)nx) * j->es, j->es);
            else
                memcpy(d, j->fill_bytes, j->es);
        }
    }
}

/* Output element o: uint8 rounded half to even and saturated, or float32. */
__attribute__((always_inline)) static inline void grid_store(const grid_job *j, int64_t o, float v)
{
    if (j->u8) {
        const float q = rintf(v);
        ((uint8_t *)j->dst)[o] = (uint8_t)(!(q > 0.0f) ? 0 : q >= 255.0f ? 255 : (int)q);
    } else {
        ((float *)j->dst)[o] = v;
    }
}

/* The sampling of output pixel k from its grid point (see grid_tap). */
__attribute__((always_inline)) static inline void grid_tap_of(const grid_job *j, int64_t k)
{
    const float ix = j->grid[2 * k], iy = j->grid[2 * k + 1];
    grid_tap *t = &j->taps[k];
    memset(t, 0, sizeof *t);
    grid_lanes *l = j->lanes;
    if (l) {
        l->in[k] = l->top[k] = l->bottom[k] = 0;
        l->dx[k] = l->dy[k] = 0.0f;
    }
    if (j->nearest) {
        const float nx = nearbyintf(ix), ny = nearbyintf(iy);
        if (nx >= 0 && ny >= 0 && nx < (float)j->w && ny < (float)j->h) {
            t->off = (int64_t)ny * j->w + (int64_t)nx;
            t->inside = 1;
            if (l) {
                l->top[k] = (int32_t)t->off;
                l->in[k] = 1;
            }
        }
        return;
    }
    const float fx = floorf(ix), fy = floorf(iy);
    if (!(fx > -2.0f && fy > -2.0f && fx < (float)j->w + 1 && fy < (float)j->h + 1))
        return;   /* every corner outside (and no float-to-int overflow) */
    const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
    const float dw = ix - fx, de = 1.0f - dw, dn = iy - fy, ds = 1.0f - dn;
    t->nw = ds * de;
    t->ne = ds * dw;
    t->sw = dn * de;
    t->se = dn * dw;
    t->off = y0 * j->w + x0;
    const int in_x0 = x0 >= 0 && x0 < j->w, in_x1 = x0 + 1 >= 0 && x0 + 1 < j->w;
    const int in_y0 = y0 >= 0 && y0 < j->h, in_y1 = y0 + 1 >= 0 && y0 + 1 < j->h;
    t->inside = (in_y0 && in_x0) | (in_y0 && in_x1) << 1 | (in_y1 && in_x0) << 2 | (in_y1 && in_x1) << 3;
    if (l) {
        const int left_out = x0 == -1;   /* the pairs' reads start at the right corner */
        l->in[k] = t->inside | (left_out ? GRID_LANE_LEFT_OUT : 0);
        l->top[k] = t->inside & 3 ? (int32_t)(t->off + left_out) : 0;
        l->bottom[k] = t->inside & 12 ? (int32_t)(t->off + j->w + left_out) : 0;
        l->dx[k] = dw;
        l->dy[k] = dn;
    }
}

/* One output row of one plane from the shared taps: the same operations,
** in the same order, as the per-pixel code below, so the same bits. */
__attribute__((always_inline)) static inline void grid_row_from_taps(const grid_job *j, int64_t r)
{
    const int64_t plane = r / j->oh, oy = r % j->oh, ch = plane % j->c;
    const size_t base = (size_t)(plane * j->h * j->w);
    const uint8_t *s8 = (const uint8_t *)j->src + base;
    const float *sf = (const float *)j->src + base;
    const grid_tap *tap = j->taps + oy * j->ow;
    int64_t ox = 0;
    /* eight at a time, the row's tail below; uint8 reads of 4 bytes must stay
    ** inside the source (the planes after this one count) */
    if (j->lanes && (!j->u8 || j->lanes->row_end[oy] <= (j->planes - plane) * j->h * j->w))
        ox = grid_row_avx2(j->lanes, oy * j->ow, j->ow, j->u8, j->nearest, j->has_fill, j->fill[ch],
                           j->u8 ? (const void *)s8 : (const void *)sf,
                           (uint8_t *)j->dst + (size_t)(r * j->ow) * (j->u8 ? 1 : 4));
#define TAP_PX(o) (j->u8 ? (float)s8[o] : sf[o])
    for (; ox < j->ow; ox++) {
        const grid_tap *t = &tap[ox];
        const int in = t->inside;
        float v, m;
        if (j->nearest) {
            v = in ? TAP_PX(t->off) : 0.0f;
            m = in ? 1.0f : 0.0f;
            if (j->has_fill && m < 0.5f)
                v = j->fill[ch];
        } else {
            const float p00 = in & 1 ? TAP_PX(t->off) : 0.0f, p01 = in & 2 ? TAP_PX(t->off + 1) : 0.0f;
            const float p10 = in & 4 ? TAP_PX(t->off + j->w) : 0.0f, p11 = in & 8 ? TAP_PX(t->off + j->w + 1) : 0.0f;
            v = fmaf(p11, t->se, fmaf(p10, t->sw, fmaf(p01, t->ne, p00 * t->nw)));
            if (j->has_fill) {
                m = fmaf((float)(in >> 3 & 1), t->se,
                         fmaf((float)(in >> 2 & 1), t->sw, fmaf((float)(in >> 1 & 1), t->ne, (float)(in & 1) * t->nw)));
                v = (v - j->fill[ch]) * m + j->fill[ch];
            }
        }
        grid_store(j, r * j->ow + ox, v);
    }
#undef TAP_PX
}

/* With shared taps the rows go by blocks of GRID_BLOCK_ROWS output rows,
** all planes of a block in turn, so that the block's sampling stays in
** cache while every plane reads it: task t is block t / planes of plane
** t % planes. Otherwise task r is row r % oh of plane r / oh. */
enum { GRID_BLOCK_ROWS = 8 };

static int64_t grid_tasks(const grid_job *j)
{
    return j->taps ? (j->oh + GRID_BLOCK_ROWS - 1) / GRID_BLOCK_ROWS * j->planes : j->planes * j->oh;
}

static inline void grid_rows_body(const grid_job *j, int64_t begin, int64_t end)
{
    if (j->mask) {
        grid_rows_mask(j, begin, end);
        return;
    }
    if (j->taps) {   /* tasks (block, plane), see grid_tasks */
        for (int64_t t = begin; t < end; t++) {
            const int64_t plane = t % j->planes, y0 = t / j->planes * GRID_BLOCK_ROWS;
            const int64_t y1 = y0 + GRID_BLOCK_ROWS < j->oh ? y0 + GRID_BLOCK_ROWS : j->oh;
            for (int64_t oy = y0; oy < y1; oy++)
                grid_row_from_taps(j, plane * j->oh + oy);
        }
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->oh, oy = r % j->oh, ch = plane % j->c;
        for (int64_t ox = 0; ox < j->ow; ox++) {
            const float ix = j->grid[2 * (oy * j->ow + ox)], iy = j->grid[2 * (oy * j->ow + ox) + 1];
            float v, m = 1.0f;
            if (j->nearest) {
                const float nx = nearbyintf(ix), ny = nearbyintf(iy);
                const int ok = nx >= 0 && ny >= 0 && nx < (float)j->w && ny < (float)j->h;
                v = ok ? px(j, plane, (int64_t)ny, (int64_t)nx) : 0.0f;
                m = ok ? 1.0f : 0.0f;
                if (j->has_fill && m < 0.5f)
                    v = j->fill[ch];
            } else {
                const float fx = floorf(ix), fy = floorf(iy);
                if (!(fx > -2.0f && fy > -2.0f && fx < (float)j->w + 1 && fy < (float)j->h + 1)) {
                    v = 0.0f;   /* every corner outside (and no float-to-int overflow) */
                    m = 0.0f;
                } else {
                    const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
                    const float dw = ix - fx, de = 1.0f - dw, dn = iy - fy, ds = 1.0f - dn;
                    const float nw = ds * de, ne = ds * dw, swt = dn * de, se = dn * dw;
                    v = fmaf(px(j, plane, y0 + 1, x0 + 1), se,
                             fmaf(px(j, plane, y0 + 1, x0), swt,
                                  fmaf(px(j, plane, y0, x0 + 1), ne, px(j, plane, y0, x0) * nw)));
                    m = fmaf(inside(j, y0 + 1, x0 + 1), se,
                             fmaf(inside(j, y0 + 1, x0), swt, fmaf(inside(j, y0, x0 + 1), ne, inside(j, y0, x0) * nw)));
                }
                if (j->has_fill)
                    v = (v - j->fill[ch]) * m + j->fill[ch];
            }
            grid_store(j, r * j->ow + ox, v);
        }
    }
}

/* The sampling points of output rows [begin, end), once for all planes. */
static inline void grid_fill_body(const grid_job *j, int64_t begin, int64_t end)
{
    for (int64_t oy = begin; oy < end; oy++) {
        for (int64_t ox = 0; ox < j->ow; ox++) {
            grid_point(j, oy, ox, &j->grid[2 * (oy * j->ow + ox)], &j->grid[2 * (oy * j->ow + ox) + 1]);
            if (j->taps)
                grid_tap_of(j, oy * j->ow + ox);
        }
        if (j->lanes) {
            int64_t far = 0;
            for (int64_t k = oy * j->ow; k < (oy + 1) * j->ow; k++) {
                far = j->lanes->top[k] > far ? j->lanes->top[k] : far;
                far = j->lanes->bottom[k] > far ? j->lanes->bottom[k] : far;
            }
            j->lanes->row_end[oy] = far + 4;
        }
    }
}

static void grid_fill(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    grid_fill_body(user, begin, end);
}

/* The rows of the grid on the portable path (fmaf from the C library) and
** with FMA instructions: the same bits (a fused multiply-add is one
** rounding either way), the second much faster. */
static void grid_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    grid_rows_body(user, begin, end);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx2,fma"))) static void grid_rows_fma(void *user, int64_t begin, int64_t end,
                                                               int32_t thread_index)
{
    (void)thread_index;
    grid_rows_body(user, begin, end);
}
__attribute__((target("avx2,fma"))) static void grid_fill_fma(void *user, int64_t begin, int64_t end,
                                                               int32_t thread_index)
{
    (void)thread_index;
    grid_fill_body(user, begin, end);
}
#define HAVE_GRID_ROWS_FMA 1
#endif

void transforms_linspace(float start, float end, int64_t n, float *out)
{
    const float step = n > 1 ? (end - start) / (float)(n - 1) : 0.0f;
    const int64_t half = n / 2;
    for (int64_t i = 0; i < n; i++)
        out[i] = i < half ? start + step * (float)i : end - step * (float)(n - i - 1);
}

static void inverse_affine(const double center[2], double angle, const double tr[2], double scale,
                           const double shear[2], double m[6])
{
    transforms_affine_matrix(center, angle, tr, scale, shear, 1, m);
}

void transforms_affine_matrix(const double center[2], double angle, const double tr[2], double scale,
                              const double shear[2], int inverted, double m[6])
{
    const double rad = M_PI / 180.0;   /* math.radians: x * (pi / 180) */
    const double rot = angle * rad, sx = shear[0] * rad, sy = shear[1] * rad;
    const double a = cos(rot - sy) / cos(sy);
    const double b = -cos(rot - sy) * tan(sx) / cos(sy) - sin(rot);
    const double c = sin(rot - sy) / cos(sy);
    const double d = -sin(rot - sy) * tan(sx) / cos(sy) + cos(rot);
    if (!inverted) {
        m[0] = a * scale;
        m[1] = b * scale;
        m[2] = 0.0 * scale;
        m[3] = c * scale;
        m[4] = d * scale;
        m[5] = 0.0 * scale;
        m[2] += m[0] * (-center[0]) + m[1] * (-center[1]);
        m[5] += m[3] * (-center[0]) + m[4] * (-center[1]);
        m[2] += center[0] + tr[0];
        m[5] += center[1] + tr[1];
        return;
    }
    m[0] = d / scale;
    m[1] = -b / scale;
    m[2] = 0.0 / scale;
    m[3] = -c / scale;
    m[4] = a / scale;
    m[5] = 0.0 / scale;
    m[2] += m[0] * (-center[0] - tr[0]) + m[1] * (-center[1] - tr[1]);
    m[5] += m[3] * (-center[0] - tr[0]) + m[4] * (-center[1] - tr[1]);
    m[2] += center[0];
    m[5] += center[1];
}

/* The fill of a mask: one value, rounded half to even for integer dtypes
** and saturated to the dtype (bool: nonzero is true). */
static loom_status mask_fill_bytes(const loom_attr_value *fill, loom_dtype dt, uint8_t out[8])
{
    memset(out, 0, 8);
    if (!fill->is_set)
        return LOOM_OK;
    if (fill->count != 1)
        return pk_host->fail(LOOM_EINVAL, "'fill' of a mask is one value, not %lld", (long long)fill->count);
    const double v = fill->u.floats[0], r = nearbyint(v);
    switch (dt) {
    case LOOM_DTYPE_F32: {
        const float f = (float)v;
        memcpy(out, &f, sizeof f);
        break;
    }
    case LOOM_DTYPE_U8:
        out[0] = (uint8_t)(r <= 0 ? 0 : r >= 255 ? 255 : (int)r);
        break;
    case LOOM_DTYPE_BOOL:
        out[0] = r != 0;
        break;
    case LOOM_DTYPE_I32: {
        const int32_t i = (int32_t)(r <= INT32_MIN ? INT32_MIN : r >= INT32_MAX ? INT32_MAX : r);
        memcpy(out, &i, sizeof i);
        break;
    }
    default: {   /* I64 */
        const int64_t i = r <= -9.2e18 ? INT64_MIN : r >= 9.2e18 ? INT64_MAX : (int64_t)r;
        memcpy(out, &i, sizeof i);
        break;
    }
    }
    return LOOM_OK;
}

static loom_status check_fill(const loom_attr_value *fill, int64_t c)
{
    if (fill->is_set && fill->count != 1 && fill->count != c)
        return pk_host->fail(LOOM_EINVAL, "'fill' has %lld values: one, or one per channel (%lld)",
                             (long long)fill->count, (long long)c);
    return LOOM_OK;
}

/* An image [..., C, H, W] (mask = 0) or a mask [..., H, W] (mask = 1). */
static loom_status check_input(const loom_tensor *x, int mask)
{
    char b[160];
    const char *name = mask ? "mask" : "image";
    if (x->ndim < (mask ? 2 : 3))
        return pk_host->fail(LOOM_EINVAL, mask ? "'mask' %s must be [..., H, W] (rank >= 2)"
                                               : "'image' %s must be [..., C, H, W] (rank >= 3)",
                             vision_describe(x, b, sizeof b));
    if (loom_numel(x) > 0 && (x->shape[x->ndim - 2] == 0 || x->shape[x->ndim - 1] == 0))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s has no pixels", name, vision_describe(x, b, sizeof b));
    return LOOM_OK;
}

/* Resample input 0 (an image, or a mask when mask = 1: nearest, one fill)
** on the grid of kind through m (affine: the inverse matrix; perspective:
** the 8 coefficients) or the displacement disp, into oh x ow. */
static loom_status grid_transform_kind(loom_call *call, grid_kind kind, const double m[8], const float *disp,
                                       int64_t oh, int64_t ow, int nearest, const loom_attr_value *fill, int mask)
{
    const loom_tensor *x = call->inputs[0];
    const loom_dtype dt = loom_tensor_dtype_of(x);
    grid_job j = { 0 };
    j.u8 = dt == LOOM_DTYPE_U8;
    j.mask = mask;
    j.es = pk_host->dtype_size(dt);
    j.nearest = nearest || mask;
    j.c = mask ? 1 : x->shape[x->ndim - 3];
    j.h = x->shape[x->ndim - 2];
    j.w = x->shape[x->ndim - 1];
    j.oh = oh;
    j.ow = ow;
    loom_status st = mask ? mask_fill_bytes(fill, dt, j.fill_bytes) : check_fill(fill, j.c);
    if (st != LOOM_OK)
        return st;
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[x->ndim - 2] = oh;
    shape[x->ndim - 1] = ow;
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, dt, x->ndim, shape, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    j.planes = loom_numel(out) / (oh * ow);
    j.src = loom_data(x);
    j.dst = loom_data(out);
    float *buf = pk_host->scratch(call->ctx, (size_t)(ow + oh + j.c + 1) * sizeof(float));
    if (!buf)
        return LOOM_ENOMEM;
    float *xs = buf, *ys = buf + ow, *fl = ys + oh;
    j.kind = kind;
    j.disp = disp;
    if (kind == GRID_AFFINE) {
        transforms_linspace((float)((1.0 - (double)ow) * 0.5), (float)(((double)ow - 1.0) * 0.5), ow, xs);
        transforms_linspace((float)((1.0 - (double)oh) * 0.5), (float)(((double)oh - 1.0) * 0.5), oh, ys);
    } else if (kind == GRID_PERSPECTIVE) {   /* _perspective_grid: pixel centres */
        transforms_linspace(0.5f, (float)((double)ow + 0.5 - 1.0), ow, xs);
        transforms_linspace(0.5f, (float)((double)oh + 0.5 - 1.0), oh, ys);
        j.q[0] = (float)m[6];
        j.q[1] = (float)m[7];
        j.q[2] = 1.0f;
    } else {                                 /* _create_identity_grid */
        transforms_linspace((float)((double)(-ow + 1) / (double)ow), (float)((double)(ow - 1) / (double)ow), ow, xs);
        transforms_linspace((float)((double)(-oh + 1) / (double)oh), (float)((double)(oh - 1) / (double)oh), oh, ys);
    }
    /* theta in float32, then R = theta^T / (w / 2, h / 2) (perspective: of the output size) */
    const float t[6] = { (float)m[0], (float)m[1], (float)m[2], (float)m[3], (float)m[4], (float)m[5] };
    const float dw = (float)(0.5 * (double)(kind == GRID_PERSPECTIVE ? ow : j.w));
    const float dh = (float)(0.5 * (double)(kind == GRID_PERSPECTIVE ? oh : j.h));
    j.r[0] = t[0] / dw;
    j.r[1] = t[3] / dh;
    j.r[2] = t[1] / dw;
    j.r[3] = t[4] / dh;
    j.r[4] = t[2] / dw;
    j.r[5] = t[5] / dh;
    j.xs = xs;
    j.ys = ys;
    j.has_fill = fill->is_set;
    for (int64_t c = 0; c < j.c; c++)
        fl[c] = fill->is_set ? (float)fill->u.floats[fill->count == 1 ? 0 : c] : 0.0f;
    j.fill = fl;
    if (!(j.grid = pk_host->scratch(call->ctx, (size_t)(2 * oh * ow) * sizeof(float))))
        return LOOM_ENOMEM;
    /* several planes: their sampling computed once (a batch of 64 RGB
    ** images shares it 192 times) */
    if (j.planes > 1 && !j.mask && !(j.taps = pk_host->scratch(call->ctx, (size_t)(oh * ow) * sizeof(grid_tap))))
        return LOOM_ENOMEM;
#ifdef HAVE_GRID_ROWS_FMA
    if (transforms_have_avx2()) {
        /* the AVX2 row gathers with int32 offsets (and up to 3 more for the
        ** aligned uint8 words) */
        if (j.taps && j.h * j.w < INT32_MAX - 4) {
            grid_lanes *l = pk_host->scratch(call->ctx, sizeof *l);
            int32_t *ints = pk_host->scratch(call->ctx, (size_t)(3 * oh * ow) * sizeof(int32_t));
            float *fr = pk_host->scratch(call->ctx, (size_t)(2 * oh * ow) * sizeof(float));
            int64_t *ends = pk_host->scratch(call->ctx, (size_t)oh * sizeof(int64_t));
            if (!l || !ints || !fr || !ends)
                return LOOM_ENOMEM;
            *l = (grid_lanes){ .in = ints, .top = ints + oh * ow, .bottom = ints + 2 * oh * ow, .dx = fr,
                               .dy = fr + oh * ow, .row_end = ends };
            j.lanes = l;
        }
        loom_status gs = pk_host->parallel_for(call->ctx, oh, 8, grid_fill_fma, &j);
        return gs != LOOM_OK ? gs : pk_host->parallel_for(call->ctx, grid_tasks(&j), j.taps ? 1 : 4, grid_rows_fma, &j);
    }
#endif
    st = pk_host->parallel_for(call->ctx, oh, 8, grid_fill, &j);
    return st != LOOM_OK ? st : pk_host->parallel_for(call->ctx, grid_tasks(&j), j.taps ? 1 : 4, grid_rows, &j);
}

static loom_status grid_transform(loom_call *call, const double m[6], int64_t oh, int64_t ow, int nearest,
                                  const loom_attr_value *fill, int mask)
{
    const double m8[8] = { m[0], m[1], m[2], m[3], m[4], m[5], 0.0, 0.0 };
    return grid_transform_kind(call, GRID_AFFINE, m8, NULL, oh, ow, nearest, fill, mask);
}

/* center (x, y) in pixels -> torchvision's offset from the image centre */
static loom_status center_of(const loom_attr_value *c, int64_t h, int64_t w, double out[2])
{
    out[0] = out[1] = 0.0;
    if (!c->is_set)
        return LOOM_OK;
    if (c->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'center' must be (x, y), not %lld values", (long long)c->count);
    out[0] = c->u.floats[0] - (double)w * 0.5;
    out[1] = c->u.floats[1] - (double)h * 0.5;
    return LOOM_OK;
}

static int is_nearest(const loom_attr_value *interpolation)
{
    return strcmp(interpolation->u.s, "nearest") == 0;
}

/* ------------------------------------------------------------ affine */

static loom_status affine_run(loom_call *call, const loom_attr_value *angle, const loom_attr_value *tr,
                              const loom_attr_value *scale, const loom_attr_value *sh, const loom_attr_value *center,
                              const loom_attr_value *fill, int nearest, int mask)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_input(x, mask);
    if (st != LOOM_OK)
        return st;
    if (tr->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'translate' must be (tx, ty), not %lld values", (long long)tr->count);
    if (sh->count != 1 && sh->count != 2)
        return pk_host->fail(LOOM_EINVAL, "'shear' must be [s] or [sx, sy], not %lld values", (long long)sh->count);
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    double c[2], m[6];
    if ((st = center_of(center, h, w, c)) != LOOM_OK)
        return st;
    const double shear[2] = { sh->u.floats[0], sh->u.floats[sh->count - 1] };
    const double translate[2] = { tr->u.floats[0], tr->u.floats[1] };
    inverse_affine(c, angle->u.f, translate, scale->u.f, shear, m);
    return grid_transform(call, m, h, w, nearest, fill, mask);
}

loom_status vision_affine_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(affine, n)])
    return affine_run(call, A(angle), A(translate), A(scale), A(shear), A(center), A(fill), is_nearest(A(interpolation)),
                      0);
#undef A
}

loom_status vision_affine_mask_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(affine_mask, n)])
    return affine_run(call, A(angle), A(translate), A(scale), A(shear), A(center), A(fill), 1, 1);
#undef A
}

/* ------------------------------------------------------------ rotate */

/* torch.rot90(image, k, dims=(-2, -1)) for k = 1, 2, 3 */
typedef struct rot_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t es;
    int64_t h, w, oh, ow;
    int k;
} rot_job;

static void rot_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const rot_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const int64_t plane = r / j->oh, i = r % j->oh;
        const uint8_t *s = j->src + (size_t)(plane * j->h * j->w) * j->es;
        uint8_t *d = j->dst + (size_t)(r * j->ow) * j->es;
        for (int64_t c = 0; c < j->ow; c++) {
            int64_t sy, sx;
            if (j->k == 1) {          /* out[i][c] = in[c][w - 1 - i] */
                sy = c;
                sx = j->w - 1 - i;
            } else if (j->k == 2) {   /* out[i][c] = in[h - 1 - i][w - 1 - c] */
                sy = j->h - 1 - i;
                sx = j->w - 1 - c;
            } else {                  /* out[i][c] = in[h - 1 - c][i] */
                sy = j->h - 1 - c;
                sx = i;
            }
            memcpy(d + (size_t)c * j->es, s + (size_t)(sy * j->w + sx) * j->es, j->es);
        }
    }
}


static loom_status rotate_run(loom_call *call, double angle_attr, int expand, const loom_attr_value *center,
                              const loom_attr_value *fill, int nearest, int mask)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_input(x, mask);
    if (st != LOOM_OK)
        return st;
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    double angle = fmod(angle_attr, 360.0);   /* Python's angle % 360 */
    if (angle < 0)
        angle += 360.0;
    if (!center->is_set) {
        int k = -1;
        if (angle == 0)
            k = 0;
        else if (angle == 180)
            k = 2;
        else if ((expand || h == w) && (angle == 90 || angle == 270))
            k = angle == 90 ? 1 : 3;
        if (k >= 0) {
            uint8_t unused[8];
            st = mask ? mask_fill_bytes(fill, loom_tensor_dtype_of(x), unused) : check_fill(fill, x->shape[x->ndim - 3]);
            if (st != LOOM_OK)
                return st;
            int64_t shape[LOOM_MAX_NDIM];
            memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
            const int64_t oh = (k % 2) ? w : h, ow = (k % 2) ? h : w;
            shape[x->ndim - 2] = oh;
            shape[x->ndim - 1] = ow;
            loom_tensor *out;
            if ((st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, shape, &out)) != LOOM_OK ||
                loom_numel(out) == 0)
                return st;
            const size_t es = pk_host->dtype_size(loom_tensor_dtype_of(x));
            if (k == 0) {
                memcpy(loom_data(out), loom_data(x), (size_t)loom_numel(x) * es);
                return LOOM_OK;
            }
            rot_job j = { loom_data(x), loom_data(out), es, h, w, oh, ow, k };
            return pk_host->parallel_for(call->ctx, loom_numel(out) / ow, 16, rot_rows, &j);
        }
    }
    double c[2], m[6];
    if ((st = center_of(center, h, w, c)) != LOOM_OK)
        return st;
    const double zero[2] = { 0.0, 0.0 };
    inverse_affine(c, -angle, zero, 1.0, zero, m);
    int64_t oh = h, ow = w;
    if (expand) {
        transforms_affine_output_size(m, w, h, &ow, &oh);
        if (ow <= 0 || oh <= 0 || ow > (INT64_C(1) << 30) || oh > (INT64_C(1) << 30))
            return pk_host->fail(LOOM_EINVAL, "'expand': an output of %lld x %lld", (long long)oh, (long long)ow);
    }
    return grid_transform(call, m, oh, ow, nearest, fill, mask);
}

loom_status vision_rotate_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(rotate, n)])
    return rotate_run(call, A(angle)->u.f, A(expand)->u.b, A(center), A(fill), is_nearest(A(interpolation)), 0);
#undef A
}

loom_status vision_rotate_mask_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(rotate_mask, n)])
    return rotate_run(call, A(angle)->u.f, A(expand)->u.b, A(center), A(fill), 1, 1);
#undef A
}

void transforms_affine_output_size(const double m[6], int64_t w, int64_t h, int64_t *ow, int64_t *oh)
{
    {   /* _compute_affine_output_size_tensor, in float32 */
        const float hw = (float)(0.5 * (double)w), hh = (float)(0.5 * (double)h);
        const float pts[4][2] = { { -hw, -hh }, { -hw, hh }, { hw, hh }, { hw, -hh } };
        const float t[6] = { (float)m[0], (float)m[1], (float)m[2], (float)m[3], (float)m[4], (float)m[5] };
        float mn[2] = { INFINITY, INFINITY }, mx[2] = { -INFINITY, -INFINITY };
        for (int p = 0; p < 4; p++)
            for (int a = 0; a < 2; a++) {
                const float v = pts[p][0] * t[3 * a] + pts[p][1] * t[3 * a + 1] + t[3 * a + 2];
                mn[a] = v < mn[a] ? v : mn[a];
                mx[a] = v > mx[a] ? v : mx[a];
            }
        const float half[2] = { hw, hh };
        int64_t size[2];
        for (int a = 0; a < 2; a++) {
            const float cmax = ceilf(truncf((mx[a] + half[a]) * 10000.0f) * 1e-4f);
            const float cmin = floorf(truncf((mn[a] + half[a]) * 10000.0f) * 1e-4f);
            const float diff = cmax - cmin;
            size[a] = diff > 0.0f && diff < 2147483648.0f ? (int64_t)diff : 0;
        }
        *ow = size[0];
        *oh = size[1];
    }
}

/* ------------------------------------------------------ perspective */

/* The 8 x 8 system of torchvision's _get_perspective_coeffs, solved in
** double (Gaussian elimination with partial pivoting; torchvision: lstsq,
** gels, on the same exactly determined system), rounded to float32. */
static loom_status perspective_coeffs(const int64_t *start, const int64_t *end, double out[8])
{
    double a[8][9];
    for (int i = 0; i < 4; i++) {
        const double x1 = (double)end[2 * i], y1 = (double)end[2 * i + 1];
        const double x2 = (double)start[2 * i], y2 = (double)start[2 * i + 1];
        const double r0[9] = { x1, y1, 1, 0, 0, 0, -x2 * x1, -x2 * y1, x2 };
        const double r1[9] = { 0, 0, 0, x1, y1, 1, -y2 * x1, -y2 * y1, y2 };
        memcpy(a[2 * i], r0, sizeof r0);
        memcpy(a[2 * i + 1], r1, sizeof r1);
    }
    for (int col = 0; col < 8; col++) {
        int piv = col;
        for (int r = col + 1; r < 8; r++)
            if (fabs(a[r][col]) > fabs(a[piv][col]))
                piv = r;
        if (fabs(a[piv][col]) < 1e-12)
            return pk_host->fail(LOOM_EINVAL, "'startpoints' / 'endpoints': the four points do not define a "
                                              "perspective (a singular system)");
        if (piv != col)
            for (int k = 0; k < 9; k++) {
                const double tmp = a[col][k];
                a[col][k] = a[piv][k];
                a[piv][k] = tmp;
            }
        for (int r = 0; r < 8; r++) {
            if (r == col)
                continue;
            const double f = a[r][col] / a[col][col];
            for (int k = col; k < 9; k++)
                a[r][k] -= f * a[col][k];
        }
    }
    for (int i = 0; i < 8; i++)
        out[i] = (double)(float)(a[i][8] / a[i][i]);
    return LOOM_OK;
}


loom_status transforms_perspective_coefficients(const loom_attr_value *sp, const loom_attr_value *ep,
                                                const loom_attr_value *co, double m[8])
{
    if (co->is_set) {
        if (sp->is_set || ep->is_set)
            return pk_host->fail(LOOM_EINVAL, "'startpoints'/'endpoints' and 'coefficients' shouldn't be given "
                                              "together");
        if (co->count != 8)
            return pk_host->fail(LOOM_EINVAL, "'coefficients' should have 8 values, not %lld", (long long)co->count);
        for (int i = 0; i < 8; i++)
            m[i] = co->u.floats[i];
        return LOOM_OK;
    }
    if (!sp->is_set || !ep->is_set)
        return pk_host->fail(LOOM_EINVAL, "either 'startpoints' and 'endpoints' or 'coefficients' must be given");
    if (sp->count != 8 || ep->count != 8)
        return pk_host->fail(LOOM_EINVAL, "'startpoints' and 'endpoints' need four (x, y) corners each (8 values), "
                                          "not %lld and %lld",
                             (long long)sp->count, (long long)ep->count);
    return perspective_coeffs(sp->u.ints, ep->u.ints, m);
}

static loom_status perspective_run(loom_call *call, const loom_attr_value *sp, const loom_attr_value *ep,
                                   const loom_attr_value *co, const loom_attr_value *fill, int nearest, int mask)
{
    const loom_tensor *x = call->inputs[0];
    loom_status st = check_input(x, mask);
    if (st != LOOM_OK)
        return st;
    double m[8];
    if ((st = transforms_perspective_coefficients(sp, ep, co, m)) != LOOM_OK)
        return st;
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    return grid_transform_kind(call, GRID_PERSPECTIVE, m, NULL, h, w, nearest, fill, mask);
}

loom_status vision_perspective_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(perspective, n)])
    return perspective_run(call, A(startpoints), A(endpoints), A(coefficients), A(fill), is_nearest(A(interpolation)),
                           0);
#undef A
}

loom_status vision_perspective_mask_cpu(loom_call *call)
{
#define A(n) (&call->attrs[PK_ATTR(perspective_mask, n)])
    return perspective_run(call, A(startpoints), A(endpoints), A(coefficients), A(fill), 1, 1);
#undef A
}

/* ---------------------------------------------------------- elastic */

static loom_status elastic_run(loom_call *call, const loom_attr_value *fill, int nearest, int mask)
{
    const loom_tensor *x = call->inputs[0], *d = call->inputs[1];
    char b1[160], b2[160];
    loom_status st = check_input(x, mask);
    if (st != LOOM_OK)
        return st;
    const int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    if (d->shape[0] != 1 || d->shape[1] != h || d->shape[2] != w || d->shape[3] != 2)
        return pk_host->fail(LOOM_EINVAL, "'displacement' %s should be [1, %lld, %lld, 2] for '%s' %s",
                             vision_describe(d, b1, sizeof b1), (long long)h, (long long)w, mask ? "mask" : "image",
                             vision_describe(x, b2, sizeof b2));
    static const double none[8] = { 0 };
    return grid_transform_kind(call, GRID_ELASTIC, none, loom_numel(d) > 0 ? loom_data(d) : NULL, h, w, nearest, fill,
                               mask);
}

loom_status vision_elastic_cpu(loom_call *call)
{
    return elastic_run(call, &call->attrs[PK_ATTR(elastic, fill)],
                       is_nearest(&call->attrs[PK_ATTR(elastic, interpolation)]), 0);
}

loom_status vision_elastic_mask_cpu(loom_call *call)
{
    return elastic_run(call, &call->attrs[PK_ATTR(elastic_mask, fill)], 1, 1);
}
