/*
** deform_gemm.c - see deform_gemm.h. The micro-kernel keeps a DG_MR x DG_NR
** tile in registers: for f32 with AVX2, 6 x 2 ymm accumulators + 2 column
** vectors + 1 broadcast weight fill the 16 ymm registers; the portable
** kernel (f64, or f32 without AVX2) is the same loop nest in C.
*/
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DG_X86 1
#endif

#include "cpu.h"
#include "deform_gemm.h"

static int use_avx2;

void deform_gemm_init(void)
{
    use_avx2 = pk_cpu_avx2(PK_CPU_FMA);
}

#define DEFINE_PACK(SUF, T)                                                       \
    void deform_pack_weights_##SUF(T *dst, const T *a, int64_t m, int64_t k)      \
    {                                                                             \
        for (int64_t i0 = 0; i0 < m; i0 += DG_MR)                                 \
            for (int64_t p = 0; p < k; p++)                                       \
                for (int64_t i = 0; i < DG_MR; i++)                               \
                    *dst++ = i0 + i < m ? a[(i0 + i) * k + p] : (T)0;             \
    }

#define DEFINE_PORTABLE_UKR(SUF, T)                                                          \
    static void ukr_portable_##SUF(int64_t k, const T *a, const T *b, T *c, int64_t ldc,      \
                                   const T *bias, int rows, int cols)                         \
    {                                                                                        \
        T t[DG_MR][DG_NR];                                                                   \
        for (int i = 0; i < DG_MR; i++)                                                      \
            for (int j = 0; j < DG_NR; j++)                                                  \
                t[i][j] = 0;                                                                 \
        for (int64_t p = 0; p < k; p++, a += DG_MR, b += DG_NR)                              \
            for (int i = 0; i < DG_MR; i++)                                                  \
                for (int j = 0; j < DG_NR; j++)                                              \
                    t[i][j] += a[i] * b[j];                                                  \
        for (int i = 0; i < rows; i++)                                                       \
            for (int j = 0; j < cols; j++)                                                   \
                c[i * ldc + j] = t[i][j] + (bias != NULL ? bias[i] : (T)0);                  \
    }

DEFINE_PACK(f32, float)
DEFINE_PACK(f64, double)
DEFINE_PORTABLE_UKR(f32, float)
DEFINE_PORTABLE_UKR(f64, double)

void deform_ukr_f64(int64_t k, const double *a, const double *b, double *c, int64_t ldc, const double *bias,
                    int rows, int cols)
{
    ukr_portable_f64(k, a, b, c, ldc, bias, rows, cols);
}

#ifdef DG_X86
__attribute__((target("avx2,fma")))
static void ukr_avx2_f32(int64_t k, const float *a, const float *b, float *c, int64_t ldc, const float *bias,
                         int rows, int cols)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t p = 0; p < k; p++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), x;
        x = _mm256_broadcast_ss(a + 0);
        c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a + 1);
        c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a + 2);
        c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a + 3);
        c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a + 4);
        c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a + 5);
        c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
        a += DG_MR;
        b += DG_NR;
    }
    __m256 r[DG_MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 }, { c40, c41 }, { c50, c51 } };
    if (cols == DG_NR) {
        for (int i = 0; i < rows; i++) {
            __m256 bv = _mm256_set1_ps(bias != NULL ? bias[i] : 0.0f);
            _mm256_storeu_ps(c + i * ldc, _mm256_add_ps(r[i][0], bv));
            _mm256_storeu_ps(c + i * ldc + 8, _mm256_add_ps(r[i][1], bv));
        }
        return;
    }
    _Alignas(32) float t[DG_NR];
    for (int i = 0; i < rows; i++) {
        __m256 bv = _mm256_set1_ps(bias != NULL ? bias[i] : 0.0f);
        _mm256_store_ps(t, _mm256_add_ps(r[i][0], bv));
        _mm256_store_ps(t + 8, _mm256_add_ps(r[i][1], bv));
        memcpy(c + i * ldc, t, (size_t)cols * sizeof(float));
    }
}
#endif

void deform_ukr_f32(int64_t k, const float *a, const float *b, float *c, int64_t ldc, const float *bias,
                    int rows, int cols)
{
#ifdef DG_X86
    if (use_avx2) {
        ukr_avx2_f32(k, a, b, c, ldc, bias, rows, cols);
        return;
    }
#endif
    ukr_portable_f32(k, a, b, c, ldc, bias, rows, cols);
}
