/*
** jagged_gemm.c - see jagged_gemm.h.
**
** Portable path (both dtypes, and every edge tile): row-wise rank-1
** updates, C[i, :] += A[i, p] * B[p, :], which compilers vectorise over
** n. f32 with AVX2+FMA (cpuid at first use, LOOM_CPU_MAX_ISA=sse4 turns it
** off): register tiles of up to 6 rows x 16 columns (12 of the 16 ymm
** registers accumulate) over every row and the columns up to a multiple
** of 16; the remaining columns go the portable way. The tiles read packed
** copies: A rows in blocks laid out [k][6] per tile (one broadcast stream
** instead of six rows a page apart), B in 16-column strips laid out [k][16]
** (contiguous, so a strip stays in L1 whatever ldb is). The sum runs over k
** in order in both paths (bias first); packing and k blocking do not
** change it.
*/
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
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
#define TILE_N 16
#define BLOCK_K 128       /* k rows of a packed panel: the B strip (8 KB) stays in L1 */
#define BLOCK_M 132       /* rows packed at once (22 tiles): the A panel (66 KB) stays in L2 */

/* C[R, 16] (+)= A[R, kc] @ B[kc, 16] for R = 1..6 rows from packed panels:
** a[p * 6 + r] = A[r, p], b[p * 16 + c] = B[p, c]. The accumulators start
** from C (a later k block), else bias, else 0. 2R accumulators, two loads
** of B and R broadcasts of A per k step, all from contiguous memory. The
** accumulators are named variables, not an array (an array is kept in
** memory and stored back every step); tile_rows is inlined into one
** function per R with R constant, so the rows past R fold away. */
#define JG_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define JG_DECL(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();
#define JG_INIT(r)                                                                                 \
    if (r < R) {                                                                                   \
        if (from_c) {                                                                              \
            c##r##0 = _mm256_loadu_ps(C + r * ldc);                                                \
            c##r##1 = _mm256_loadu_ps(C + r * ldc + 8);                                            \
        } else if (bias != NULL) {                                                                 \
            c##r##0 = _mm256_loadu_ps(bias);                                                       \
            c##r##1 = _mm256_loadu_ps(bias + 8);                                                   \
        }                                                                                          \
    }
#define JG_STEP(r)                                                                                 \
    if (r < R) {                                                                                   \
        __m256 av = _mm256_broadcast_ss(a + r);                                                    \
        c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                                \
    }
#define JG_STORE(r)                                                                                \
    if (r < R) {                                                                                   \
        _mm256_storeu_ps(C + r * ldc, c##r##0);                                                    \
        _mm256_storeu_ps(C + r * ldc + 8, c##r##1);                                                \
    }

__attribute__((target("avx2,fma"), always_inline))
static inline void tile_rows(const int R, int64_t kc, const float *a, const float *b, float *C, int64_t ldc,
                             const float *bias, int from_c)
{
    JG_ROWS(JG_DECL)
    JG_ROWS(JG_INIT)
    for (int64_t p = 0; p < kc; p++, a += TILE_M, b += TILE_N) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
        JG_ROWS(JG_STEP)
    }
    JG_ROWS(JG_STORE)
}

#define DEFINE_TILE(R)                                                                             \
    __attribute__((target("avx2,fma")))                                                           \
    static void tile_##R##x16(int64_t kc, const float *a, const float *b, float *C, int64_t ldc,  \
                              const float *bias, int from_c)                                      \
    {                                                                                              \
        tile_rows(R, kc, a, b, C, ldc, bias, from_c);                                              \
    }
DEFINE_TILE(1)
DEFINE_TILE(2)
DEFINE_TILE(3)
DEFINE_TILE(4)
DEFINE_TILE(5)
DEFINE_TILE(6)

typedef void (*tile_fn)(int64_t, const float *, const float *, float *, int64_t, const float *, int);
static const tile_fn tiles[TILE_M + 1] = { NULL, tile_1x16, tile_2x16, tile_3x16, tile_4x16, tile_5x16, tile_6x16 };

static int isa_avx2 = -1;

static int have_avx2(void)
{
    if (isa_avx2 < 0) {
        isa_avx2 = pk_cpu_avx2(PK_CPU_FMA);
    }
    return isa_avx2;
}
#else
static int have_avx2(void) { return 0; }
#endif

const char *jg_gemm_isa(void) { return have_avx2() ? "avx2-fma" : "scalar"; }

#ifdef JG_X86
/* Rows [0, rows) (rows <= 6) x k range [0, kc) of A as one tile [kc][6]
** (a partial tile keeps the stride 6; its unused lanes are not read). */
static void pack_a_tile(int64_t rows, int64_t kc, const float *A, int64_t rsa, int64_t csa, float *dst)
{
    if (rsa == 1) {   /* transposed operand: a tile's column of A is contiguous */
        for (int64_t p = 0; p < kc; p++)
            for (int64_t r = 0; r < rows; r++)
                dst[p * TILE_M + r] = A[p * csa + r];
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const float *src = A + r * rsa;
        for (int64_t p = 0; p < kc; p++)
            dst[p * TILE_M + r] = src[p * csa];
    }
}

/* Start fetching the rows [0, rows) x [0, kc) of A the next tile packs,
** when they are contiguous (csa 1): rows rsa apart defeat the hardware
** prefetchers, and the current tile's arithmetic hides the latency. */
static void prefetch_a_tile(int64_t rows, int64_t kc, const float *A, int64_t rsa, int64_t csa)
{
    if (csa != 1)
        return;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t p = 0; p < kc; p += 16)
            __builtin_prefetch(A + r * rsa + p);
}

/* B[0..kc, 0..16) as [kc][16]: contiguous, so the strip cannot alias onto a
** few L1 sets the way rows ldb apart do. */
static void pack_b(int64_t kc, const float *B, int64_t ldb, float *dst, int prefetch_next)
{
    for (int64_t p = 0; p < kc; p++) {
        memcpy(dst + p * TILE_N, B + p * ldb, TILE_N * sizeof(float));
        if (prefetch_next)
            __builtin_prefetch(B + p * ldb + TILE_N);
    }
}

/* The register-tiled part, columns [0, n16) with n16 a multiple of 16:
** k in blocks of BLOCK_K (C carries the partial sums between blocks, which
** is exact, so each element still sums bias, then p = 0..k-1 in order),
** rows in blocks of BLOCK_M packed once (tile by tile during the first
** strip), then one packed 16-column strip of B at a time run against every
** row tile. The packed panels (about 74 KB) live on the caller's stack, so
** concurrent calls share nothing. */
static void gemm_tiled_f32(int64_t m, int64_t n16, int64_t k, const float *A, int64_t rsa, int64_t csa,
                           const float *B, int64_t ldb, float *C, int64_t ldc, const float *bias)
{
    _Alignas(64) float apack[BLOCK_M * BLOCK_K];
    _Alignas(64) float bpack[BLOCK_K * TILE_N];
    if (k == 0) {   /* no k block to run: C = bias */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n16; j++)
                C[i * ldc + j] = bias != NULL ? bias[j] : 0.0f;
        return;
    }
    for (int64_t p0 = 0; p0 < k; p0 += BLOCK_K) {
        int64_t kc = k - p0 < BLOCK_K ? k - p0 : BLOCK_K;
        for (int64_t i0 = 0; i0 < m; i0 += BLOCK_M) {
            int64_t mc = m - i0 < BLOCK_M ? m - i0 : BLOCK_M;
            const float *a0 = A + i0 * rsa + p0 * csa;
            for (int64_t j = 0; j < n16; j += TILE_N) {
                pack_b(kc, B + p0 * ldb + j, ldb, bpack, j + TILE_N < n16);
                for (int64_t i = 0; i < mc; i += TILE_M) {
                    int64_t rows = mc - i < TILE_M ? mc - i : TILE_M;
                    if (j == 0) {   /* the first strip packs A as it goes, one tile ahead in cache */
                        pack_a_tile(rows, kc, a0 + i * rsa, rsa, csa, apack + i * kc);
                        if (i + TILE_M < mc)
                            prefetch_a_tile(mc - i - TILE_M < TILE_M ? mc - i - TILE_M : TILE_M, kc,
                                            a0 + (i + TILE_M) * rsa, rsa, csa);
                    }
                    for (int64_t r = i + TILE_M; r < i + 2 * TILE_M && r < mc; r++)   /* next tile's C */
                        __builtin_prefetch(C + (i0 + r) * ldc + j, 1);
                    tiles[rows](kc, apack + i * kc, bpack, C + (i0 + i) * ldc + j, ldc,
                                bias != NULL ? bias + j : NULL, p0 > 0);
                }
            }
        }
    }
}
#endif

void jg_gemm_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa, const float *B,
                 int64_t ldb, float *C, int64_t ldc, const float *bias)
{
    int64_t n_tiled = 0;   /* columns the register tiles cover (all rows) */
#ifdef JG_X86
    if (have_avx2()) {
        n_tiled = n / TILE_N * TILE_N;
        if (n_tiled > 0)
            gemm_tiled_f32(m, n_tiled, k, A, rsa, csa, B, ldb, C, ldc, bias);
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
