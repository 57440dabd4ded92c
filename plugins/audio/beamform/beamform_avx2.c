/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_avx2.c - the AVX2+FMA loops of the beamforming module, called
** only when the core's CPU features allow them (bf_have_avx2).
**
** psd: one bin's Hermitian rank-T update, the hot loop of mask-based
** beamforming. For the pair (c, e) it sums x_c[t] conj(y_e[t]) over the
** frames, y the mask-weighted frames: with interleaved (re, im) lanes,
**   acc1 += x * y        lanes xr*yr, xi*yi     re = sum of both
**   acc2 += x * swap(y)  lanes xr*yi, xi*yr     im = odd lanes - even lanes
** so a pair costs two FMAs per vector; two columns e share each load of x.
** The caller precomputes swap(y) (ys) once per channel and block.
**
** apply: sum_c conj(w_c) x_c = (wr xr + wi xi) + i (wr xi - wi xr), as
** out += wr * x + (wi, -wi) * swap(x).
*/
#include <immintrin.h>

#include "beamform_cpu.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline float hsum_ps(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2 static inline double hsum_pd(__m256d v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* odd lanes minus even lanes */
AVX2 static inline float hdiff_ps(__m256 v)
{
    const __m256 sign = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);
    return hsum_ps(_mm256_mul_ps(v, sign));
}

AVX2 static inline double hdiff_pd(__m256d v)
{
    const __m256d sign = _mm256_setr_pd(-1, 1, -1, 1);
    return hsum_pd(_mm256_mul_pd(v, sign));
}

AVX2 void bf_psd_bin_avx2_c64(int64_t C, int64_t T, const float *x, int64_t ldx, const float *ym, const float *ys,
                              int64_t ldy, float *acc)
{
    const int64_t T4 = T & ~(int64_t)3;
    for (int64_t c = 0; c < C; c++) {
        const float *a = x + 2 * c * ldx;
        int64_t e = c;
        for (; e + 1 < C; e += 2) {
            const float *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            const float *y1 = y0 + 2 * ldy, *s1 = s0 + 2 * ldy;
            __m256 r0 = _mm256_setzero_ps(), i0 = _mm256_setzero_ps();
            __m256 r1 = _mm256_setzero_ps(), i1 = _mm256_setzero_ps();
            for (int64_t t = 0; t < T4; t += 4) {
                __m256 xv = _mm256_loadu_ps(a + 2 * t);
                r0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y0 + 2 * t), r0);
                i0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(s0 + 2 * t), i0);
                r1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y1 + 2 * t), r1);
                i1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(s1 + 2 * t), i1);
            }
            float sr0 = hsum_ps(r0), si0 = hdiff_ps(i0), sr1 = hsum_ps(r1), si1 = hdiff_ps(i1);
            for (int64_t t = T4; t < T; t++) {
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
            const float *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            __m256 r0 = _mm256_setzero_ps(), i0 = _mm256_setzero_ps();
            for (int64_t t = 0; t < T4; t += 4) {
                __m256 xv = _mm256_loadu_ps(a + 2 * t);
                r0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y0 + 2 * t), r0);
                i0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(s0 + 2 * t), i0);
            }
            float sr0 = hsum_ps(r0), si0 = hdiff_ps(i0);
            for (int64_t t = T4; t < T; t++) {
                sr0 += a[2 * t] * y0[2 * t] + a[2 * t + 1] * y0[2 * t + 1];
                si0 += a[2 * t + 1] * y0[2 * t] - a[2 * t] * y0[2 * t + 1];
            }
            acc[2 * (c * C + e)] += sr0;
            acc[2 * (c * C + e) + 1] += si0;
        }
    }
}

AVX2 void bf_psd_bin_avx2_c128(int64_t C, int64_t T, const double *x, int64_t ldx, const double *ym,
                               const double *ys, int64_t ldy, double *acc)
{
    const int64_t T2 = T & ~(int64_t)1;
    for (int64_t c = 0; c < C; c++) {
        const double *a = x + 2 * c * ldx;
        int64_t e = c;
        for (; e + 1 < C; e += 2) {
            const double *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            const double *y1 = y0 + 2 * ldy, *s1 = s0 + 2 * ldy;
            __m256d r0 = _mm256_setzero_pd(), i0 = _mm256_setzero_pd();
            __m256d r1 = _mm256_setzero_pd(), i1 = _mm256_setzero_pd();
            for (int64_t t = 0; t < T2; t += 2) {
                __m256d xv = _mm256_loadu_pd(a + 2 * t);
                r0 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(y0 + 2 * t), r0);
                i0 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(s0 + 2 * t), i0);
                r1 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(y1 + 2 * t), r1);
                i1 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(s1 + 2 * t), i1);
            }
            double sr0 = hsum_pd(r0), si0 = hdiff_pd(i0), sr1 = hsum_pd(r1), si1 = hdiff_pd(i1);
            for (int64_t t = T2; t < T; t++) {
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
            const double *y0 = ym + 2 * e * ldy, *s0 = ys + 2 * e * ldy;
            __m256d r0 = _mm256_setzero_pd(), i0 = _mm256_setzero_pd();
            for (int64_t t = 0; t < T2; t += 2) {
                __m256d xv = _mm256_loadu_pd(a + 2 * t);
                r0 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(y0 + 2 * t), r0);
                i0 = _mm256_fmadd_pd(xv, _mm256_loadu_pd(s0 + 2 * t), i0);
            }
            double sr0 = hsum_pd(r0), si0 = hdiff_pd(i0);
            for (int64_t t = T2; t < T; t++) {
                sr0 += a[2 * t] * y0[2 * t] + a[2 * t + 1] * y0[2 * t + 1];
                si0 += a[2 * t + 1] * y0[2 * t] - a[2 * t] * y0[2 * t + 1];
            }
            acc[2 * (c * C + e)] += sr0;
            acc[2 * (c * C + e) + 1] += si0;
        }
    }
}

AVX2 void bf_apply_bin_avx2_c64(int64_t C, int64_t T, const float *w, const float *x, int64_t ldx, float *out)
{
    const int64_t T4 = T & ~(int64_t)3;
    for (int64_t t = 0; t < T4; t += 4) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t c = 0; c < C; c++) {
            const __m256 xv = _mm256_loadu_ps(x + 2 * (c * ldx + t));
            const __m256 wr = _mm256_set1_ps(w[2 * c]);
            const __m256 wi = _mm256_setr_ps(w[2 * c + 1], -w[2 * c + 1], w[2 * c + 1], -w[2 * c + 1],
                                             w[2 * c + 1], -w[2 * c + 1], w[2 * c + 1], -w[2 * c + 1]);
            acc = _mm256_fmadd_ps(wr, xv, acc);
            acc = _mm256_fmadd_ps(wi, _mm256_permute_ps(xv, 0xB1), acc);
        }
        _mm256_storeu_ps(out + 2 * t, acc);
    }
    for (int64_t t = T4; t < T; t++) {
        float re = 0, im = 0;
        for (int64_t c = 0; c < C; c++) {
            const float *xc = x + 2 * (c * ldx + t);
            re += w[2 * c] * xc[0] + w[2 * c + 1] * xc[1];
            im += w[2 * c] * xc[1] - w[2 * c + 1] * xc[0];
        }
        out[2 * t] = re;
        out[2 * t + 1] = im;
    }
}

AVX2 void bf_apply_bin_avx2_c128(int64_t C, int64_t T, const double *w, const double *x, int64_t ldx, double *out)
{
    const int64_t T2 = T & ~(int64_t)1;
    for (int64_t t = 0; t < T2; t += 2) {
        __m256d acc = _mm256_setzero_pd();
        for (int64_t c = 0; c < C; c++) {
            const __m256d xv = _mm256_loadu_pd(x + 2 * (c * ldx + t));
            const __m256d wr = _mm256_set1_pd(w[2 * c]);
            const __m256d wi = _mm256_setr_pd(w[2 * c + 1], -w[2 * c + 1], w[2 * c + 1], -w[2 * c + 1]);
            acc = _mm256_fmadd_pd(wr, xv, acc);
            acc = _mm256_fmadd_pd(wi, _mm256_permute_pd(xv, 0x5), acc);
        }
        _mm256_storeu_pd(out + 2 * t, acc);
    }
    for (int64_t t = T2; t < T; t++) {
        double re = 0, im = 0;
        for (int64_t c = 0; c < C; c++) {
            const double *xc = x + 2 * (c * ldx + t);
            re += w[2 * c] * xc[0] + w[2 * c + 1] * xc[1];
            im += w[2 * c] * xc[1] - w[2 * c + 1] * xc[0];
        }
        out[2 * t] = re;
        out[2 * t + 1] = im;
    }
}
