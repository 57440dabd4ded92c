/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_tmpl.h - the per-bin cpu kernels of the beamforming module for
** one precision. Included by beamform_cpu.c once per dtype with
**   BF_SFX   c64 | c128        BF_R   float | double (the real type)
** defined; undefines both at its end. Complex numbers are interleaved
** (re, im) pairs of BF_R; matrices handed to LAPACK are column-major.
*/
#define BF_CAT_(a, b) a##_##b
#define BF_CAT(a, b) BF_CAT_(a, b)
#define BF_FN(name) BF_CAT(name, BF_SFX)

/* one job of the threaded loops: the arrays, the options, the workspaces */
typedef struct BF_FN(bf_job) {
    const bf_geom *g;
    const BF_R *x, *mask, *psd_s, *psd_n, *rtf, *w;
    BF_R *out;
    bf_refv ref;
    bf_loading load;
    int normalize;
    int avx2;
    double eps;
    int64_t n_iter;
    char *ws;             /* per-thread workspaces of ws_bytes each */
    size_t ws_bytes;
    int64_t bad_bin;      /* -1, or a bin whose solve failed (written atomically) */
    int bad_info;
} BF_FN(bf_job);

/* ------------------------------------------------------------ helpers */

/* (a + bi) / (c + di) scaled as c10::complex divides (numpy's algorithm) */
static inline void BF_FN(cdiv)(BF_R a, BF_R b, BF_R c, BF_R d, BF_R *re, BF_R *im)
{
    BF_R ac = c < 0 ? -c : c, ad = d < 0 ? -d : d;
    if (ac >= ad) {
        if (ac == 0 && ad == 0) {
            *re = a / ac;
            *im = b / ad;
            return;
        }
        BF_R rat = d / c, scl = (BF_R)1.0 / (c + d * rat);
        *re = (a + b * rat) * scl;
        *im = (b - a * rat) * scl;
    } else {
        BF_R rat = c / d, scl = (BF_R)1.0 / (d + c * rat);
        *re = (a * rat + b) * scl;
        *im = (b * rat - a) * scl;
    }
}

/* row-major src (C x C) into column-major dst */
static inline void BF_FN(to_colmajor)(int64_t C, const BF_R *src, BF_R *dst)
{
    for (int64_t r = 0; r < C; r++)
        for (int64_t c = 0; c < C; c++) {
            dst[2 * (c * C + r)] = src[2 * (r * C + c)];
            dst[2 * (c * C + r) + 1] = src[2 * (r * C + c) + 1];
        }
}

/* torchaudio's _tik_reg on a column-major matrix: the diagonal's real part
** gains Re(tr A) * reg + 1e-8 (the 1e-8 is hard-coded there) */
static inline void BF_FN(tik_reg)(int64_t C, BF_R *a, double reg)
{
    BF_R tr = 0;
    for (int64_t i = 0; i < C; i++)
        tr += a[2 * (i * C + i)];
    BF_R e = tr * (BF_R)reg;
    e = e + (BF_R)1e-8;
    for (int64_t i = 0; i < C; i++)
        a[2 * (i * C + i)] += e;
}

/* the reference weights of batch b as the working type (u[c] + 0i) */
static inline const void *BF_FN(ref_row)(const bf_refv *ref, int64_t b, int64_t C)
{
    size_t es = ref->u_dtype == LOOM_DTYPE_F64 ? sizeof(double) : sizeof(float);
    return (const char *)ref->u + (size_t)(ref->u_batch == 1 ? 0 : b) * (size_t)C * es;
}
static inline BF_R BF_FN(ref_at)(const bf_refv *ref, const void *row, int64_t c)
{
    return ref->u_dtype == LOOM_DTYPE_F64 ? (BF_R)((const double *)row)[c] : (BF_R)((const float *)row)[c];
}

/* v = M u for a column-major M (C x C): the reference column, or the
** weights' combination of the columns (torchaudio's einsum with u) */
static inline void BF_FN(select_ref)(int64_t C, const BF_R *m, const bf_refv *ref, int64_t b, BF_R *v)
{
    if (ref->index >= 0) {
        for (int64_t r = 0; r < C; r++) {
            v[2 * r] = m[2 * (ref->index * C + r)];
            v[2 * r + 1] = m[2 * (ref->index * C + r) + 1];
        }
        return;
    }
    const void *row = BF_FN(ref_row)(ref, b, C);
    for (int64_t r = 0; r < C; r++) {
        BF_R sr = 0, si = 0;
        for (int64_t c = 0; c < C; c++) {
            BF_R u = BF_FN(ref_at)(ref, row, c);
            const BF_R *e = m + 2 * (c * C + r);
            sr += e[0] * u - e[1] * 0;
            si += e[0] * 0 + e[1] * u;
        }
        v[2 * r] = sr;
        v[2 * r + 1] = si;
    }
}

/* y = M v, M column-major (C x C) */
static inline void BF_FN(matvec)(int64_t C, const BF_R *m, const BF_R *v, BF_R *y)
{
    for (int64_t r = 0; r < C; r++) {
        BF_R sr = 0, si = 0;
        for (int64_t c = 0; c < C; c++) {
            const BF_R *e = m + 2 * (c * C + r);
            sr += e[0] * v[2 * c] - e[1] * v[2 * c + 1];
            si += e[0] * v[2 * c + 1] + e[1] * v[2 * c];
        }
        y[2 * r] = sr;
        y[2 * r + 1] = si;
    }
}

static void BF_FN(mark_bad)(BF_FN(bf_job) *j, int64_t bin, int info)
{
    __atomic_store_n(&j->bad_info, info, __ATOMIC_RELAXED);
    __atomic_store_n(&j->bad_bin, bin, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ psd */

/* The portable twin of bf_psd_bin_avx2: acc[c][e] (e >= c) +=
** sum_t x_c[t] conj(ym_e[t]) with ym the mask-weighted frames. */
static void BF_FN(psd_bin_scalar)(int64_t C, int64_t T, const BF_R *x, int64_t ldx, const BF_R *ym, int64_t ldy,
                                  BF_R *acc)
{
    for (int64_t c = 0; c < C; c++)
        for (int64_t e = c; e < C; e++) {
            const BF_R *a = x + 2 * c * ldx, *y = ym + 2 * e * ldy;
            BF_R sr = 0, si = 0;
            for (int64_t t = 0; t < T; t++) {
                sr += a[2 * t] * y[2 * t] + a[2 * t + 1] * y[2 * t + 1];
                si += a[2 * t + 1] * y[2 * t] - a[2 * t] * y[2 * t + 1];
            }
            acc[2 * (c * C + e)] += sr;
            acc[2 * (c * C + e) + 1] += si;
        }
}

/* frames are weighted and summed in blocks, so a workspace holds two
** copies of BF_PSD_BLOCK frames per channel whatever T is */
#define BF_PSD_BLOCK 512

static void BF_FN(psd_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    BF_FN(bf_job) *j = user;
    const bf_geom *g = j->g;
    const int64_t C = g->C, F = g->F, T = g->T, TB = T < BF_PSD_BLOCK ? T : BF_PSD_BLOCK;
    BF_R *ym = (BF_R *)(j->ws + (size_t)thread_index * j->ws_bytes);
    BF_R *ys = ym + 2 * C * TB;
    BF_R *acc = ys + 2 * C * TB;
    BF_R *mw = acc + 2 * C * C;
    for (int64_t bin = begin; bin < end; bin++) {
        const int64_t b = bin / F, f = bin % F;
        const BF_R *xb = j->x + 2 * ((b * C) * F + f) * T;   /* channel c at xb + 2 c F T */
        const BF_R *m = j->mask != NULL ? j->mask + (b * F + f) * T : NULL;
        BF_R scale = 1;
        if (m != NULL && j->normalize) {
            /* the sum in double, once rounded: torch's cascade sum is that
            ** close to the exact sum, a float running sum is not */
            double s = 0;
            for (int64_t t = 0; t < T; t++)
                s += m[t];
            scale = (BF_R)s + (BF_R)j->eps;
        }
        for (int64_t i = 0; i < 2 * C * C; i++)
            acc[i] = 0;
        for (int64_t t0 = 0; t0 < T; t0 += TB) {
            const int64_t nt = T - t0 < TB ? T - t0 : TB;
            if (m != NULL)
                for (int64_t t = 0; t < nt; t++)
                    mw[t] = j->normalize ? m[t0 + t] / scale : m[t0 + t];
            for (int64_t e = 0; e < C; e++) {
                const BF_R *xe = xb + 2 * (e * F * T + t0);
                BF_R *y = ym + 2 * e * TB, *s = ys + 2 * e * TB;
                for (int64_t t = 0; t < nt; t++) {
                    BF_R wt = m != NULL ? mw[t] : 1;
                    y[2 * t] = xe[2 * t] * wt;
                    y[2 * t + 1] = xe[2 * t + 1] * wt;
                    s[2 * t] = y[2 * t + 1];
                    s[2 * t + 1] = y[2 * t];
                }
            }
            if (j->avx2)
                BF_FN(bf_psd_bin_avx2)(C, nt, xb + 2 * t0, F * T, ym, ys, TB, acc);
            else
                BF_FN(psd_bin_scalar)(C, nt, xb + 2 * t0, F * T, ym, TB, acc);
        }
        /* the upper triangle, mirrored; the diagonal is real exactly, as
        ** torch's x * conj(x) is */
        BF_R *o = j->out + 2 * bin * C * C;
        for (int64_t c = 0; c < C; c++) {
            o[2 * (c * C + c)] = acc[2 * (c * C + c)];
            o[2 * (c * C + c) + 1] = 0;
            for (int64_t e = c + 1; e < C; e++) {
                o[2 * (c * C + e)] = acc[2 * (c * C + e)];
                o[2 * (c * C + e) + 1] = acc[2 * (c * C + e) + 1];
                o[2 * (e * C + c)] = acc[2 * (c * C + e)];
                o[2 * (e * C + c) + 1] = -acc[2 * (c * C + e) + 1];
            }
        }
    }
}

/* ------------------------------------------------- weights and the RTF */

/* column-major workspace: two C x C matrices, a third, vectors and pivots */
static size_t BF_FN(mat_ws_bytes)(int64_t C)
{
    return (size_t)(3 * C * C + 4 * C) * 2 * sizeof(BF_R) + (size_t)C * sizeof(int) + 64;
}

static void BF_FN(souden_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    BF_FN(bf_job) *j = user;
    const int64_t C = j->g->C, F = j->g->F;
    BF_R *a = (BF_R *)(j->ws + (size_t)thread_index * j->ws_bytes), *n = a + 2 * C * C, *v = n + 2 * C * C;
    int *ipiv = (int *)(v + 8 * C + 2 * C * C);
    for (int64_t bin = begin; bin < end; bin++) {
        BF_FN(to_colmajor)(C, j->psd_n + 2 * bin * C * C, a);
        BF_FN(to_colmajor)(C, j->psd_s + 2 * bin * C * C, n);
        if (j->load.on)
            BF_FN(tik_reg)(C, a, j->load.diag_eps);
        int info = BF_CAT(bf_getrf, BF_SFX)((int)C, a, ipiv);
        if (info != 0) {
            BF_FN(mark_bad)(j, bin, info);
            continue;
        }
        BF_CAT(bf_getrs, BF_SFX)((int)C, (int)C, a, ipiv, n);
        BF_R tr = 0, ti = 0;
        for (int64_t i = 0; i < C; i++) {
            tr += n[2 * (i * C + i)];
            ti += n[2 * (i * C + i) + 1];
        }
        tr = tr + (BF_R)j->eps;
        /* Ws = N / (tr + eps), every element, then the reference column */
        for (int64_t i = 0; i < C * C; i++)
            BF_FN(cdiv)(n[2 * i], n[2 * i + 1], tr, ti, &n[2 * i], &n[2 * i + 1]);
        BF_FN(select_ref)(C, n, &j->ref, bin / F, v);
        BF_R *o = j->out + 2 * bin * C;
        for (int64_t i = 0; i < 2 * C; i++)
            o[i] = v[i];
    }
}

static void BF_FN(rtf_weights_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    BF_FN(bf_job) *j = user;
    const int64_t C = j->g->C, F = j->g->F;
    BF_R *a = (BF_R *)(j->ws + (size_t)thread_index * j->ws_bytes), *n = a + 2 * C * C;
    int *ipiv = (int *)(n + 8 * C + 4 * C * C);
    for (int64_t bin = begin; bin < end; bin++) {
        const BF_R *v = j->rtf + 2 * bin * C;
        BF_FN(to_colmajor)(C, j->psd_n + 2 * bin * C * C, a);
        if (j->load.on)
            BF_FN(tik_reg)(C, a, j->load.diag_eps);
        for (int64_t i = 0; i < 2 * C; i++)
            n[i] = v[i];
        int info = BF_CAT(bf_getrf, BF_SFX)((int)C, a, ipiv);
        if (info != 0) {
            BF_FN(mark_bad)(j, bin, info);
            continue;
        }
        BF_CAT(bf_getrs, BF_SFX)((int)C, 1, a, ipiv, n);
        /* the real part of v^H n, plus eps */
        BF_R dr = 0;
        for (int64_t c = 0; c < C; c++)
            dr += v[2 * c] * n[2 * c] + v[2 * c + 1] * n[2 * c + 1];
        dr = dr + (BF_R)j->eps;
        BF_R *o = j->out + 2 * bin * C;
        for (int64_t c = 0; c < C; c++) {
            o[2 * c] = n[2 * c] / dr;
            o[2 * c + 1] = n[2 * c + 1] / dr;
        }
        if (!j->ref.present)
            continue;
        BF_R sr, si;
        if (j->ref.index >= 0) {
            sr = v[2 * j->ref.index];
            si = -v[2 * j->ref.index + 1];
        } else {
            const void *row = BF_FN(ref_row)(&j->ref, bin / F, C);
            sr = 0, si = 0;
            for (int64_t c = 0; c < C; c++) {
                BF_R u = BF_FN(ref_at)(&j->ref, row, c);
                sr += v[2 * c] * u + v[2 * c + 1] * 0;
                si += v[2 * c] * 0 - v[2 * c + 1] * u;
            }
        }
        for (int64_t c = 0; c < C; c++) {
            BF_R wr = o[2 * c], wi = o[2 * c + 1];
            o[2 * c] = wr * sr - wi * si;
            o[2 * c + 1] = wr * si + wi * sr;
        }
    }
}

static void BF_FN(rtf_power_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    BF_FN(bf_job) *j = user;
    const int64_t C = j->g->C, F = j->g->F;
    BF_R *a = (BF_R *)(j->ws + (size_t)thread_index * j->ws_bytes), *phi = a + 2 * C * C, *a0 = phi + 2 * C * C;
    BF_R *r = a0 + 2 * C * C, *y = r + 2 * C;
    int *ipiv = (int *)(y + 6 * C);
    for (int64_t bin = begin; bin < end; bin++) {
        BF_FN(to_colmajor)(C, j->psd_n + 2 * bin * C * C, a);
        BF_FN(to_colmajor)(C, j->psd_s + 2 * bin * C * C, phi);
        if (j->load.on)
            BF_FN(tik_reg)(C, a, j->load.diag_eps);
        for (int64_t i = 0; i < 2 * C * C; i++)
            a0[i] = a[i];
        /* phi = psd_n^-1 psd_s is never formed: phi u = psd_n^-1 (psd_s u),
        ** so each power step is one product with psd_s and one solve with
        ** one right-hand side on psd_n's LU (C times less solving than
        ** phi itself; the same up to rounding) */
        int info = BF_CAT(bf_getrf, BF_SFX)((int)C, a, ipiv);
        if (info != 0) {
            BF_FN(mark_bad)(j, bin, info);
            continue;
        }
        BF_FN(select_ref)(C, phi, &j->ref, bin / F, r);            /* phi holds psd_s here */
        BF_CAT(bf_getrs, BF_SFX)((int)C, 1, a, ipiv, r);            /* r = phi[:, ref] (phi u) */
        if (j->n_iter >= 2) {
            for (int64_t it = 0; it < j->n_iter - 2; it++) {
                BF_FN(matvec)(C, phi, r, y);                        /* r = phi r */
                BF_CAT(bf_getrs, BF_SFX)((int)C, 1, a, ipiv, y);
                for (int64_t i = 0; i < 2 * C; i++)
                    r[i] = y[i];
            }
            BF_FN(matvec)(C, phi, r, y);
        } else {
            BF_FN(matvec)(C, a0, r, y);                              /* the loaded psd_n, as torchaudio */
        }
        BF_R *o = j->out + 2 * bin * C;
        for (int64_t i = 0; i < 2 * C; i++)
            o[i] = y[i];
    }
}

static void BF_FN(rtf_evd_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    BF_FN(bf_job) *j = user;
    const int64_t C = j->g->C;
    BF_R *a = (BF_R *)(j->ws + (size_t)thread_index * j->ws_bytes), *w = a + 2 * C * C;
    void *work = w + C + 16;
    for (int64_t bin = begin; bin < end; bin++) {
        BF_FN(to_colmajor)(C, j->psd_s + 2 * bin * C * C, a);
        int info = BF_CAT(bf_heevd, BF_SFX)((int)C, a, w, work);
        if (info != 0) {
            BF_FN(mark_bad)(j, bin, info);
            continue;
        }
        /* eigenvalues ascend: the last column belongs to the largest */
        BF_R *o = j->out + 2 * bin * C;
        for (int64_t i = 0; i < 2 * C; i++)
            o[i] = a[2 * (C - 1) * C + i];
    }
}

/* ---------------------------------------------------- apply_beamforming */

static void BF_FN(apply_bin_scalar)(int64_t C, int64_t T, const BF_R *w, const BF_R *x, int64_t ldx, BF_R *out)
{
    for (int64_t t = 0; t < T; t++) {
        out[2 * t] = 0;
        out[2 * t + 1] = 0;
    }
    for (int64_t c = 0; c < C; c++) {
        const BF_R wr = w[2 * c], wi = w[2 * c + 1], *xc = x + 2 * c * ldx;
        for (int64_t t = 0; t < T; t++) {
            out[2 * t] += wr * xc[2 * t] + wi * xc[2 * t + 1];
            out[2 * t + 1] += wr * xc[2 * t + 1] - wi * xc[2 * t];
        }
    }
}

static void BF_FN(apply_bins)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    BF_FN(bf_job) *j = user;
    const int64_t C = j->g->C, F = j->g->F, T = j->g->T;
    for (int64_t bin = begin; bin < end; bin++) {
        const int64_t b = bin / F, f = bin % F;
        const BF_R *x = j->x + 2 * ((b * C) * F + f) * T;
        if (j->avx2)
            BF_FN(bf_apply_bin_avx2)(C, T, j->w + 2 * bin * C, x, F * T, j->out + 2 * bin * T);
        else
            BF_FN(apply_bin_scalar)(C, T, j->w + 2 * bin * C, x, F * T, j->out + 2 * bin * T);
    }
}

#undef BF_FN
#undef BF_CAT
#undef BF_CAT_
#undef BF_SFX
#undef BF_R
