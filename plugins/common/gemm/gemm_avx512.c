/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm_avx512.c - the AVX-512F micro-kernels (gemm_kern.h), built with
** -mavx512f -mfma (meson) and called only when the core's CPU features
** include AVX512F (gemm.c), so LOOM_CPU_MAX_ISA=avx2 turns them off. 32 zmm
** registers: 12 x 32 f32 / 12 x 16 f64 tiles, 24 accumulators + 2 B
** vectors + 1 broadcast. The same template as the AVX2 kernels, which this
** project's test machines run; this file is only compiled there (its test
** skips without AVX-512).
*/
#include <immintrin.h>

#include "gemm_internal.h"

#define KREGS 32

/* f32 */
#define T float
#define VT __m512
#define VL 16
#define KMR 12
#define GK_NAME(x) x##_avx512_f32
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VMUL(a, b) _mm512_mul_ps(a, b)
#define VADD(a, b) _mm512_add_ps(a, b)
#include "gemm_kern.h"

/* f64 */
#define T double
#define VT __m512d
#define VL 8
#define KMR 12
#define GK_NAME(x) x##_avx512_f64
#define VZERO() _mm512_setzero_pd()
#define VLOAD(p) _mm512_loadu_pd(p)
#define VSTORE(p, v) _mm512_storeu_pd(p, v)
#define VBCAST(p) _mm512_set1_pd(*(p))
#define VSET1(x) _mm512_set1_pd(x)
#define VFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define VMUL(a, b) _mm512_mul_pd(a, b)
#define VADD(a, b) _mm512_add_pd(a, b)
#include "gemm_kern.h"

/* f32 MC 216 (18 micro-rows): a ViT's 197 tokens (and anything up to 216
** rows) are one row of tiles, so B is packed slice by slice inside the
** tiles instead of through memory, which at batch 1 is the weights' second
** pass over DRAM. KC 768 (an A block of 648 KB and a B piece of 96 KB, both
** within the 1-2 MB L2 of the AVX-512 cores): a transformer's depth of 768
** is one slice, so C is written once instead of read back per slice; with
** the next B piece prefetched (gemm_kern.h), B read from L2 keeps the
** kernel at its L1 rate (197x768x2304 from DRAM: 137 -> 150 GFLOP/s on one
** core of a 200 GFLOP/s Xeon; 1576x768x2304: 129 -> 146). */
const pk_gemm_kern pk_gemm_kern_avx512[2] = {
    { "avx512", 12, 32, 16, 768, 216, ukr_avx512_f32, rows_avx512_f32, gemv_avx512_f32,
      pk_gemm_pack_a12_avx2_f32, pk_gemm_pack_b32_avx2_f32 },
    { "avx512", 12, 16, 8, 256, 96, ukr_avx512_f64, rows_avx512_f64, gemv_avx512_f64, NULL, NULL },
};
