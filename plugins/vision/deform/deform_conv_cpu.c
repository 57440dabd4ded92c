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

/* The deform_conv2d kernels for one element type T. */
#define DEFINE_DEFORM(SUF, T, DT)                                                                      \
    /* Sample position of output position p for tap (i, j) of offset group og. */                     \
    static void sample_pos_##SUF(const deform_geom *g, const conv_dims *d, const T *off, const T *msk,  \
                                 int64_t og, int64_t tap, int64_t p, T *y, T *x, T *m)                 \
    {                                                                                                  \
        int64_t oy = p / g->wo, ox = p % g->wo, i = tap / g->kw, j = tap % g->kw;                      \
        *y = (T)(oy * g->sh - g->ph + i * g->dh) + off[(og * 2 * d->taps + 2 * tap) * d->hw + p];       \
        *x = (T)(ox * g->sw - g->pw + j * g->dw) + off[(og * 2 * d->taps + 2 * tap + 1) * d->hw + p];   \
        *m = msk != NULL ? msk[(og * d->taps + tap) * d->hw + p] : (T)1;                               \
        if (g->half_coords) {                                                                          \
            *y = (T)pk_f16_to_f32(pk_f32_to_f16((float)*y));                                           \
            *x = (T)pk_f16_to_f32(pk_f32_to_f16((float)*x));                                           \
        }                                                                                              \
    }                                                                                                  \
                                                                                                       \
    /* Columns of image `img` for positions [p0, p0 + np): row k = c*taps + tap                     \
    ** at dst + k*rs, columns [np, width) zeroed. */                                                    \
    static void im2col_##SUF(const deform_geom *g, const conv_dims *d, int64_t img, int64_t p0,          \
                             int64_t np, T *dst, int64_t rs, int64_t width)                            \
    {                                                                                                  \
        const T *in = (const T *)g->input + img * g->cin * d->in_hw;                                   \
        const T *off = (const T *)g->offset + img * 2 * g->offset_groups * d->taps * d->hw;            \
        const T *msk = g->mask != NULL ? (const T *)g->mask + img * g->offset_groups * d->taps * d->hw \
                                       : NULL;                                                         \
        for (int64_t og = 0; og < g->offset_groups; og++)                                              \
            for (int64_t tap = 0; tap < d->taps; tap++) {                                              \
                /* position outer, channel inner: the corners and weights of a                        \
                ** position are computed once for all the offset group's channels */                  \
                const T *src0 = in + og * d->cpo * d->in_hw;                                           \
                T *dst0 = dst + (og * d->cpo * d->taps + tap) * rs;                                    \
                const int64_t cstride = d->taps * rs;                                                  \
                for (int64_t q = 0; q < np; q++) {                                                     \
                    T y, x, m;                                                                         \
                    deform_corners_t c;                                                                \
                    sample_pos_##SUF(g, d, off, msk, og, tap, p0 + q, &y, &x, &m);                     \
                    deform_corners_raw((double)y, (double)x, g->h, g->w, &c);                          \
                    const T ly = (T)c.ly, lx = (T)c.lx, hy = 1 - ly, hx = 1 - lx;                      \
                    const T w0 = c.valid && c.ok[0] ? hy * hx : (T)0, w1 = c.valid && c.ok[1] ? hy * lx : (T)0; \
                    const T w2 = c.valid && c.ok[2] ? ly * hx : (T)0, w3 = c.valid && c.ok[3] ? ly * lx : (T)0; \
                    const int64_t i0 = c.idx[0], i1 = c.idx[1], i2 = c.idx[2], i3 = c.idx[3];         \
                    const T mv = c.valid ? m : (T)0;                                                   \
                    const T *src = src0;                                                               \
                    T *out = dst0 + q;                                                                 \
                    if (!c.valid) { /* outside the image: 0, whatever the pixels hold */               \
                        for (int64_t ch = 0; ch < d->cpo; ch++, out += cstride)                        \
                            *out = 0;                                                                  \
                        continue;                                                                      \
                    }                                                                                  \
                    for (int64_t ch = 0; ch < d->cpo; ch++, src += d->in_hw, out += cstride)           \
                        *out = mv * (w0 * src[i0] + w1 * src[i1] + w2 * src[i2] + w3 * src[i3]);       \
                }                                                                                      \
                for (int64_t ch = og * d->cpo; ch < (og + 1) * d->cpo; ch++)                           \
                    for (int64_t q = np; q < width; q++)                                               \
                        dst[(ch * d->taps + tap) * rs + q] = 0;                                        \
            }                                                                                          \
    }                                                                                                  \
                                                                                                       \
    /* One forward task: image t / tiles, tile t % tiles of tile_w positions. */                       \
    static void forward_tile_##SUF(const deform_geom *g, const conv_dims *d, const pk_gemm_packed *wpk,\
                                   int64_t tile_w, int64_t tiles, int64_t t, T *cols, T *out, void *work,\
                                   size_t work_bytes)                                                  \
    {                                                                                                  \
        int64_t img = t / tiles, p0 = (t % tiles) * tile_w;                                            \
        int64_t np = d->hw - p0 < tile_w ? d->hw - p0 : tile_w;                                        \
        im2col_##SUF(g, d, img, p0, np, cols, np, np);                                                 \
        const T *bias = g->bias;                                                                       \
        for (int64_t grp = 0; grp < g->groups; grp++)                                                  \
            deform_gemm(DT, d->cout_g, np, d->kg, &wpk[grp], NULL, 0, 0, cols + grp * d->kg * np, np, 1,\
                        out + (img * g->cout + grp * d->cout_g) * d->hw + p0, d->hw, 0,                \
                        bias != NULL ? bias + grp * d->cout_g : NULL, work, work_bytes);               \
    }                                                                                                  \
                                                                                                       \
    /* Backward of one image: gw (weight layout) accumulates; grad_input,                              \
    ** grad_offset, grad_mask of the image are written. */                                            \
    static void backward_image_##SUF(const deform_geom *g, const conv_dims *d, int64_t img, T *cols,   \
                                     T *gcols, void *work, size_t work_bytes, T *gw, T *gin, T *goff,  \
                                     T *gmask)                                                         \
    {                                                                                                  \
        const T *wt = g->weight, *grad = (const T *)g->grad + img * g->cout * d->hw;                   \
        const T *in = (const T *)g->input + img * g->cin * d->in_hw;                                   \
        const T *off = (const T *)g->offset + img * 2 * g->offset_groups * d->taps * d->hw;            \
        const T *msk = g->mask != NULL ? (const T *)g->mask + img * g->offset_groups * d->taps * d->hw \
                                       : NULL;                                                         \
        gin += img * g->cin * d->in_hw;                                                                \
        goff += img * 2 * g->offset_groups * d->taps * d->hw;                                          \
        if (gmask != NULL)                                                                             \
            gmask += img * g->offset_groups * d->taps * d->hw;                                         \
        for (int64_t p0 = 0; p0 < d->hw; p0 += TILE_POS) {                                             \
            int64_t np = d->hw - p0 < TILE_POS ? d->hw - p0 : TILE_POS;                                \
            im2col_##SUF(g, d, img, p0, np, cols + p0, d->hw, np);                                     \
        }                                                                                              \
        for (int64_t grp = 0; grp < g->groups; grp++) {                                                \
            const T *wg = wt + grp * d->cout_g * d->kg, *gg = grad + grp * d->cout_g * d->hw;          \
            /* grad_columns_g [kg x hw] = W_g^T [kg x cout_g] * grad_g [cout_g x hw] */                \
            deform_gemm(DT, d->kg, d->hw, d->cout_g, NULL, wg, 1, d->kg, gg, d->hw, 1,                 \
                        gcols + grp * d->kg * d->hw, d->hw, 0, NULL, work, work_bytes);                \
            /* grad_weight_g [cout_g x kg] += grad_g [cout_g x hw] * columns_g^T [hw x kg] */         \
            deform_gemm(DT, d->cout_g, d->kg, d->hw, NULL, gg, d->hw, 1, cols + grp * d->kg * d->hw, 1,\
                        d->hw, gw + grp * d->cout_g * d->kg, d->kg, 1, NULL, work, work_bytes);        \
        }                                                                                              \
        for (int64_t og = 0; og < g->offset_groups; og++)                                              \
            for (int64_t tap = 0; tap < d->taps; tap++)                                                \
                for (int64_t p = 0; p < d->hw; p++) {                                                  \
                    T y, x, m, go_y = 0, go_x = 0, gm = 0;                                             \
                    deform_corners_t c;                                                                \
                    sample_pos_##SUF(g, d, off, msk, og, tap, p, &y, &x, &m);                          \
                    deform_corners_raw((double)y, (double)x, g->h, g->w, &c);                          \
                    T ly = (T)c.ly, lx = (T)c.lx, hy = 1 - ly, hx = 1 - lx;                            \
                    T bw[4] = { hy * hx, hy * lx, ly * hx, ly * lx };                                  \
                    /* col2im weights: (1 - |y - yp|) * (1 - |x - xp|) */                              \
                    T yl = y - ly, xl = x - lx;                                                        \
                    T sy[2] = { 1 - (y - yl), 1 - ((yl + 1) - y) }, sx[2] = { 1 - (x - xl), 1 - ((xl + 1) - x) }; \
                    T cw[4] = { sy[0] * sx[0], sy[0] * sx[1], sy[1] * sx[0], sy[1] * sx[1] };          \
                    for (int64_t ch = og * d->cpo; ch < (og + 1) * d->cpo; ch++) {                     \
                        const T *src = in + ch * d->in_hw;                                             \
                        T gc = gcols[(ch * d->taps + tap) * d->hw + p];                                \
                        T v[4];                                                                        \
                        for (int k = 0; k < 4; k++)                                                    \
                            v[k] = c.ok[k] ? src[c.idx[k]] : (T)0;                                     \
                        T wy = lx * (v[3] - v[1]) + (1 - lx) * (v[2] - v[0]);                          \
                        T wx = ly * (v[3] - v[2]) + (1 - ly) * (v[1] - v[0]);                          \
                        go_y += m * wy * gc;                                                           \
                        go_x += m * wx * gc;                                                           \
                        if (c.valid) {                                                                 \
                            if (msk != NULL)                                                           \
                                gm += gc * (bw[0] * v[0] + bw[1] * v[1] + bw[2] * v[2] + bw[3] * v[3]); \
                            T *gdst = gin + ch * d->in_hw;                                             \
                            for (int k = 0; k < 4; k++)                                                \
                                if (c.ok[k])                                                           \
                                    gdst[c.idx[k]] += m * cw[k] * gc;                                  \
                        }                                                                              \
                    }                                                                                  \
                    goff[(og * 2 * d->taps + 2 * tap) * d->hw + p] = go_y;                             \
                    goff[(og * 2 * d->taps + 2 * tap + 1) * d->hw + p] = go_x;                         \
                    if (gmask != NULL)                                                                 \
                        gmask[(og * d->taps + tap) * d->hw + p] = gm;                                  \
                }                                                                                      \
    }

DEFINE_DEFORM(f32, float, LOOM_DTYPE_F32)
DEFINE_DEFORM(f64, double, LOOM_DTYPE_F64)

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
                s += f64 ? ((const double *)g->grad)[i] : (double)((const float *)g->grad)[i];
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
        dst[i] = pk_f16_to_f32(((const uint16_t *)src)[i]);
    return dst;
}

static void narrow(uint16_t *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = pk_f32_to_f16(src[i]);
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
