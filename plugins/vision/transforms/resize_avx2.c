/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resize_avx2.c - the AVX2+FMA row passes of vision.resize. The uint8
** passes compute the same integers as the portable ones (resize_cpu.c):
** int16 weights times pixels, summed in int32 with no overflow possible
** (|sum| < 255 * 2^15 * taps), so the bits do not depend on the order.
** Horizontal: four rows share each output's weights, 16 taps per madd
** (the tables are padded to a multiple of 8 with zero weights, so a last
** step may take 8), four outputs transposed into one store per row; outputs
** whose taps would read past the row end take the portable loop. Vertical:
** 16 (uint8) or 8 (float32) pixels per step, two taps per madd on uint8.
*/
#include <immintrin.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transforms.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline uint8_t clamp_u8(int32_t v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* One output of one row, portably (the row-end outputs). */
AVX2 static inline int32_t dot_u8(const uint8_t *s, const int16_t *w, int32_t n, int32_t init)
{
    int32_t acc = init;
    for (int32_t k = 0; k < n; k++)
        acc += (int32_t)w[k] * s[k];
    return acc;
}

/* The 4 int32 sums [row0, row1, row2, row3] of output x: 16 taps of one row
** per madd, then a last step of 8 taps when the table's width is not a
** multiple of 16; the four rows' 8-lane sums reduce with three hadds. */
AVX2 static inline __m128i dot4_u8(const uint8_t *s0, const uint8_t *s1, const uint8_t *s2, const uint8_t *s3,
                                   const int16_t *w, int32_t taps)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    int32_t t = 0;
    for (; t + 8 < taps; t += 16) {   /* the padded table holds zeros up to a multiple of 8 */
        const __m256i wk = _mm256_loadu_si256((const __m256i *)(w + t));
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s0 + t))), wk));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s1 + t))), wk));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s2 + t))), wk));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s3 + t))), wk));
    }
    if (t < taps) {   /* the last 8 (zero-padded) taps */
        const __m128i wk = _mm_loadu_si128((const __m128i *)(w + t));
        const __m256i z = _mm256_setzero_si256();
        a0 = _mm256_add_epi32(a0, _mm256_inserti128_si256(z, _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s0 + t))), wk), 0));
        a1 = _mm256_add_epi32(a1, _mm256_inserti128_si256(z, _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s1 + t))), wk), 0));
        a2 = _mm256_add_epi32(a2, _mm256_inserti128_si256(z, _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s2 + t))), wk), 0));
        a3 = _mm256_add_epi32(a3, _mm256_inserti128_si256(z, _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s3 + t))), wk), 0));
    }
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));   /* R0 R1 R2 R3 */
}

AVX2 void resize_h_u8_avx2(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    const int32_t init = 1 << (ax->prec - 1), ks = ax->ksize;
    const __m128i vinit = _mm_set1_epi32(init), shift = _mm_cvtsi32_si128(ax->prec);
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const uint8_t *s0 = (const uint8_t *)p->src + r * p->src_row;
        const uint8_t *s1 = s0 + p->src_row, *s2 = s1 + p->src_row, *s3 = s2 + p->src_row;
        uint8_t *d0 = (uint8_t *)p->dst + r * p->dst_row;
        uint8_t *d1 = d0 + p->dst_row, *d2 = d1 + p->dst_row, *d3 = d2 + p->dst_row;
        int64_t x = 0;
        /* four outputs at a time: a 4 x 4 transpose turns [rows] per output
        ** into [outputs] per row, stored as one 32-bit word per row */
        for (; x + 4 <= ax->out && ax->xmin[x + 3] + ks <= ax->in; x += 4) {
            __m128i v[4];
            for (int k = 0; k < 4; k++) {
                const int32_t xm = ax->xmin[x + k];
                v[k] = dot4_u8(s0 + xm, s1 + xm, s2 + xm, s3 + xm, ax->w16 + (x + k) * ks, ax->xsize[x + k]);
                v[k] = _mm_sra_epi32(_mm_add_epi32(v[k], vinit), shift);
            }
            const __m128i t01 = _mm_unpacklo_epi32(v[0], v[1]), t23 = _mm_unpacklo_epi32(v[2], v[3]);
            const __m128i u01 = _mm_unpackhi_epi32(v[0], v[1]), u23 = _mm_unpackhi_epi32(v[2], v[3]);
            const __m128i row0 = _mm_unpacklo_epi64(t01, t23), row1 = _mm_unpackhi_epi64(t01, t23);
            const __m128i row2 = _mm_unpacklo_epi64(u01, u23), row3 = _mm_unpackhi_epi64(u01, u23);
            const __m128i b = _mm_packus_epi16(_mm_packs_epi32(row0, row1), _mm_packs_epi32(row2, row3));
            const uint32_t q0 = (uint32_t)_mm_cvtsi128_si32(b), q1 = (uint32_t)_mm_extract_epi32(b, 1);
            const uint32_t q2 = (uint32_t)_mm_extract_epi32(b, 2), q3 = (uint32_t)_mm_extract_epi32(b, 3);
            memcpy(d0 + x, &q0, 4);
            memcpy(d1 + x, &q1, 4);
            memcpy(d2 + x, &q2, 4);
            memcpy(d3 + x, &q3, 4);
        }
        for (; x < ax->out; x++) {
            const int32_t xmin = ax->xmin[x];
            const int16_t *w = ax->w16 + x * ks;
            if (xmin + ks > ax->in) {   /* the taps would read past the row end */
                d0[x] = clamp_u8(dot_u8(s0 + xmin, w, ax->xsize[x], init) >> ax->prec);
                d1[x] = clamp_u8(dot_u8(s1 + xmin, w, ax->xsize[x], init) >> ax->prec);
                d2[x] = clamp_u8(dot_u8(s2 + xmin, w, ax->xsize[x], init) >> ax->prec);
                d3[x] = clamp_u8(dot_u8(s3 + xmin, w, ax->xsize[x], init) >> ax->prec);
                continue;
            }
            __m128i v = dot4_u8(s0 + xmin, s1 + xmin, s2 + xmin, s3 + xmin, w, ax->xsize[x]);
            v = _mm_sra_epi32(_mm_add_epi32(v, vinit), shift);
            v = _mm_packus_epi16(_mm_packs_epi32(v, v), v);
            const uint32_t q = (uint32_t)_mm_cvtsi128_si32(v);
            d0[x] = (uint8_t)q;
            d1[x] = (uint8_t)(q >> 8);
            d2[x] = (uint8_t)(q >> 16);
            d3[x] = (uint8_t)(q >> 24);
        }
    }
    if (r < r1) {
        resize_pass rest = *p;
        resize_h_u8(&rest, r, r1);
    }
}

AVX2 void resize_v_u8_avx2(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    const int32_t init = 1 << (ax->prec - 1);
    const __m256i vinit = _mm256_set1_epi32(init);
    const __m128i shift = _mm_cvtsi32_si128(ax->prec);
    const int64_t n = p->dst_row;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t plane = r / p->rows_per_plane, y = r % p->rows_per_plane;
        const uint8_t *src = (const uint8_t *)p->src + plane * p->src_plane + (int64_t)ax->xmin[y] * p->src_row;
        uint8_t *dst = (uint8_t *)p->dst + r * p->dst_row;
        const int16_t *w = ax->w16 + y * ax->ksize;
        const int32_t taps = ax->xsize[y];
        int64_t x = 0;
        for (; x + 16 <= n; x += 16) {
            __m256i lo = vinit, hi = vinit;
            int32_t k = 0;
            for (; k + 2 <= taps; k += 2) {
                const __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(src + k * p->src_row + x)));
                const __m256i b =
                    _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(src + (k + 1) * p->src_row + x)));
                const __m256i wk = _mm256_set1_epi32((int32_t)(((uint32_t)(uint16_t)w[k + 1] << 16) | (uint16_t)w[k]));
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wk));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wk));
            }
            if (k < taps) {
                const __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(src + k * p->src_row + x)));
                const __m256i z = _mm256_setzero_si256();
                const __m256i wk = _mm256_set1_epi32((int32_t)(uint16_t)w[k]);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, z), wk));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, z), wk));
            }
            /* lo = pixels [0..3 | 8..11], hi = [4..7 | 12..15] */
            lo = _mm256_sra_epi32(lo, shift);
            hi = _mm256_sra_epi32(hi, shift);
            __m256i v = _mm256_packs_epi32(lo, hi);                 /* [0..7 | 8..15] int16 */
            v = _mm256_packus_epi16(v, v);                         /* [0..7 0..7 | 8..15 8..15] */
            v = _mm256_permute4x64_epi64(v, 0x08);                 /* [0..7 8..15 ...] */
            _mm_storeu_si128((__m128i *)(dst + x), _mm256_castsi256_si128(v));
        }
        for (; x < n; x++) {
            int32_t acc = init;
            for (int32_t k = 0; k < taps; k++)
                acc += (int32_t)w[k] * src[k * p->src_row + x];
            dst[x] = clamp_u8(acc >> ax->prec);
        }
    }
}

/* float32: the chain of resize_chain_f32 (resize_cpu.c), the same bits.
** Horizontal: eight rows at a time, transposed so that each lane carries
** a row (h_f32_rows8), the rows left one output at a time. Vertical: eight
** outputs a step. */
/* The 8 x 8 block at src (rows sstride apart) transposed into dst (rows
** dstride apart). */
AVX2 static inline void transpose8(const float *src, int64_t sstride, float *dst, int64_t dstride)
{
    __m256 r[8], t[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm256_loadu_ps(src + k * sstride);
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        r[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
        r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps(dst + k * dstride, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
        _mm256_storeu_ps(dst + (k + 4) * dstride, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
    }
}

/* Eight rows at once: the rows transposed into cols ([in][8], a row per
** lane), every output the chain of resize_chain_f32 on eight lanes with
** broadcast weights (or resize_plain_taps's), the [out][8] results
** transposed back. */
AVX2 static void h_f32_rows8(const resize_pass *p, const float *src, float *dst, float *cols, float *outs)
{
    const resize_axis *ax = p->ax;
    const int64_t in = ax->in, sr = p->src_row, dr = p->dst_row;
    int64_t c = 0;
    for (; c + 8 <= in; c += 8)
        transpose8(src + c, sr, cols + c * 8, 8);
    for (; c < in; c++)
        for (int k = 0; k < 8; k++)
            cols[c * 8 + k] = src[k * sr + c];
    for (int64_t x = 0; ax->tap_idx && x < ax->out; x++) {   /* resize_plain_taps on eight lanes */
        const int32_t *ix = ax->tap_idx + x * ax->taps;
        const float *w = ax->tap_w + x * ax->taps;
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(cols + (int64_t)ix[1] * 8), _mm256_set1_ps(w[1]));
        t = _mm256_fmadd_ps(_mm256_loadu_ps(cols + (int64_t)ix[0] * 8), _mm256_set1_ps(w[0]), t);
        for (int32_t k = 2; k < ax->taps; k++)
            t = _mm256_fmadd_ps(_mm256_loadu_ps(cols + (int64_t)ix[k] * 8), _mm256_set1_ps(w[k]), t);
        _mm256_storeu_ps(outs + x * 8, t);
    }
    for (int64_t x = 0; !ax->tap_idx && x < ax->out; x++) {
        const float *w = ax->wf + x * ax->ksize, *s = cols + (int64_t)ax->xmin[x] * 8;
        const int32_t taps = ax->xsize[x], unfused = PREPROCESS_UNFUSED_TAPS(taps);
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(s), _mm256_set1_ps(w[0]));
        int32_t j = 1;
        for (; j <= unfused; j++)
            t = _mm256_add_ps(t, _mm256_mul_ps(_mm256_loadu_ps(s + j * 8), _mm256_set1_ps(w[j])));
        for (; j < taps; j++)
            t = _mm256_fmadd_ps(_mm256_loadu_ps(s + j * 8), _mm256_set1_ps(w[j]), t);
        _mm256_storeu_ps(outs + x * 8, t);
    }
    int64_t x = 0;
    for (; x + 8 <= ax->out; x += 8)
        transpose8(outs + x * 8, 8, dst + x, dr);
    for (; x < ax->out; x++)
        for (int k = 0; k < 8; k++)
            dst[k * dr + x] = outs[x * 8 + k];
}

AVX2 void resize_h_f32_avx2(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    int64_t r = r0;
    /* a window of no taps reads x0 * w0 in the portable chain: rows of those stay there */
    int blocks = r1 - r0 >= 8;
    for (int64_t x = 0; blocks && !ax->tap_idx && x < ax->out; x++)
        blocks = ax->xsize[x] >= 1;
    float *buf = blocks ? malloc((size_t)(ax->in + ax->out) * 8 * sizeof(float)) : NULL;
    if (buf)
        for (; r + 8 <= r1; r += 8)
            h_f32_rows8(p, (const float *)p->src + r * p->src_row, (float *)p->dst + r * p->dst_row, buf,
                        buf + ax->in * 8);
    free(buf);
    for (; r < r1; r++) {
        const float *src = (const float *)p->src + r * p->src_row;
        float *dst = (float *)p->dst + r * p->dst_row;
        for (int64_t x = 0; x < ax->out; x++)
            dst[x] = ax->tap_idx ? resize_plain_taps(src, 1, ax->tap_idx + x * ax->taps, ax->tap_w + x * ax->taps, ax->taps)
                                 : resize_chain_f32(src + ax->xmin[x], 1, ax->wf + x * ax->ksize, ax->xsize[x]);
    }
}

AVX2 void resize_v_f32_avx2(const resize_pass *p, int64_t r0, int64_t r1)
{
    const resize_axis *ax = p->ax;
    const int64_t n = p->dst_row;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t plane = r / p->rows_per_plane, y = r % p->rows_per_plane;
        const float *base = (const float *)p->src + plane * p->src_plane;
        float *dst = (float *)p->dst + r * p->dst_row;
        if (!ax->tap_idx) {
            preprocess_v_avx2(ax->wf + y * ax->ksize, ax->xsize[y], base + (int64_t)ax->xmin[y] * p->src_row,
                              p->src_row, n, dst);
            continue;
        }
        const int32_t *iy = ax->tap_idx + y * ax->taps;
        const float *w = ax->tap_w + y * ax->taps;
        int64_t x = 0;
        for (; x + 8 <= n; x += 8) {
            __m256 t = _mm256_mul_ps(_mm256_loadu_ps(base + (int64_t)iy[1] * p->src_row + x), _mm256_set1_ps(w[1]));
            t = _mm256_fmadd_ps(_mm256_loadu_ps(base + (int64_t)iy[0] * p->src_row + x), _mm256_set1_ps(w[0]), t);
            for (int32_t k = 2; k < ax->taps; k++)
                t = _mm256_fmadd_ps(_mm256_loadu_ps(base + (int64_t)iy[k] * p->src_row + x), _mm256_set1_ps(w[k]), t);
            _mm256_storeu_ps(dst + x, t);
        }
        for (; x < n; x++)
            dst[x] = resize_plain_taps(base + x, p->src_row, iy, w, ax->taps);
    }
}
