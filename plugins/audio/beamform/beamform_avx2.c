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
#include "simd_avx2.h"

#define AVX2 __attribute__((target("avx2,fma")))

/* odd lanes minus even lanes */
AVX2 static inline float hdiff_ps(__m256 v)
{
    const __m256 sign = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);
    return pk_hsum_ps(_mm256_mul_ps(v, sign));
}

AVX2 static inline double hdiff_pd(__m256d v)
{
    const __m256d sign = _mm256_setr_pd(-1, 1, -1, 1);
    return pk_hsum_pd(_mm256_mul_pd(v, sign));
}

#define BF_SUF c64
#define R float
#define V __m256
#define N 4
#define ZERO() _mm256_setzero_ps()
#define LOADU _mm256_loadu_ps
#define STOREU _mm256_storeu_ps
#define SET1 _mm256_set1_ps
#define MUL _mm256_mul_ps
#define FMADD _mm256_fmadd_ps
#define SWAP(v) _mm256_permute_ps((v), 0xB1)
#define ALTERNATE() _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1)
#define HSUM pk_hsum_ps
#define HDIFF hdiff_ps
#include "beamform_avx2_tmpl.h"
#undef R
#undef V
#undef N
#undef ZERO
#undef LOADU
#undef STOREU
#undef SET1
#undef MUL
#undef FMADD
#undef SWAP
#undef ALTERNATE
#undef HSUM
#undef HDIFF

#define BF_SUF c128
#define R double
#define V __m256d
#define N 2
#define ZERO() _mm256_setzero_pd()
#define LOADU _mm256_loadu_pd
#define STOREU _mm256_storeu_pd
#define SET1 _mm256_set1_pd
#define MUL _mm256_mul_pd
#define FMADD _mm256_fmadd_pd
#define SWAP(v) _mm256_permute_pd((v), 0x5)
#define ALTERNATE() _mm256_setr_pd(1, -1, 1, -1)
#define HSUM pk_hsum_pd
#define HDIFF hdiff_pd
#include "beamform_avx2_tmpl.h"
