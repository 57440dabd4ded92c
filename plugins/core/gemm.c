/*
** gemm.c - blocked, threaded GEMM for f32 and f64 on the CPU:
** C[m,n] (compact) = A[m,k] * B[k,n], A and B with any element strides.
**
** Goto/BLIS structure: for each NC-wide column block of B and each KC-deep
** slice, B is packed once into NR-wide panels (in parallel); the rows of A
** are cut into MC-high blocks, each task packs its block into MR-high
** panels and runs the MR x NR micro-kernel over every (panel of A, panel of
** B) pair. The first KC slice overwrites C, later slices accumulate, so C
** needs no zeroing. Packed panels are zero-padded, so the micro-kernel
** always computes a full tile; edge tiles go through a small buffer.
**
** Sizes: MR x NR = 6 x 16 (f32) / 6 x 8 (f64) keeps 12 ymm accumulators,
** 2 B vectors and 1 broadcast A in the 16 ymm registers. A KC x NR panel of
** B (16 KiB) stays in L1, an MC x KC block of A (<= 144 KiB) in L2, the
** KC x NC slice of B in L3.
**
** The micro-kernels are chosen at run time: AVX2+FMA when cpuid has both
** and LOOM_CPU_MAX_ISA does not cap below avx2 (read once at init), else a
** portable scalar kernel with the same packing.
*/
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CORE_X86 1
#endif

#include "core_pack.h"
#include "cpu.h"

#define MR 6
#define KC 256
#define NC 4080                       /* multiple of both NRs */

core_isa core_cpu_isa = CORE_ISA_SCALAR;

void core_cpu_isa_init(void)
{
    core_cpu_isa = pk_cpu_avx2(PK_CPU_FMA) ? CORE_ISA_AVX2 : CORE_ISA_SCALAR;
}

const char *core_cpu_isa_name(void) { return core_cpu_isa == CORE_ISA_AVX2 ? "avx2" : "scalar"; }

/* ---------------------------------------------------------------- packing */

#define DEFINE_PACK(SUF, T)                                                            \
    /* rows [0, mc) of A's block into MR-high panels, column p of a panel contiguous */ \
    static void pack_a_##SUF(void *dst_, const void *a_, int64_t rs, int64_t cs,       \
                             int64_t mc, int64_t kc)                                   \
    {                                                                                  \
        T *dst = dst_;                                                                 \
        const T *a = a_;                                                               \
        for (int64_t i0 = 0; i0 < mc; i0 += MR) {                                      \
            int64_t rows = mc - i0 < MR ? mc - i0 : MR;                                \
            for (int64_t p = 0; p < kc; p++) {                                         \
                int64_t i = 0;                                                         \
                for (; i < rows; i++)                                                  \
                    dst[i] = a[(i0 + i) * rs + p * cs];                                \
                for (; i < MR; i++)                                                    \
                    dst[i] = 0;                                                        \
                dst += MR;                                                             \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
    /* NR-wide panels [first, last) of B's KC x nc slice, row p of a panel contiguous */ \
    static void pack_b_##SUF(void *dst_, const void *b_, int64_t rs, int64_t cs,       \
                             int64_t kc, int64_t nc, int nr, int64_t first, int64_t last) \
    {                                                                                  \
        const T *b = b_;                                                               \
        for (int64_t jp = first; jp < last; jp++) {                                    \
            T *dst = (T *)dst_ + jp * kc * nr;                                         \
            int64_t j0 = jp * nr, cols = nc - j0 < nr ? nc - j0 : nr;                  \
            for (int64_t p = 0; p < kc; p++) {                                         \
                const T *src = b + p * rs + j0 * cs;                                   \
                int64_t j = 0;                                                         \
                if (cs == 1)                                                           \
                    for (; j < cols; j++)                                              \
                        dst[j] = src[j];                                               \
                else                                                                   \
                    for (; j < cols; j++)                                              \
                        dst[j] = src[j * cs];                                          \
                for (; j < nr; j++)                                                    \
                    dst[j] = 0;                                                        \
                dst += nr;                                                             \
            }                                                                          \
        }                                                                              \
    }

DEFINE_PACK(f32, float)
DEFINE_PACK(f64, double)

/* ------------------------------------------------------------ micro-kernels */

/* Every micro-kernel: C[MR x NR] (row stride ldc) = (acc ? C : 0) + A panel
** (kc x MR) * B panel (kc x NR). */
typedef void (*ukr_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int acc);

#define DEFINE_SCALAR_UKR(SUF, T, NR_)                                                 \
    static void ukr_##SUF##_scalar(int64_t kc, const void *a_, const void *b_, void *c_, \
                                   int64_t ldc, int acc)                               \
    {                                                                                  \
        const T *a = a_, *b = b_;                                                      \
        T *c = c_, t[MR][NR_] = { { 0 } };                                             \
        for (int64_t p = 0; p < kc; p++, a += MR, b += NR_)                            \
            for (int i = 0; i < MR; i++)                                               \
                for (int j = 0; j < NR_; j++)                                          \
                    t[i][j] += a[i] * b[j];                                            \
        for (int i = 0; i < MR; i++)                                                   \
            for (int j = 0; j < NR_; j++)                                              \
                c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];             \
    }

DEFINE_SCALAR_UKR(f32, float, 16)
DEFINE_SCALAR_UKR(f64, double, 8)

#ifdef CORE_X86
/* The AVX2 micro-kernel, one definition for both element types: VEC is the
** 256-bit vector type, SFX the intrinsic suffix (ps/pd), L the lanes per
** vector (NR = 2 * L). 12 accumulators + 2 B vectors + 1 broadcast A fill
** the 16 ymm registers. */
#define DEFINE_AVX2_UKR(SUF, T, VEC, SFX, L)                                                  \
    __attribute__((target("avx2,fma")))                                                       \
    static void ukr_##SUF##_avx2(int64_t kc, const void *a_, const void *b_, void *c_,         \
                                 int64_t ldc, int acc)                                        \
    {                                                                                         \
        const T *a = a_, *b = b_;                                                             \
        T *c = c_;                                                                            \
        VEC c00 = _mm256_setzero_##SFX(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00; \
        VEC c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;                 \
        _Pragma("GCC unroll 4")                                                               \
        for (int64_t p = 0; p < kc; p++) {                                                    \
            VEC b0 = _mm256_load_##SFX(b), b1 = _mm256_load_##SFX(b + L), x;                  \
            x = BCAST_##SFX(a + 0);                                            \
            c00 = _mm256_fmadd_##SFX(x, b0, c00); c01 = _mm256_fmadd_##SFX(x, b1, c01);        \
            x = BCAST_##SFX(a + 1);                                            \
            c10 = _mm256_fmadd_##SFX(x, b0, c10); c11 = _mm256_fmadd_##SFX(x, b1, c11);        \
            x = BCAST_##SFX(a + 2);                                            \
            c20 = _mm256_fmadd_##SFX(x, b0, c20); c21 = _mm256_fmadd_##SFX(x, b1, c21);        \
            x = BCAST_##SFX(a + 3);                                            \
            c30 = _mm256_fmadd_##SFX(x, b0, c30); c31 = _mm256_fmadd_##SFX(x, b1, c31);        \
            x = BCAST_##SFX(a + 4);                                            \
            c40 = _mm256_fmadd_##SFX(x, b0, c40); c41 = _mm256_fmadd_##SFX(x, b1, c41);        \
            x = BCAST_##SFX(a + 5);                                            \
            c50 = _mm256_fmadd_##SFX(x, b0, c50); c51 = _mm256_fmadd_##SFX(x, b1, c51);        \
            a += MR;                                                                          \
            b += 2 * L;                                                                       \
        }                                                                                     \
        VEC r[MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 },                            \
                         { c30, c31 }, { c40, c41 }, { c50, c51 } };                          \
        for (int i = 0; i < MR; i++) {                                                        \
            T *row = c + i * ldc;                                                             \
            if (acc) {                                                                        \
                r[i][0] = _mm256_add_##SFX(r[i][0], _mm256_loadu_##SFX(row));                 \
                r[i][1] = _mm256_add_##SFX(r[i][1], _mm256_loadu_##SFX(row + L));             \
            }                                                                                 \
            _mm256_storeu_##SFX(row, r[i][0]);                                                \
            _mm256_storeu_##SFX(row + L, r[i][1]);                                            \
        }                                                                                     \
    }
#define BCAST_ps(p) _mm256_broadcast_ss(p)
#define BCAST_pd(p) _mm256_broadcast_sd(p)
DEFINE_AVX2_UKR(f32, float, __m256, ps, 8)
DEFINE_AVX2_UKR(f64, double, __m256d, pd, 4)
#endif

/* ------------------------------------------------------------------ driver */

typedef struct gemm_spec {
    size_t es;
    int nr;
    int64_t mc_max;
    ukr_fn ukr;
    void (*pack_a)(void *dst, const void *a, int64_t rs, int64_t cs, int64_t mc, int64_t kc);
    void (*pack_b)(void *dst, const void *b, int64_t rs, int64_t cs, int64_t kc, int64_t nc,
                   int nr, int64_t first, int64_t last);
} gemm_spec;

typedef struct gemm_job {
    const gemm_spec *s;
    int64_t m, n, k;
    const char *a, *b;
    int64_t a_rs, a_cs, b_rs, b_cs;
    char *c;
    char *bpack, *apack;            /* apack: one MC x KC block per task */
    int64_t mc, m_blocks, n_splits;
    int64_t jc, ncur, pc, kcur;     /* the current NC x KC slice */
} gemm_job;

static void pack_b_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const gemm_job *j = user;
    (void)thread_index;
    j->s->pack_b(j->bpack, j->b + (j->pc * j->b_rs + j->jc * j->b_cs) * (int64_t)j->s->es,
                 j->b_rs, j->b_cs, j->kcur, j->ncur, j->s->nr, begin, end);
}

/* One task = one MC block of rows x one share of the B panels. */
static void compute_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const gemm_job *j = user;
    const gemm_spec *s = j->s;
    const int64_t es = (int64_t)s->es, nr = s->nr;
    const int64_t panels = (j->ncur + nr - 1) / nr;
    _Alignas(64) char edge[MR * 16 * sizeof(double)];
    (void)thread_index;
    for (int64_t t = begin; t < end; t++) {
        int64_t mb = t / j->n_splits, ns = t % j->n_splits;
        int64_t i0 = mb * j->mc;
        if (i0 >= j->m)
            continue;
        int64_t mcur = j->m - i0 < j->mc ? j->m - i0 : j->mc;
        int64_t p_first = panels * ns / j->n_splits, p_last = panels * (ns + 1) / j->n_splits;
        char *ap = j->apack + t * j->mc * KC * es;
        s->pack_a(ap, j->a + (i0 * j->a_rs + j->pc * j->a_cs) * es, j->a_rs, j->a_cs, mcur, j->kcur);
        for (int64_t jp = p_first; jp < p_last; jp++) {
            const char *bp = j->bpack + jp * j->kcur * nr * es;
            int64_t col = j->jc + jp * nr, cols = j->jc + j->ncur - col < nr ? j->jc + j->ncur - col : nr;
            for (int64_t ir = 0; ir < mcur; ir += MR) {
                int64_t rows = mcur - ir < MR ? mcur - ir : MR;
                char *cp = j->c + ((i0 + ir) * j->n + col) * es;
                const char *apanel = ap + ir * j->kcur * es;
                if (rows == MR && cols == nr) {
                    s->ukr(j->kcur, apanel, bp, cp, j->n, j->pc > 0);
                    continue;
                }
                s->ukr(j->kcur, apanel, bp, edge, nr, 0);
                for (int64_t r = 0; r < rows; r++) {
                    if (s->es == sizeof(float)) {
                        float *dst = (float *)cp + r * j->n, *src = (float *)edge + r * nr;
                        for (int64_t x = 0; x < cols; x++)
                            dst[x] = j->pc > 0 ? dst[x] + src[x] : src[x];
                    } else {
                        double *dst = (double *)cp + r * j->n, *src = (double *)edge + r * nr;
                        for (int64_t x = 0; x < cols; x++)
                            dst[x] = j->pc > 0 ? dst[x] + src[x] : src[x];
                    }
                }
            }
        }
    }
}

static const gemm_spec *select_spec(loom_dtype elem)
{
    static const gemm_spec f32_scalar = { sizeof(float), 16, 144, ukr_f32_scalar, pack_a_f32, pack_b_f32 };
    static const gemm_spec f64_scalar = { sizeof(double), 8, 96, ukr_f64_scalar, pack_a_f64, pack_b_f64 };
#ifdef CORE_X86
    static const gemm_spec f32_avx2 = { sizeof(float), 16, 144, ukr_f32_avx2, pack_a_f32, pack_b_f32 };
    static const gemm_spec f64_avx2 = { sizeof(double), 8, 96, ukr_f64_avx2, pack_a_f64, pack_b_f64 };
    if (core_cpu_isa == CORE_ISA_AVX2)
        return elem == LOOM_DTYPE_F32 ? &f32_avx2 : &f64_avx2;
#endif
    return elem == LOOM_DTYPE_F32 ? &f32_scalar : &f64_scalar;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

loom_status core_gemm(loom_exec_ctx *ctx, loom_dtype elem, int64_t m, int64_t n, int64_t k,
                    const void *a, int64_t a_rs, int64_t a_cs,
                    const void *b, int64_t b_rs, int64_t b_cs, void *c)
{
    const gemm_spec *s = select_spec(elem);
    if (m == 0 || n == 0)
        return LOOM_OK;
    if (k == 0) {
        memset(c, 0, (size_t)(m * n) * s->es);
        return LOOM_OK;
    }
    int64_t threads = ctx->n_threads > 0 ? ctx->n_threads : 1;
    /* Balance: a multiple of the thread count of row blocks, each a multiple
    ** of MR; when the rows cannot feed every thread, split the columns too. */
    int64_t m_blocks = ceil_div(m, s->mc_max);
    m_blocks = ceil_div(m_blocks, threads) * threads;
    if (m_blocks > ceil_div(m, MR))
        m_blocks = ceil_div(m, MR);
    int64_t mc = ceil_div(ceil_div(m, m_blocks), MR) * MR;
    m_blocks = ceil_div(m, mc);
    int64_t n_splits = m_blocks >= threads ? 1 : ceil_div(threads, m_blocks);
    int64_t nc_max = n < NC ? ceil_div(n, s->nr) * s->nr : NC, kc_max = k < KC ? k : KC;

    gemm_job j = {
        .s = s, .m = m, .n = n, .k = k, .a = a, .b = b, .c = c,
        .a_rs = a_rs, .a_cs = a_cs, .b_rs = b_rs, .b_cs = b_cs,
        .mc = mc, .m_blocks = m_blocks, .n_splits = n_splits,
    };
    j.bpack = core_host->scratch(ctx, (size_t)(kc_max * nc_max) * s->es);
    j.apack = core_host->scratch(ctx, (size_t)(m_blocks * n_splits * mc * KC) * s->es);
    if (j.bpack == NULL || j.apack == NULL)
        return core_host->fail(LOOM_ENOMEM, "no memory for the packing buffers of a %lldx%lldx%lld GEMM",
                               (long long)m, (long long)n, (long long)k);
    for (j.jc = 0; j.jc < n; j.jc += NC) {
        j.ncur = n - j.jc < NC ? n - j.jc : NC;
        for (j.pc = 0; j.pc < k; j.pc += KC) {
            j.kcur = k - j.pc < KC ? k - j.pc : KC;
            loom_status st = core_host->parallel_for(ctx, ceil_div(j.ncur, s->nr), 16, pack_b_range, &j);
            if (st == LOOM_OK)
                st = core_host->parallel_for(ctx, m_blocks * n_splits, 1, compute_tasks, &j);
            if (st != LOOM_OK)
                return st;
        }
    }
    return LOOM_OK;
}
