/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_conv_tmpl.h - the cpu deform_conv2d kernels for one dtype
** (deform_conv_cpu.c has the contract): the sample positions, im2col of a
** tile, one forward task and the backward of one image. Included by
** deform_conv_cpu.c once per dtype (f32, f64; f16 runs widened to f32)
** with PK_SFX (dtype_traits.h) defined; it undefines PK_SFX and its own
** macros at its end. Inside, T is the element type and DT its loom_dtype.
*/

#define T PK_S(PK_SFX)
#define DT PK_DTYPE(PK_SFX)

/* Sample position of output position p for tap (i, j) of offset group og. */
static void PK_FN(sample_pos)(const deform_geom *g, const conv_dims *d, const T *off, const T *msk,
                              int64_t og, int64_t tap, int64_t p, T *y, T *x, T *m)
{
    int64_t oy = p / g->wo, ox = p % g->wo, i = tap / g->kw, j = tap % g->kw;
    *y = (T)(oy * g->sh - g->ph + i * g->dh) + off[(og * 2 * d->taps + 2 * tap) * d->hw + p];
    *x = (T)(ox * g->sw - g->pw + j * g->dw) + off[(og * 2 * d->taps + 2 * tap + 1) * d->hw + p];
    *m = msk != NULL ? msk[(og * d->taps + tap) * d->hw + p] : (T)1;
    if (g->half_coords) {
        *y = (T)pk_rnd_f16((float)*y);
        *x = (T)pk_rnd_f16((float)*x);
    }
}

/* Columns of image `img` for positions [p0, p0 + np): row k = c*taps + tap
** at dst + k*rs, columns [np, width) zeroed. */
static void PK_FN(im2col)(const deform_geom *g, const conv_dims *d, int64_t img, int64_t p0,
                          int64_t np, T *dst, int64_t rs, int64_t width)
{
    const T *in = (const T *)g->input + img * g->cin * d->in_hw;
    const T *off = (const T *)g->offset + img * 2 * g->offset_groups * d->taps * d->hw;
    const T *msk = g->mask != NULL ? (const T *)g->mask + img * g->offset_groups * d->taps * d->hw
                                   : NULL;
    for (int64_t og = 0; og < g->offset_groups; og++)
        for (int64_t tap = 0; tap < d->taps; tap++) {
            /* position outer, channel inner: the corners and weights of a
            ** position are computed once for all the offset group's channels */
            const T *src0 = in + og * d->cpo * d->in_hw;
            T *dst0 = dst + (og * d->cpo * d->taps + tap) * rs;
            const int64_t cstride = d->taps * rs;
            for (int64_t q = 0; q < np; q++) {
                T y, x, m;
                deform_corners_t c;
                PK_FN(sample_pos)(g, d, off, msk, og, tap, p0 + q, &y, &x, &m);
                deform_corners_raw((double)y, (double)x, g->h, g->w, &c);
                const T ly = (T)c.ly, lx = (T)c.lx, hy = 1 - ly, hx = 1 - lx;
                const T w0 = c.valid && c.ok[0] ? hy * hx : (T)0, w1 = c.valid && c.ok[1] ? hy * lx : (T)0;
                const T w2 = c.valid && c.ok[2] ? ly * hx : (T)0, w3 = c.valid && c.ok[3] ? ly * lx : (T)0;
                const int64_t i0 = c.idx[0], i1 = c.idx[1], i2 = c.idx[2], i3 = c.idx[3];
                const T mv = c.valid ? m : (T)0;
                const T *src = src0;
                T *out = dst0 + q;
                if (!c.valid) { /* outside the image: 0, whatever the pixels hold */
                    for (int64_t ch = 0; ch < d->cpo; ch++, out += cstride)
                        *out = 0;
                    continue;
                }
                for (int64_t ch = 0; ch < d->cpo; ch++, src += d->in_hw, out += cstride)
                    *out = mv * (w0 * src[i0] + w1 * src[i1] + w2 * src[i2] + w3 * src[i3]);
            }
            for (int64_t ch = og * d->cpo; ch < (og + 1) * d->cpo; ch++)
                for (int64_t q = np; q < width; q++)
                    dst[(ch * d->taps + tap) * rs + q] = 0;
        }
}

/* One forward task: image t / tiles, tile t % tiles of tile_w positions. */
static void PK_FN(forward_tile)(const deform_geom *g, const conv_dims *d, const pk_gemm_packed *wpk,
                                int64_t tile_w, int64_t tiles, int64_t t, T *cols, T *out, void *work,
                                size_t work_bytes)
{
    int64_t img = t / tiles, p0 = (t % tiles) * tile_w;
    int64_t np = d->hw - p0 < tile_w ? d->hw - p0 : tile_w;
    PK_FN(im2col)(g, d, img, p0, np, cols, np, np);
    const T *bias = g->bias;
    for (int64_t grp = 0; grp < g->groups; grp++)
        deform_gemm(DT, d->cout_g, np, d->kg, &wpk[grp], NULL, 0, 0, cols + grp * d->kg * np, np, 1,
                    out + (img * g->cout + grp * d->cout_g) * d->hw + p0, d->hw, 0,
                    bias != NULL ? bias + grp * d->cout_g : NULL, work, work_bytes);
}

/* Backward of one image: gw (weight layout) accumulates; grad_input,
** grad_offset, grad_mask of the image are written. */
static void PK_FN(backward_image)(const deform_geom *g, const conv_dims *d, int64_t img, T *cols,
                                  T *gcols, void *work, size_t work_bytes, T *gw, T *gin, T *goff,
                                  T *gmask)
{
    const T *wt = g->weight, *grad = (const T *)g->grad + img * g->cout * d->hw;
    const T *in = (const T *)g->input + img * g->cin * d->in_hw;
    const T *off = (const T *)g->offset + img * 2 * g->offset_groups * d->taps * d->hw;
    const T *msk = g->mask != NULL ? (const T *)g->mask + img * g->offset_groups * d->taps * d->hw
                                   : NULL;
    gin += img * g->cin * d->in_hw;
    goff += img * 2 * g->offset_groups * d->taps * d->hw;
    if (gmask != NULL)
        gmask += img * g->offset_groups * d->taps * d->hw;
    for (int64_t p0 = 0; p0 < d->hw; p0 += TILE_POS) {
        int64_t np = d->hw - p0 < TILE_POS ? d->hw - p0 : TILE_POS;
        PK_FN(im2col)(g, d, img, p0, np, cols + p0, d->hw, np);
    }
    for (int64_t grp = 0; grp < g->groups; grp++) {
        const T *wg = wt + grp * d->cout_g * d->kg, *gg = grad + grp * d->cout_g * d->hw;
        /* grad_columns_g [kg x hw] = W_g^T [kg x cout_g] * grad_g [cout_g x hw] */
        deform_gemm(DT, d->kg, d->hw, d->cout_g, NULL, wg, 1, d->kg, gg, d->hw, 1,
                    gcols + grp * d->kg * d->hw, d->hw, 0, NULL, work, work_bytes);
        /* grad_weight_g [cout_g x kg] += grad_g [cout_g x hw] * columns_g^T [hw x kg] */
        deform_gemm(DT, d->cout_g, d->kg, d->hw, NULL, gg, d->hw, 1, cols + grp * d->kg * d->hw, 1,
                    d->hw, gw + grp * d->cout_g * d->kg, d->kg, 1, NULL, work, work_bytes);
    }
    for (int64_t og = 0; og < g->offset_groups; og++)
        for (int64_t tap = 0; tap < d->taps; tap++)
            for (int64_t p = 0; p < d->hw; p++) {
                T y, x, m, go_y = 0, go_x = 0, gm = 0;
                deform_corners_t c;
                PK_FN(sample_pos)(g, d, off, msk, og, tap, p, &y, &x, &m);
                deform_corners_raw((double)y, (double)x, g->h, g->w, &c);
                T ly = (T)c.ly, lx = (T)c.lx, hy = 1 - ly, hx = 1 - lx;
                T bw[4] = { hy * hx, hy * lx, ly * hx, ly * lx };
                /* col2im weights: (1 - |y - yp|) * (1 - |x - xp|) */
                T yl = y - ly, xl = x - lx;
                T sy[2] = { 1 - (y - yl), 1 - ((yl + 1) - y) }, sx[2] = { 1 - (x - xl), 1 - ((xl + 1) - x) };
                T cw[4] = { sy[0] * sx[0], sy[0] * sx[1], sy[1] * sx[0], sy[1] * sx[1] };
                for (int64_t ch = og * d->cpo; ch < (og + 1) * d->cpo; ch++) {
                    const T *src = in + ch * d->in_hw;
                    T gc = gcols[(ch * d->taps + tap) * d->hw + p];
                    T v[4];
                    for (int k = 0; k < 4; k++)
                        v[k] = c.ok[k] ? src[c.idx[k]] : (T)0;
                    T wy = lx * (v[3] - v[1]) + (1 - lx) * (v[2] - v[0]);
                    T wx = ly * (v[3] - v[2]) + (1 - ly) * (v[1] - v[0]);
                    go_y += m * wy * gc;
                    go_x += m * wx * gc;
                    if (c.valid) {
                        if (msk != NULL)
                            gm += gc * (bw[0] * v[0] + bw[1] * v[1] + bw[2] * v[2] + bw[3] * v[3]);
                        T *gdst = gin + ch * d->in_hw;
                        for (int k = 0; k < 4; k++)
                            if (c.ok[k])
                                gdst[c.idx[k]] += m * cw[k] * gc;
                    }
                }
                goff[(og * 2 * d->taps + 2 * tap) * d->hw + p] = go_y;
                goff[(og * 2 * d->taps + 2 * tap + 1) * d->hw + p] = go_x;
                if (gmask != NULL)
                    gmask[(og * d->taps + tap) * d->hw + p] = gm;
            }
}

#undef T
#undef DT
#undef PK_SFX
