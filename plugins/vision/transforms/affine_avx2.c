/* SPDX-License-Identifier: BSD-3-Clause */
/*
** affine_avx2.c - the AVX2+FMA sampling row of vision.affine, rotate,
** perspective and elastic on images: eight output pixels a step from the
** shared sampling (grid_lanes, filled once per call by affine_cpu.c), with
** the portable row's operations in its order (grid_row_from_taps): the
** weights ds * de, ds * dw, dn * de, dn * dw from dw, dn and their
** complements; the corners outside read as +0; bilinear sums p00 * nw then
** FMAs of ne, sw, se; the fill's mask likewise and (v - fill) * m + fill
** unfused; uint8 rounded half to even and saturated (NaN to 0). So the bits
** are the same.
**
** uint8: each pair of corners (nw, ne and sw, se) is one 32-bit gather at
** the pair's offset, shifted up a byte when the pixel's left column lies
** outside (its read then starts at the right corner, so no offset is
** negative); the caller keeps a row whose reads reach past the end of the
** source buffer on the portable loop (grid_lanes.row_end). float32: one
** gather per corner at its offset, 0 where outside.
*/
#include <immintrin.h>
#include <stdint.h>

#include "transforms.h"

#define AVX2 __attribute__((target("avx2,fma")))

/* lanes of eight pixels with inside bit `bit` set */
AVX2 static inline __m256i inside_of(__m256i in, int bit)
{
    const __m256i b = _mm256_set1_epi32(bit);
    return _mm256_cmpeq_epi32(_mm256_and_si256(in, b), b);
}

AVX2 static inline __m256 byte_of(__m256i word, int shift, __m256i inside)
{
    const __m256i b = _mm256_and_si256(_mm256_srli_epi32(word, shift), _mm256_set1_epi32(255));
    return _mm256_cvtepi32_ps(_mm256_and_si256(b, inside));
}

AVX2 static inline __m256 float_at(const float *plane, __m256i idx, __m256i inside)
{
    return _mm256_and_ps(_mm256_i32gather_ps(plane, _mm256_and_si256(idx, inside), 4), _mm256_castsi256_ps(inside));
}

AVX2 int64_t grid_row_avx2(const grid_lanes *l, int64_t k0, int64_t n, int u8, int nearest, int has_fill, float fill,
                           const void *plane, void *dst)
{
    const __m256 f = _mm256_set1_ps(fill), one = _mm256_set1_ps(1.0f);
    const __m256i left_out = _mm256_set1_epi32(GRID_LANE_LEFT_OUT), eight = _mm256_set1_epi32(8);
    const int *bytes = plane;
    const float *floats = plane;
    int64_t x = 0;
    for (; x + 8 <= n; x += 8) {
        const int64_t k = k0 + x;
        const __m256i in = _mm256_loadu_si256((const __m256i *)(l->in + k));
        const __m256i top = _mm256_loadu_si256((const __m256i *)(l->top + k));
        const __m256i i0 = inside_of(in, 1);
        __m256 v;
        if (nearest) {
            v = u8 ? byte_of(_mm256_i32gather_epi32(bytes, top, 1), 0, i0) : float_at(floats, top, i0);
            if (has_fill)
                v = _mm256_blendv_ps(f, v, _mm256_castsi256_ps(i0));
        } else {
            const __m256i i1 = inside_of(in, 2), i2 = inside_of(in, 4), i3 = inside_of(in, 8);
            const __m256i bottom = _mm256_loadu_si256((const __m256i *)(l->bottom + k));
            const __m256i s = _mm256_cmpeq_epi32(_mm256_and_si256(in, left_out), left_out);
            __m256 p00, p01, p10, p11;
            if (u8) {
                const __m256i up = _mm256_and_si256(s, eight);
                const __m256i wt = _mm256_sllv_epi32(_mm256_i32gather_epi32(bytes, top, 1), up);
                const __m256i wb = _mm256_sllv_epi32(_mm256_i32gather_epi32(bytes, bottom, 1), up);
                p00 = byte_of(wt, 0, i0);
                p01 = byte_of(wt, 8, i1);
                p10 = byte_of(wb, 0, i2);
                p11 = byte_of(wb, 8, i3);
            } else {   /* s is -1 where the read starts a corner to the right */
                const __m256i t0 = _mm256_add_epi32(top, s), b0 = _mm256_add_epi32(bottom, s);
                const __m256i d1 = _mm256_set1_epi32(1);
                p00 = float_at(floats, t0, i0);
                p01 = float_at(floats, _mm256_add_epi32(t0, d1), i1);
                p10 = float_at(floats, b0, i2);
                p11 = float_at(floats, _mm256_add_epi32(b0, d1), i3);
            }
            const __m256 dw = _mm256_loadu_ps(l->dx + k), dn = _mm256_loadu_ps(l->dy + k);
            const __m256 de = _mm256_sub_ps(one, dw), ds = _mm256_sub_ps(one, dn);
            const __m256 nw = _mm256_mul_ps(ds, de), ne = _mm256_mul_ps(ds, dw);
            const __m256 sw = _mm256_mul_ps(dn, de), se = _mm256_mul_ps(dn, dw);
            v = _mm256_mul_ps(p00, nw);
            v = _mm256_fmadd_ps(p01, ne, v);
            v = _mm256_fmadd_ps(p10, sw, v);
            v = _mm256_fmadd_ps(p11, se, v);
            if (has_fill) {
                __m256 m = _mm256_mul_ps(_mm256_and_ps(one, _mm256_castsi256_ps(i0)), nw);
                m = _mm256_fmadd_ps(_mm256_and_ps(one, _mm256_castsi256_ps(i1)), ne, m);
                m = _mm256_fmadd_ps(_mm256_and_ps(one, _mm256_castsi256_ps(i2)), sw, m);
                m = _mm256_fmadd_ps(_mm256_and_ps(one, _mm256_castsi256_ps(i3)), se, m);
                v = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v, f), m), f);
            }
        }
        if (u8) {
            /* max(q, 0) gives 0 for NaN (its second operand), as !(q > 0) */
            const __m256 q = _mm256_min_ps(_mm256_max_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                                         _mm256_setzero_ps()),
                                           _mm256_set1_ps(255.0f));
            const __m256i qi = _mm256_cvttps_epi32(q);
            const __m128i q16 = _mm_packus_epi32(_mm256_castsi256_si128(qi), _mm256_extracti128_si256(qi, 1));
            _mm_storel_epi64((__m128i *)((uint8_t *)dst + x), _mm_packus_epi16(q16, q16));
        } else {
            _mm256_storeu_ps((float *)dst + x, v);
        }
    }
    return x;
}
