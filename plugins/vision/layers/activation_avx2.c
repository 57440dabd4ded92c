/* SPDX-License-Identifier: BSD-3-Clause */
/*
** activation_avx2.c - vision.gelu (approximate='none') with AVX2+FMA
** (layers.h: layers_gelu_erf_avx2), called only when the core's CPU
** features allow it (activation_cpu.c). simd_avx2.h's pk_gelu_erf_ps, the
** one the shared GEMM's epilogue uses: 1 + erf formed from erfc, within 16
** ulp of the exact GELU for x >= -2 and 96 on [-6, -2) (libm's
** 0.5 x (1 + erff(x / sqrt 2)) loses its digits there, where 1 + erf cancels). The tail runs through a zero-padded
** vector, so every element gets the same formula.
*/
#include <stdint.h>
#include <string.h>

#include "layers.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "simd_avx2.h"

__attribute__((target("avx2,fma"))) void layers_gelu_erf_avx2(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, pk_gelu_erf_ps(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float t[8] = { 0 };
        memcpy(t, x + i, (size_t)(n - i) * sizeof(float));
        _mm256_storeu_ps(t, pk_gelu_erf_ps(_mm256_loadu_ps(t)));
        memcpy(y + i, t, (size_t)(n - i) * sizeof(float));
    }
}
#endif
