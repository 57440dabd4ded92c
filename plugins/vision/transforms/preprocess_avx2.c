/* SPDX-License-Identifier: BSD-3-Clause */
/*
** preprocess_avx2.c - the AVX2+FMA passes of vision.preprocess. Each output
** is the same sequential chain as the portable loop (t = x0 w0, then the
** first PREPROCESS_UNFUSED_TAPS taps as t + xj wj, rounded twice, the rest
** as fma(xj, wj, t)), only eight of them at a time: eight rows (gathered)
** in the horizontal pass, eight columns in the vertical one. So both paths
** give the same bits. (ISO C11: GCC contracts no mul and add into an FMA.)
*/
#include <immintrin.h>
#include <math.h>

#include "transforms.h"

#define AVX2 __attribute__((target("avx2,fma")))

/* One tap of the chain: t + x w rounded twice (unfused), or fma(x, w, t). */
AVX2 static inline __m256 tap(__m256 t, __m256 x, float w, int unfused)
{
    return unfused ? _mm256_add_ps(t, _mm256_mul_ps(x, _mm256_set1_ps(w))) : _mm256_fmadd_ps(x, _mm256_set1_ps(w), t);
}

/* Eight rows of src (row_stride elements apart; columns col_stride apart),
** output columns [x0, x0 + nx): dst[r * dst_stride + k]. uint8 sources are
** gathered as 4-byte words (the caller keeps those reads inside the tensor)
** and masked to their low byte. */
AVX2 void preprocess_h_avx2(const float *wf, const int32_t *xmin, const int32_t *xsize, int32_t ks, int64_t x0,
                            int64_t nx, const void *src, int u8, int64_t row_stride, int64_t col_stride, float *dst,
                            int64_t dst_stride)
{
    const int32_t es = u8 ? 1 : 4, rsb = (int32_t)(row_stride * es);
    const int64_t csb = col_stride * es;
    const __m256i vidx = _mm256_setr_epi32(0, rsb, 2 * rsb, 3 * rsb, 4 * rsb, 5 * rsb, 6 * rsb, 7 * rsb);
    const __m256i low = _mm256_set1_epi32(0xff);
    float lanes[8] __attribute__((aligned(32)));
    for (int64_t k = 0; k < nx; k++) {
        const int64_t x = x0 + k;
        const float *w = wf + x * ks;
        const char *base = (const char *)src + (int64_t)xmin[x] * csb;
        const int32_t unfused = PREPROCESS_UNFUSED_TAPS(xsize[x]);
        __m256 t;
        if (u8) {
            __m256i v = _mm256_and_si256(_mm256_i32gather_epi32((const int *)base, vidx, 1), low);
            t = _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(w[0]));
            for (int32_t j = 1; j < xsize[x]; j++) {
                v = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(base + j * csb), vidx, 1), low);
                t = tap(t, _mm256_cvtepi32_ps(v), w[j], j <= unfused);
            }
        } else {
            t = _mm256_mul_ps(_mm256_i32gather_ps((const float *)base, vidx, 1), _mm256_set1_ps(w[0]));
            for (int32_t j = 1; j < xsize[x]; j++)
                t = tap(t, _mm256_i32gather_ps((const float *)(base + j * csb), vidx, 1), w[j], j <= unfused);
        }
        _mm256_store_ps(lanes, t);
        for (int r = 0; r < 8; r++)
            dst[r * dst_stride + k] = lanes[r];
    }
}

/* dst[x] = the tap chain over rows src + j * src_stride, for x < n. */
AVX2 void preprocess_v_avx2(const float *w, int32_t taps, const float *src, int64_t src_stride, int64_t n,
                            float *dst)
{
    const int32_t unfused = PREPROCESS_UNFUSED_TAPS(taps);
    int64_t x = 0;
    for (; x + 8 <= n; x += 8) {
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(src + x), _mm256_set1_ps(w[0]));
        for (int32_t j = 1; j < taps; j++)
            t = tap(t, _mm256_loadu_ps(src + j * src_stride + x), w[j], j <= unfused);
        _mm256_storeu_ps(dst + x, t);
    }
    for (; x < n; x++) {
        float t = src[x] * w[0];
        int32_t j = 1;
        for (; j <= unfused; j++)
            t = t + src[j * src_stride + x] * w[j];
        for (; j < taps; j++)
            t = fmaf(src[j * src_stride + x], w[j], t);
        dst[x] = t;
    }
}
