/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_avx2_tmpl.h - the AVX2+FMA psd and apply loops of
** beamform_avx2.c for one precision, included once per precision with:
**   BF_SUF     c64 or c128 (the name suffix)
**   R, V       the real type and its 256-bit vector
**   N          complex numbers per vector (4 for c64, 2 for c128)
**   ZERO, LOADU, STOREU, SET1, MUL, FMADD   the vector operations
**   SWAP(v)    (re, im) swapped in every complex lane
**   ALTERNATE()  the vector (1, -1, 1, -1, ...)
**   HSUM, HDIFF  the sum of the lanes; odd lanes minus even lanes
** It undefines BF_SUF at its end; the includer undefines the rest.
*/
#define BF_CAT2(a, b) a##_##b
#define BF_CAT(a, b) BF_CAT2(a, b)
#define BF_FN(name) BF_CAT(name, BF_SUF)

AVX2 void BF_FN(bf_psd_bin_avx2)(int64_t C, int64_t T, const R *x, int64_t ldx, const R *ym, const R *ys, int64_t ldy,
                                  R *acc)
{
    const int64_t TV = T & ~(int64_t)(N - 1);
    for (int64_t c = 0; c < C; c++) {
        const R *a = x + 2 * c * ldx;
        int64_t e = c;
        for (; e + 1 < C; e += 2) {
            const R *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            const R *y1 = y0 + 2 * ldy, *s1 = s0 + 2 * ldy;
            V r0 = ZERO(), i0 = ZERO();
            V r1 = ZERO(), i1 = ZERO();
            for (int64_t t = 0; t < TV; t += N) {
                V xv = LOADU(a + 2 * t);
                r0 = FMADD(xv, LOADU(y0 + 2 * t), r0);
                i0 = FMADD(xv, LOADU(s0 + 2 * t), i0);
                r1 = FMADD(xv, LOADU(y1 + 2 * t), r1);
                i1 = FMADD(xv, LOADU(s1 + 2 * t), i1);
            }
            R sr0 = HSUM(r0), si0 = HDIFF(i0), sr1 = HSUM(r1), si1 = HDIFF(i1);
            for (int64_t t = TV; t < T; t++) {
                sr0 += a[2 * t] * y0[2 * t] + a[2 * t + 1] * y0[2 * t + 1];
                si0 += a[2 * t + 1] * y0[2 * t] - a[2 * t] * y0[2 * t + 1];
                sr1 += a[2 * t] * y1[2 * t] + a[2 * t + 1] * y1[2 * t + 1];
                si1 += a[2 * t + 1] * y1[2 * t] - a[2 * t] * y1[2 * t + 1];
            }
            acc[2 * (c * C + e)] += sr0;
            acc[2 * (c * C + e) + 1] += si0;
            acc[2 * (c * C + e + 1)] += sr1;
            acc[2 * (c * C + e + 1) + 1] += si1;
        }
        for (; e < C; e++) {
            const R *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            V r0 = ZERO(), i0 = ZERO();
            for (int64_t t = 0; t < TV; t += N) {
                V xv = LOADU(a + 2 * t);
                r0 = FMADD(xv, LOADU(y0 + 2 * t), r0);
                i0 = FMADD(xv, LOADU(s0 + 2 * t), i0);
            }
            R sr0 = HSUM(r0), si0 = HDIFF(i0);
            for (int64_t t = TV; t < T; t++) {
                sr0 += a[2 * t] * y0[2 * t] + a[2 * t + 1] * y0[2 * t + 1];
                si0 += a[2 * t + 1] * y0[2 * t] - a[2 * t] * y0[2 * t + 1];
            }
            acc[2 * (c * C + e)] += sr0;
            acc[2 * (c * C + e) + 1] += si0;
        }
    }
}

AVX2 void BF_FN(bf_apply_bin_avx2)(int64_t C, int64_t T, const R *w, const R *x, int64_t ldx, R *out)
{
    const int64_t TV = T & ~(int64_t)(N - 1);
    const V ALT = ALTERNATE();
    for (int64_t t = 0; t < TV; t += N) {
        V acc = ZERO();
        for (int64_t c = 0; c < C; c++) {
            const V xv = LOADU(x + 2 * (c * ldx + t));
            const V wr = SET1(w[2 * c]);
            const V wi = MUL(SET1(w[2 * c + 1]), ALT);    /* (wi, -wi, ...) */
            acc = FMADD(wr, xv, acc);
            acc = FMADD(wi, SWAP(xv), acc);
        }
        STOREU(out + 2 * t, acc);
    }
    for (int64_t t = TV; t < T; t++) {
        R re = 0, im = 0;
        for (int64_t c = 0; c < C; c++) {
            const R *xc = x + 2 * (c * ldx + t);
            re += w[2 * c] * xc[0] + w[2 * c + 1] * xc[1];
            im += w[2 * c] * xc[1] - w[2 * c + 1] * xc[0];
        }
        out[2 * t] = re;
        out[2 * t + 1] = im;
    }
}

#undef BF_FN
#undef BF_CAT
#undef BF_CAT2
#undef BF_SUF
