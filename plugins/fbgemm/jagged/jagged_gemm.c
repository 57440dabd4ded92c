/*
** jagged_gemm.c - see jagged_gemm.h.
**
** Portable path (both dtypes, and every edge tile): row-wise rank-1
** updates, C[i, :] += A[i, p] * B[p, :], which compilers vectorise over
** n. f32 with AVX2+FMA (cpuid at first use, LOOM_CPU_MAX_ISA=sse4 turns it
** off): register tiles of up to 6 rows x 16 columns (12 of the 16 ymm
** registers accumulate) over every row and the columns up to a multiple
** of 16; the remaining columns go the portable way. The sum runs over k in order in both paths (bias first).
*/
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "jagged_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define JG_X86 1
#endif

#define DEFINE_GEMM_PORTABLE(T, sfx)                                                              \
    static void gemm_portable_##sfx(int64_t m, int64_t n, int64_t k, const T *A, int64_t rsa,        \
                                    int64_t csa, const T *B, int64_t ldb, T *C, int64_t ldc,         \
                                    const T *bias)                                                   \
    {                                                                                                \
        for (int64_t i = 0; i < m; i++) {                                                            \
            T *c = C + i * ldc;                                                                      \
            for (int64_t j = 0; j < n; j++)                                                          \
                c[j] = bias != NULL ? bias[j] : (T)0;                                                \
            for (int64_t p = 0; p < k; p++) {                                                        \
                const T a = A[i * rsa + p * csa], *b = B + p * ldb;                                   \
                for (int64_t j = 0; j < n; j++)                                                      \
                    c[j] += a * b[j];                                                                \
            }                                                                                        \
        }                                                                                            \
    }
DEFINE_GEMM_PORTABLE(float, f32)
DEFINE_GEMM_PORTABLE(double, f64)

void jg_gemm_f64(int64_t m, int64_t n, int64_t k, const double *A, int64_t rsa, int64_t csa, const double *B,
                 int64_t ldb, double *C, int64_t ldc, const double *bias)
{
    gemm_portable_f64(m, n, k, A, rsa, csa, B, ldb, C, ldc, bias);
}

#ifdef JG_X86
#define TILE_M 6
/* C[R, 16] = bias + A[R, k] @ B[k, 16] for R = 1..6 rows: 2R accumulators,
** two loads of B and R broadcasts of A per k step. One function per R so
** that the loops over rows unroll and the accumulators stay in registers. */
#define DEFINE_TILE(R)                                                                             \
    __attribute__((target("avx2,fma")))                                                           \
    static void tile_##R##x16(int64_t k, const float *A, int64_t rsa, int64_t csa, const float *B, \
                              int64_t ldb, float *C, int64_t ldc, const float *bias)              \
    {                                                                                              \
        __m256 c[R][2];                                                                            \
        for (int r = 0; r < R; r++) {                                                              \
            c[r][0] = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();                  \
            c[r][1] = bias != NULL ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();              \
        }                                                                                          \
        for (int64_t p = 0; p < k; p++) {                                                          \
            const float *b = B + p * ldb, *a = A + p * csa;                                        \
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);                           \
            for (int r = 0; r < R; r++) {                                                          \
                __m256 av = _mm256_broadcast_ss(a + r * rsa);                                      \
                c[r][0] = _mm256_fmadd_ps(av, b0, c[r][0]);                                        \
                c[r][1] = _mm256_fmadd_ps(av, b1, c[r][1]);                                        \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < R; r++) {                                                              \
            _mm256_storeu_ps(C + r * ldc, c[r][0]);                                                \
            _mm256_storeu_ps(C + r * ldc + 8, c[r][1]);                                            \
        }                                                                                          \
    }
DEFINE_TILE(1)
DEFINE_TILE(2)
DEFINE_TILE(3)
DEFINE_TILE(4)
DEFINE_TILE(5)
DEFINE_TILE(6)

typedef void (*tile_fn)(int64_t, const float *, int64_t, int64_t, const float *, int64_t, float *, int64_t,
                        const float *);
static const tile_fn tiles[TILE_M + 1] = { NULL, tile_1x16, tile_2x16, tile_3x16, tile_4x16, tile_5x16, tile_6x16 };

static int isa_avx2 = -1;

static int have_avx2(void)
{
    if (isa_avx2 < 0) {
        const char *cap = getenv("LOOM_CPU_MAX_ISA");
        int capped = cap != NULL && (strcmp(cap, "sse4") == 0 || strcmp(cap, "scalar") == 0);
        __builtin_cpu_init();
        isa_avx2 = !capped && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return isa_avx2;
}
#else
static int have_avx2(void) { return 0; }
#endif

const char *jg_gemm_isa(void) { return have_avx2() ? "avx2-fma" : "scalar"; }

void jg_gemm_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa, const float *B,
                 int64_t ldb, float *C, int64_t ldc, const float *bias)
{
    int64_t n_tiled = 0;   /* columns the register tiles cover (all rows) */
#ifdef JG_X86
    if (have_avx2()) {
        n_tiled = n / 16 * 16;
        /* column strips outside: a 16 x k strip of B stays in L1 across the rows */
        for (int64_t j = 0; j < n_tiled; j += 16)
            for (int64_t i = 0; i < m; i += TILE_M) {
                int64_t rows = m - i < TILE_M ? m - i : TILE_M;
                tiles[rows](k, A + i * rsa, rsa, csa, B + j, ldb, C + i * ldc + j, ldc,
                            bias != NULL ? bias + j : NULL);
            }
    }
#endif
    if (n_tiled < n)
        gemm_portable_f32(m, n - n_tiled, k, A, rsa, csa, B + n_tiled, ldb, C + n_tiled, ldc,
                          bias != NULL ? bias + n_tiled : NULL);
}

static float round_f16(float v) { return pk_f16_to_f32(pk_f32_to_f16(v)); }
static float round_bf16(float v) { return pk_bf16_to_f32(pk_f32_to_bf16(v)); }

void jg_gemm_f32_rounded(int round16, int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa,
                         const float *B, int64_t ldb, float *C, int64_t ldc)
{
    float (*round)(float) = round16 == 1 ? round_f16 : round_bf16;
    for (int64_t i = 0; i < m; i++) {
        float *c = C + i * ldc;
        for (int64_t j = 0; j < n; j++)
            c[j] = 0;
        for (int64_t p = 0; p < k; p++) {
            const float a = A[i * rsa + p * csa], *b = B + p * ldb;
            for (int64_t j = 0; j < n; j++)
                c[j] += round(a * b[j]);
        }
    }
}
