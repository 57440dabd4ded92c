/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_avx2.c - the argmax of frames, portable and AVX2 (ctc_greedy.h).
** Both return the first index of the maximum, a NaN counting as the
** maximum (torch.argmax); the AVX2 loop finds the maximum 8 lanes at a
** time, then its first position, and leaves rows with a NaN to the
** portable loop.
*/
#include <immintrin.h>
#include <math.h>

#include "ctc_greedy.h"

static int32_t argmax_row(const float *x, int64_t n)
{
    int32_t best = 0;
    float v = x[0];
    if (isnan(v))
        return 0;
    for (int64_t i = 1; i < n; i++) {
        if (isnan(x[i]))
            return (int32_t)i;
        if (x[i] > v) {
            v = x[i];
            best = (int32_t)i;
        }
    }
    return best;
}

void ctc_argmax_rows_scalar(const float *x, int64_t n, int64_t begin, int64_t end, int32_t *out)
{
    for (int64_t r = begin; r < end; r++)
        out[r] = argmax_row(x + r * n, n);
}

__attribute__((target("avx2,fma"))) static int32_t argmax_row_avx2(const float *x, int64_t n)
{
    if (n < 16)
        return argmax_row(x, n);
    __m256 mx = _mm256_loadu_ps(x), nan = _mm256_cmp_ps(mx, mx, _CMP_UNORD_Q);
    int64_t i = 8;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        mx = _mm256_max_ps(mx, v);
    }
    float m[8];
    _mm256_storeu_ps(m, mx);
    float best = m[0];
    for (int k = 1; k < 8; k++)
        best = m[k] > best ? m[k] : best;
    for (; i < n; i++) {
        if (isnan(x[i]))
            return argmax_row(x, n);
        best = x[i] > best ? x[i] : best;
    }
    if (_mm256_movemask_ps(nan) != 0)
        return argmax_row(x, n);
    const __m256 b = _mm256_set1_ps(best);
    for (i = 0; i + 8 <= n; i += 8) {
        int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), b, _CMP_EQ_OQ));
        if (mask != 0)
            return (int32_t)(i + __builtin_ctz((unsigned)mask));
    }
    for (; i < n; i++)
        if (x[i] == best)
            return (int32_t)i;
    return 0;
}

__attribute__((target("avx2,fma"))) void ctc_argmax_rows_avx2(const float *x, int64_t n, int64_t begin, int64_t end,
                                                               int32_t *out)
{
    for (int64_t r = begin; r < end; r++)
        out[r] = argmax_row_avx2(x + r * n, n);
}
