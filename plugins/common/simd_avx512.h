/* SPDX-License-Identifier: BSD-3-Clause */
/*
** simd_avx512.h - the 16-lane forms of simd_avx2.h's vector exp and GELU
** (erf), for code built with -mavx512f whose callers check the core's CPU
** features first (plugins/common/cpu.h).
**
** Contract: lane for lane the same bits as pk_exp_ps and pk_gelu_erf_ps.
** Each function is the 8-lane one operation for operation (the same
** constants, the same fma/mul/add/div/round/convert, each IEEE-rounded the
** same way; the blend by a compare mask instead of blendv), so an AVX-512
** path that uses them agrees with the AVX2 path bit for bit
** (tests/common/test_simd.c checks it). Only AVX512F instructions: the sign
** mask is cleared in the integer unit because andnot_ps is AVX512DQ.
*/
#ifndef LOOM_PACK_SIMD_AVX512_H
#define LOOM_PACK_SIMD_AVX512_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define PK_AVX512_INLINE static inline __attribute__((target("avx512f,fma")))

/* exp of sixteen floats: pk_exp_ps (Cephes' expf, below 2 ulp on [-87, 88]). */
PK_AVX512_INLINE __m512 pk_exp_ps512(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    __m512 fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
    x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), x);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fx), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

/* GELU (erf) of sixteen floats: pk_gelu_erf_ps (its accuracy is stated there). */
PK_AVX512_INLINE __m512 pk_gelu_erf_ps512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 ax = _mm512_castsi512_ps(_mm512_and_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
    __m512 z = _mm512_mul_ps(ax, _mm512_set1_ps(0.70710678118654752f));
    __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(z, _mm512_set1_ps(0.5f), one));
    __m512 p = _mm512_set1_ps(0.17087277f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
    __m512 erfc = _mm512_mul_ps(t, pk_exp_ps512(_mm512_fnmadd_ps(z, z, p)));
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    __m512 one_plus_erf = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.0f), erfc), erfc);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), one_plus_erf);
}

#endif
#endif
