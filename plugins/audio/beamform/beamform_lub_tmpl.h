/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lub_tmpl.h - the lane-batched LU solves of beamform_lub.h for
** one precision and one instruction set. Included with
**   LUB_R    float | double        LUB_I   int32_t | int64_t (same width)
**   LUB_SFX  c64 | c128            LUB_ISA (empty) | _avx2
**   LUB_ATTR (empty) | __attribute__((target("avx2,fma"))), on every function
** defined; undefines them at its end (LUB_ATTR excepted).
**
** Layout: a vector holds one number of every lane (bin). A C x C matrix
** is 2 C^2 vectors, column-major, re then im: element (r, c) at
** m[2 (c C + r)] and m[2 (c C + r) + 1]; a C-vector is 2 C vectors.
** GCC's vector extensions give one instruction per operation on every
** ISA; a comparison yields an all-ones or all-zeros integer lane, and
** selects are bitwise blends.
*/
#define LUB_CAT3_(a, b, c) a##_##b##c
#define LUB_CAT3(a, b, c) LUB_CAT3_(a, b, c)
#define LUB_FN(name) LUB_CAT3(name, LUB_SFX, LUB_ISA)
#define LUB_LANES ((int)(BF_LUB_BYTES / sizeof(LUB_R)))

typedef LUB_R LUB_FN(lub_v) __attribute__((vector_size(BF_LUB_BYTES), aligned(BF_LUB_BYTES)));
typedef LUB_I LUB_FN(lub_m) __attribute__((vector_size(BF_LUB_BYTES), aligned(BF_LUB_BYTES)));
#define V LUB_FN(lub_v)
#define M LUB_FN(lub_m)

static inline LUB_ATTR V LUB_FN(sel)(M m, V a, V b)
{
    return (V)((m & (M)a) | (~m & (M)b));
}

static inline LUB_ATTR M LUB_FN(msel)(M m, M a, M b)
{
    return (m & a) | (~m & b);
}

static inline LUB_ATTR V LUB_FN(vabs)(V x)
{
    const M mag = (M){ 0 } + (LUB_I)(((uint64_t)1 << (8 * sizeof(LUB_I) - 1)) - 1);
    return (V)((M)x & mag);
}

static inline LUB_ATTR int LUB_FN(any)(M m)
{
    LUB_I acc = 0;
    for (int l = 0; l < LUB_LANES; l++)
        acc |= m[l];
    return acc != 0;
}

/* the workspace as aligned vectors */
static inline LUB_ATTR V *LUB_FN(vectors)(void *ws)
{
    uintptr_t p = ((uintptr_t)ws + BF_LUB_BYTES - 1) & ~(uintptr_t)(BF_LUB_BYTES - 1);
    return (V *)p;
}

/* lanes [0, nl) of a C x C matrix from bins bin0.. of a row-major array;
** the unused lanes get `pad` on the diagonal (an invertible matrix) */
static LUB_ATTR void LUB_FN(load_mat)(int64_t C, const LUB_R *src, int64_t bin0, int nl, LUB_R pad, V *m)
{
    for (int64_t i = 0; i < 2 * C * C; i++)
        m[i] = (V){ 0 };
    for (int l = 0; l < nl; l++) {
        const LUB_R *s = src + 2 * (bin0 + l) * C * C;
        for (int64_t r = 0; r < C; r++)
            for (int64_t c = 0; c < C; c++) {
                m[2 * (c * C + r)][l] = s[2 * (r * C + c)];
                m[2 * (c * C + r) + 1][l] = s[2 * (r * C + c) + 1];
            }
    }
    for (int l = nl; l < LUB_LANES; l++)
        for (int64_t r = 0; r < C; r++)
            m[2 * (r * C + r)][l] = pad;
}

static LUB_ATTR void LUB_FN(load_vec)(int64_t C, const LUB_R *src, int64_t bin0, int nl, V *v)
{
    for (int64_t i = 0; i < 2 * C; i++)
        v[i] = (V){ 0 };
    for (int l = 0; l < nl; l++)
        for (int64_t i = 0; i < 2 * C; i++)
            v[i][l] = src[2 * (bin0 + l) * C + i];
}

static LUB_ATTR void LUB_FN(store_vec)(int64_t C, const V *v, int64_t bin0, int nl, LUB_R *dst)
{
    for (int l = 0; l < nl; l++)
        for (int64_t i = 0; i < 2 * C; i++)
            dst[2 * (bin0 + l) * C + i] = v[i][l];
}

/* torchaudio's _tik_reg: the diagonal's real part gains Re(tr A) reg + 1e-8 */
static LUB_ATTR void LUB_FN(tik_reg)(int64_t C, V *a, double reg)
{
    V tr = (V){ 0 };
    for (int64_t i = 0; i < C; i++)
        tr += a[2 * (i * C + i)];
    V e = tr * (LUB_R)reg;
    e = e + (LUB_R)1e-8;
    for (int64_t i = 0; i < C; i++)
        a[2 * (i * C + i)] += e;
}

/* 1 / (pr + i pi) by Smith's method (no overflow of pr^2 + pi^2); zero
** where `zero` is set (LAPACK leaves a zero pivot's column unscaled, and
** that column is all zeros then) */
static inline LUB_ATTR void LUB_FN(recip)(V pr, V pi, M zero, V *re, V *im)
{
    M big = LUB_FN(vabs)(pr) >= LUB_FN(vabs)(pi);
    V num = LUB_FN(sel)(big, pi, pr), den = LUB_FN(sel)(big, pr, pi);
    den = LUB_FN(sel)(zero, (V){ 0 } + 1, den);
    V r = num / den, inv = (V){ 0 } + 1;
    inv = inv / (den + num * r);
    *re = LUB_FN(sel)(zero, (V){ 0 }, LUB_FN(sel)(big, inv, r * inv));
    *im = LUB_FN(sel)(zero, (V){ 0 }, LUB_FN(sel)(big, -r * inv, -inv));
}

/* swap elements k and piv[lane] of a strided sequence of complex numbers
** (a matrix row: stride 2C vectors; a vector: stride 2), per lane */
static inline LUB_ATTR void LUB_FN(swap_rows)(int64_t k, int64_t n, M piv, V *x, int64_t count, int64_t stride)
{
    for (int64_t i = k + 1; i < n; i++) {
        M s = piv == (LUB_I)i;
        if (!LUB_FN(any)(s))
            continue;
        for (int64_t j = 0; j < count; j++) {
            V *pk = x + j * stride + 2 * k, *pi = x + j * stride + 2 * i;
            for (int h = 0; h < 2; h++) {
                V t = pk[h];
                pk[h] = LUB_FN(sel)(s, pi[h], t);
                pi[h] = LUB_FN(sel)(s, t, pi[h]);
            }
        }
    }
}

/* A = P L U in place, as getrf; piv[k] is the row swapped with k; dinv[k]
** is 1 / U(k, k); returns the per-lane info (0, or the first zero pivot) */
static LUB_ATTR M LUB_FN(getrf)(int64_t C, V *a, M *piv, V *dinv)
{
    M info = (M){ 0 };
    for (int64_t k = 0; k < C; k++) {
        V *ck = a + 2 * k * C;                            /* column k */
        V best = LUB_FN(vabs)(ck[2 * k]) + LUB_FN(vabs)(ck[2 * k + 1]);
        M p = (M){ 0 } + (LUB_I)k;
        for (int64_t i = k + 1; i < C; i++) {
            V m = LUB_FN(vabs)(ck[2 * i]) + LUB_FN(vabs)(ck[2 * i + 1]);
            M gt = m > best;                              /* the first maximum, as icamax */
            best = LUB_FN(sel)(gt, m, best);
            p = LUB_FN(msel)(gt, (M){ 0 } + (LUB_I)i, p);
        }
        piv[k] = p;
        LUB_FN(swap_rows)(k, C, p, a, C, 2 * C);
        M zero = (ck[2 * k] == 0) & (ck[2 * k + 1] == 0);
        info = LUB_FN(msel)(zero & (info == 0), (M){ 0 } + (LUB_I)(k + 1), info);
        V rr, ri;
        LUB_FN(recip)(ck[2 * k], ck[2 * k + 1], zero, &rr, &ri);
        dinv[2 * k] = rr, dinv[2 * k + 1] = ri;
        for (int64_t i = k + 1; i < C; i++) {             /* L's column: a(i,k) / a(k,k) */
            V xr = ck[2 * i], xi = ck[2 * i + 1];
            V lr = xr * rr - xi * ri, li = xr * ri + xi * rr;
            /* a zero pivot leaves its (all-zero) column as it is */
            ck[2 * i] = LUB_FN(sel)(zero, xr, lr);
            ck[2 * i + 1] = LUB_FN(sel)(zero, xi, li);
        }
        for (int64_t j = k + 1; j < C; j++) {             /* the trailing update */
            V *cj = a + 2 * j * C;
            V ur = cj[2 * k], ui = cj[2 * k + 1];
            for (int64_t i = k + 1; i < C; i++) {
                V lr = ck[2 * i], li = ck[2 * i + 1];
                cj[2 * i] -= lr * ur - li * ui;
                cj[2 * i + 1] -= lr * ui + li * ur;
            }
        }
    }
    return info;
}

/* b = A^-1 b with getrf's factors, as getrs with one right-hand side */
static LUB_ATTR void LUB_FN(getrs)(int64_t C, const V *a, const M *piv, const V *dinv, V *b)
{
    for (int64_t k = 0; k < C; k++)
        LUB_FN(swap_rows)(k, C, piv[k], b, 1, 0);
    for (int64_t j = 0; j < C; j++) {                     /* L y = P b, unit diagonal */
        const V *cj = a + 2 * j * C;
        V xr = b[2 * j], xi = b[2 * j + 1];
        for (int64_t i = j + 1; i < C; i++) {
            b[2 * i] -= cj[2 * i] * xr - cj[2 * i + 1] * xi;
            b[2 * i + 1] -= cj[2 * i] * xi + cj[2 * i + 1] * xr;
        }
    }
    for (int64_t j = C - 1; j >= 0; j--) {                /* U x = y */
        const V *cj = a + 2 * j * C;
        V yr = b[2 * j], yi = b[2 * j + 1];
        V xr = yr * dinv[2 * j] - yi * dinv[2 * j + 1], xi = yr * dinv[2 * j + 1] + yi * dinv[2 * j];
        b[2 * j] = xr, b[2 * j + 1] = xi;
        for (int64_t i = 0; i < j; i++) {
            b[2 * i] -= cj[2 * i] * xr - cj[2 * i + 1] * xi;
            b[2 * i + 1] -= cj[2 * i] * xi + cj[2 * i + 1] * xr;
        }
    }
}

/* y = A v */
static LUB_ATTR void LUB_FN(matvec)(int64_t C, const V *a, const V *v, V *y)
{
    for (int64_t r = 0; r < C; r++) {
        V sr = (V){ 0 }, si = (V){ 0 };
        for (int64_t c = 0; c < C; c++) {
            const V *e = a + 2 * (c * C + r);
            sr += e[0] * v[2 * c] - e[1] * v[2 * c + 1];
            si += e[0] * v[2 * c + 1] + e[1] * v[2 * c];
        }
        y[2 * r] = sr, y[2 * r + 1] = si;
    }
}

/* the reference weights of each lane's batch as a real vector per channel */
static LUB_ATTR void LUB_FN(ref_weights)(const bf_lub_problem *p, int64_t bin0, int nl, V *u)
{
    const bf_refv *ref = p->ref;
    for (int64_t c = 0; c < p->C; c++)
        u[c] = (V){ 0 };
    for (int l = 0; l < nl; l++) {
        int64_t b = ref->u_batch == 1 ? 0 : (bin0 + l) / p->F;
        for (int64_t c = 0; c < p->C; c++)
            u[c][l] = ref->u_dtype == LOOM_DTYPE_F64 ? (LUB_R)((const double *)ref->u)[b * p->C + c]
                                                       : (LUB_R)((const float *)ref->u)[b * p->C + c];
    }
}

/* v = M[:, ref], or M u with the reference weights */
static LUB_ATTR void LUB_FN(select_ref)(const bf_lub_problem *p, const V *m, const V *u, V *v)
{
    const int64_t C = p->C;
    if (p->ref->index >= 0) {
        for (int64_t r = 0; r < 2 * C; r++)
            v[r] = m[2 * p->ref->index * C + r];
        return;
    }
    for (int64_t r = 0; r < C; r++) {
        V sr = (V){ 0 }, si = (V){ 0 };
        for (int64_t c = 0; c < C; c++) {
            sr += m[2 * (c * C + r)] * u[c];
            si += m[2 * (c * C + r) + 1] * u[c];
        }
        v[2 * r] = sr, v[2 * r + 1] = si;
    }
}

static LUB_ATTR void LUB_FN(put_info)(M info, int nl, int *out)
{
    for (int l = 0; l < nl; l++)
        out[l] = (int)info[l];
}

LUB_ATTR void LUB_FN(bf_lub_rtf_power)(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info)
{
    const int64_t C = p->C;
    V *a = LUB_FN(vectors)(ws), *s = a + 2 * C * C, *a0 = s + 2 * C * C, *dinv = a0 + 2 * C * C;
    V *r = dinv + 2 * C, *y = r + 2 * C, *u = y + 2 * C;
    M *piv = (M *)(u + C);
    LUB_FN(load_mat)(C, p->psd_n, bin0, nl, 1, a);
    LUB_FN(load_mat)(C, p->psd_s, bin0, nl, 0, s);
    if (p->load.on)
        LUB_FN(tik_reg)(C, a, p->load.diag_eps);
    if (p->n_iter < 2)
        for (int64_t i = 0; i < 2 * C * C; i++)
            a0[i] = a[i];
    LUB_FN(put_info)(LUB_FN(getrf)(C, a, piv, dinv), nl, info);
    if (p->ref->index < 0)
        LUB_FN(ref_weights)(p, bin0, nl, u);
    /* phi u = psd_n^-1 (psd_s u): phi is never formed (beamform_tmpl.h) */
    LUB_FN(select_ref)(p, s, u, r);
    LUB_FN(getrs)(C, a, piv, dinv, r);
    if (p->n_iter >= 2) {
        for (int64_t it = 0; it < p->n_iter - 2; it++) {
            LUB_FN(matvec)(C, s, r, y);
            LUB_FN(getrs)(C, a, piv, dinv, y);
            for (int64_t i = 0; i < 2 * C; i++)
                r[i] = y[i];
        }
        LUB_FN(matvec)(C, s, r, y);
    } else {
        LUB_FN(matvec)(C, a0, r, y);                    /* the loaded psd_n, as torchaudio */
    }
    LUB_FN(store_vec)(C, y, bin0, nl, p->out);
}

LUB_ATTR void LUB_FN(bf_lub_rtf_weights)(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info)
{
    const int64_t C = p->C;
    V *a = LUB_FN(vectors)(ws), *dinv = a + 2 * C * C, *v = dinv + 2 * C, *n = v + 2 * C, *u = n + 2 * C;
    M *piv = (M *)(u + C);
    LUB_FN(load_mat)(C, p->psd_n, bin0, nl, 1, a);
    LUB_FN(load_vec)(C, p->rtf, bin0, nl, v);
    if (p->load.on)
        LUB_FN(tik_reg)(C, a, p->load.diag_eps);
    LUB_FN(put_info)(LUB_FN(getrf)(C, a, piv, dinv), nl, info);
    for (int64_t i = 0; i < 2 * C; i++)
        n[i] = v[i];
    LUB_FN(getrs)(C, a, piv, dinv, n);
    /* the real part of v^H n, plus eps, divides n */
    V dr = (V){ 0 };
    for (int64_t c = 0; c < C; c++)
        dr += v[2 * c] * n[2 * c] + v[2 * c + 1] * n[2 * c + 1];
    dr = dr + (LUB_R)p->eps;
    for (int64_t i = 0; i < 2 * C; i++)
        n[i] = n[i] / dr;
    if (p->ref->present) {   /* times conj(v[ref]), or conj(v . u) */
        V sr, si;
        if (p->ref->index >= 0) {
            sr = v[2 * p->ref->index];
            si = -v[2 * p->ref->index + 1];
        } else {
            LUB_FN(ref_weights)(p, bin0, nl, u);
            sr = (V){ 0 }, si = (V){ 0 };
            for (int64_t c = 0; c < C; c++) {
                sr += v[2 * c] * u[c];
                si -= v[2 * c + 1] * u[c];
            }
        }
        for (int64_t c = 0; c < C; c++) {
            V wr = n[2 * c], wi = n[2 * c + 1];
            n[2 * c] = wr * sr - wi * si;
            n[2 * c + 1] = wr * si + wi * sr;
        }
    }
    LUB_FN(store_vec)(C, n, bin0, nl, p->out);
}

#undef V
#undef M
#undef LUB_LANES
#undef LUB_FN
#undef LUB_CAT3
#undef LUB_CAT3_
#undef LUB_R
#undef LUB_I
#undef LUB_SFX
#undef LUB_ISA
