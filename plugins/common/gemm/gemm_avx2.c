/*
** gemm_avx2.c - the AVX2+FMA micro-kernels (gemm_kern.h), built with
** -mavx2 -mfma (meson) and called only when the core's CPU features allow
** AVX2 and FMA (gemm.c). 16 ymm registers: 6 x 16 f32 / 6 x 8 f64 tiles,
** 12 accumulators + 2 B vectors + 1 broadcast.
*/
#include <immintrin.h>

#include "gemm_internal.h"

#define KREGS 16

/* f32 */
#define T float
#define VT __m256
#define VL 8
#define KMR 6
#define GK_NAME(x) x##_avx2_f32
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VMUL(a, b) _mm256_mul_ps(a, b)
#include "gemm_kern.h"
#undef T
#undef VT
#undef VL
#undef KMR
#undef GK_NAME
#undef VZERO
#undef VLOAD
#undef VSTORE
#undef VBCAST
#undef VSET1
#undef VFMA
#undef VMUL

/* f64 */
#define T double
#define VT __m256d
#define VL 4
#define KMR 6
#define GK_NAME(x) x##_avx2_f64
#define VZERO() _mm256_setzero_pd()
#define VLOAD(p) _mm256_loadu_pd(p)
#define VSTORE(p, v) _mm256_storeu_pd(p, v)
#define VBCAST(p) _mm256_broadcast_sd(p)
#define VSET1(x) _mm256_set1_pd(x)
#define VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define VMUL(a, b) _mm256_mul_pd(a, b)
#include "gemm_kern.h"

const pk_gemm_kern pk_gemm_kern_avx2[2] = {
    { "avx2-fma", 6, 16, 8, 256, 144, ukr_avx2_f32, rows_avx2_f32 },
    { "avx2-fma", 6, 8, 4, 256, 72, ukr_avx2_f64, rows_avx2_f64 },
};
