/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm.c - see gemm.h. The driver, the packing, the epilogue and the
** portable micro-kernels; the vector ones are in gemm_avx2.c and
** gemm_avx512.c (one template, gemm_kern.h).
**
** Blocking (Goto/BLIS, with the packing amortised): the operands are packed
** whole, once per call, into MR-row panels of A and NR-column panels of B
** (zero-padded, slice-major: gemm_internal.h), in one parallel phase. Then parallel phases run tiles of C: MC rows (an MC x KC block of
** A stays in L2) by a share of the columns (about two tiles per thread); a
** tile walks its depth in KC slices (a KC x NR panel of B stays in L1
** across the MC/MR micro-tiles), and each micro-tile's epilogue runs on the
** last slice while it is in L1. The depth is cut into phases only where
** the packed B of one phase would pass 1 MiB (so the row tiles share it in
** cache): one barrier per phase, not two per KC slice. With one row of tiles
** (M <= MC), each B panel is read by one tile only: it is then packed slice
** by slice inside the tile, into the thread's L1 buffer, with no packing
** phase for B. A threaded call under 2^26 flops packs A and B inside the
** tiles too (a panel is then packed by the few tiles that read it), so it
** costs one fork-join. A packed operand past 32 MiB (2 MiB in the serial
** form) is cut into chunks of rows (A) or columns (B).
**
** Small M (M < MR), when B is row-major or pre-packed: no packing. M = 1 on
** a row-major B streams eight rows of B at a time into C (gemv); otherwise
** the rows kernel keeps R x CV vectors of C in registers over KC-row passes.
** Threads split the columns.
**
** Batches: entries run one after the other on all threads, or, when there
** are at least as many entries as threads and each is small, one entry per
** task with the serial form.
*/
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "gemm.h"
#include "gemm_internal.h"
#include "half.h"

#define CHUNK_BYTES_PAR ((int64_t)32 << 20)
#define CHUNK_BYTES_SER ((int64_t)2 << 20)
#define SMALL_ENTRY_FLOPS (1 << 22)       /* a batch entry below this runs on one thread */
#define SMALL_M_KB 256                    /* small M: rows of B per pass (pages the TLB holds) */
#define B_PHASE_BYTES ((int64_t)1 << 20)  /* packed B one compute phase sweeps: within L2/L3 */
#define ONE_PHASE_FLOPS (1 << 26)         /* threaded calls below this pack inside the tiles: one barrier */
#define EDGE_BYTES (12 * 32 * 8)          /* the largest micro-tile */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Packed operands are slice-major: KC slices one after the other, each the
** slices of all npan panels back to back ([slice][panel][kcur][w]), so the
** pieces a tile reads in one slice are contiguous. The piece of panel pl
** (from the buffer's first) for the slice starting at depth pc: */
static int64_t piece_at(int64_t npan, int64_t pl, int64_t pc, int64_t kcur, int64_t w)
{
    return (pc * npan + pl * kcur) * w;
}

static void pack_one(void *dst, const pk_gemm_operand *x, int64_t base, int which, int f64, int64_t w,
                     int64_t panel, int64_t mn, int64_t k);

/* Pack one panel of x slice by slice into a slice-major buffer of npan
** panels (pl: its index there). */
static void pack_sliced(char *dst, int64_t npan, int64_t pl, int64_t kc, const pk_gemm_operand *x, int64_t base,
                        int which, int f64, int64_t w, int64_t panel, int64_t mn, int64_t k)
{
    size_t es = f64 ? 8 : 4;
    int64_t sk = which == 0 ? x->cs : x->rs;
    for (int64_t pc = 0; pc < k; pc += kc) {
        int64_t kcur = min64(kc, k - pc);
        pack_one(dst + (size_t)piece_at(npan, pl, pc, kcur, w) * es, x, base + pc * sk, which, f64, w, panel, mn, kcur);
    }
}

/* ------------------------------------------------------- portable kernels */

#define SMR 4
#define DEFINE_SCALAR_UKR(SUF, T, NR_)                                                             \
    static void ukr_scalar_##SUF(int64_t kc, const void *a_, const void *b_, void *c_, int64_t ldc,  \
                                 double alpha, double beta, const void *pf, int64_t pf_bytes)      \
    {                                                                                              \
        const T *a = a_, *b = b_;                                                                  \
        (void)pf;                                                                                  \
        (void)pf_bytes;                                                                            \
        T *c = c_, t[SMR][NR_] = { { 0 } };                                                        \
        for (int64_t p = 0; p < kc; p++, a += SMR, b += NR_)                                       \
            for (int i = 0; i < SMR; i++)                                                          \
                for (int j = 0; j < NR_; j++)                                                      \
                    t[i][j] += a[i] * b[j];                                                        \
        for (int i = 0; i < SMR; i++)                                                              \
            for (int j = 0; j < NR_; j++)                                                          \
                c[i * ldc + j] = beta != 0 ? (T)alpha * t[i][j] + (T)beta * c[i * ldc + j]         \
                                           : (T)alpha * t[i][j];                                   \
    }
DEFINE_SCALAR_UKR(f32, float, 8)
DEFINE_SCALAR_UKR(f64, double, 4)

static const pk_gemm_kern kern_scalar[2] = {
    { "scalar", SMR, 8, 1, 256, 128, ukr_scalar_f32, NULL, NULL, NULL, NULL },
    { "scalar", SMR, 4, 1, 256, 64, ukr_scalar_f64, NULL, NULL, NULL, NULL },
};

/* ------------------------------------------------------------ ISA choice */

static int forced_isa = PK_GEMM_ISA_AUTO;

static pk_gemm_isa best_isa(void)
{
#ifdef PK_GEMM_X86
    uint64_t f = pk_cpu_features();
    if ((f & LOOM_CPU_AVX512F) && (f & LOOM_CPU_FMA))
        return PK_GEMM_ISA_AVX512;
    if ((f & LOOM_CPU_AVX2) && (f & LOOM_CPU_FMA))
        return PK_GEMM_ISA_AVX2;
#endif
    return PK_GEMM_ISA_SCALAR;
}

pk_gemm_isa pk_gemm_current_isa(void) { return forced_isa != PK_GEMM_ISA_AUTO ? (pk_gemm_isa)forced_isa : best_isa(); }

int pk_gemm_force_isa(pk_gemm_isa isa)
{
    if (isa != PK_GEMM_ISA_AUTO && isa > best_isa())
        return 0;
    forced_isa = isa;
    return 1;
}

static const pk_gemm_kern *kern_for(int f64)
{
    switch (pk_gemm_current_isa()) {
#ifdef PK_GEMM_X86
    case PK_GEMM_ISA_AVX512: return &pk_gemm_kern_avx512[f64];
    case PK_GEMM_ISA_AVX2: return &pk_gemm_kern_avx2[f64];
#endif
    default: return &kern_scalar[f64];
    }
}

const char *pk_gemm_isa_name(void) { return kern_for(0)->name; }
int pk_gemm_mr(loom_dtype compute) { return kern_for(compute == LOOM_DTYPE_F64)->mr; }
int pk_gemm_nr(loom_dtype compute) { return kern_for(compute == LOOM_DTYPE_F64)->nr; }

pk_gemm_operand pk_gemm_matrix(const void *data, loom_dtype dtype, int64_t ld, int trans)
{
    pk_gemm_operand o = { .data = data, .dtype = dtype, .rs = trans ? 1 : ld, .cs = trans ? ld : 1 };
    return o;
}

/* --------------------------------------------------------------- packing */

/* One panel of w (MR or NR) lines: dst[p * w + i] = x(i, p) for i < valid
** (0 past it), p < k, x(i, p) = src[i * sw + p * sk] widened to the compute
** type. */
#define PACK_LOOPS(T, LOAD)                                                                        \
    do {                                                                                           \
        if (sw == 1) {                                                                             \
            for (int64_t p = 0; p < k; p++, dst += w) {                                            \
                int64_t i = 0;                                                                     \
                for (; i < valid; i++)                                                             \
                    dst[i] = LOAD(src + p * sk + i);                                               \
                for (; i < w; i++)                                                                 \
                    dst[i] = 0;                                                                    \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < valid; i++)                                                    \
                for (int64_t p = 0; p < k; p++)                                                    \
                    dst[p * w + i] = LOAD(src + i * sw + p * sk);                                  \
            if (valid < w)                                                                         \
                for (int64_t p = 0; p < k; p++)                                                    \
                    for (int64_t i = valid; i < w; i++)                                            \
                        dst[p * w + i] = 0;                                                        \
        }                                                                                          \
    } while (0)

#define LD_PLAIN(p) (*(p))
#define LD_BF16(p) pk_bf16_to_f32(*(p))
#define LD_F16(p) pk_f16_to_f32(*(p))

/* Fast paths of a full f32/f64 panel: W a constant, so the copies become
** vector moves (lines contiguous, sw == 1) or a p-outer gather of W rows
** with contiguous stores (depth contiguous, sk == 1). */
#define DEFINE_PACK_FAST(SUF, T)                                                                   \
    static inline void pack_rows_##SUF(T *dst, const T *src, int64_t k, int64_t sk, int64_t W)    \
    {                                                                                              \
        for (int64_t p = 0; p < k; p++, dst += W)                                                  \
            memcpy(dst, src + p * sk, (size_t)W * sizeof(T));                                      \
    }                                                                                              \
    static inline void pack_cols_##SUF(T *dst, const T *src, int64_t k, int64_t sw, int64_t W)    \
    {                                                                                              \
        for (int64_t p = 0; p < k; p++, dst += W)                                                  \
            for (int64_t i = 0; i < W; i++)                                                        \
                dst[i] = src[i * sw + p];                                                          \
    }                                                                                              \
    static int pack_fast_##SUF(T *dst, const T *src, int64_t w, int64_t valid, int64_t k, int64_t sw, \
                               int64_t sk)                                                         \
    {                                                                                              \
        if (valid != w || (sw != 1 && sk != 1))                                                    \
            return 0;                                                                              \
        switch (w) {                                                                               \
        case 4: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 4) : pack_cols_##SUF(dst, src, k, sw, 4); return 1; \
        case 6: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 6) : pack_cols_##SUF(dst, src, k, sw, 6); return 1; \
        case 8: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 8) : pack_cols_##SUF(dst, src, k, sw, 8); return 1; \
        case 12: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 12) : pack_cols_##SUF(dst, src, k, sw, 12); return 1; \
        case 16: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 16) : pack_cols_##SUF(dst, src, k, sw, 16); return 1; \
        case 32: sw == 1 ? pack_rows_##SUF(dst, src, k, sk, 32) : pack_cols_##SUF(dst, src, k, sw, 32); return 1; \
        default: return 0;                                                                         \
        }                                                                                          \
    }
DEFINE_PACK_FAST(f32, float)
DEFINE_PACK_FAST(f64, double)

static void pack_panel_f32(float *dst, const void *src_, loom_dtype dt, int64_t w, int64_t valid, int64_t k,
                           int64_t sw, int64_t sk)
{
    if (dt == LOOM_DTYPE_F32 && pack_fast_f32(dst, src_, w, valid, k, sw, sk))
        return;
    if (dt == LOOM_DTYPE_F32) {
        const float *src = src_;
        PACK_LOOPS(float, LD_PLAIN);
    } else if (dt == LOOM_DTYPE_BF16) {
        const uint16_t *src = src_;
        PACK_LOOPS(float, LD_BF16);
    } else {
        const uint16_t *src = src_;
        PACK_LOOPS(float, LD_F16);
    }
}

static void pack_panel_f64(double *dst, const void *src_, loom_dtype dt, int64_t w, int64_t valid, int64_t k,
                           int64_t sw, int64_t sk)
{
    const double *src = src_;
    (void)dt;
    if (pack_fast_f64(dst, src, w, valid, k, sw, sk))
        return;
    PACK_LOOPS(double, LD_PLAIN);
}

static size_t dtype_bytes(loom_dtype dt)
{
    return dt == LOOM_DTYPE_F64 ? 8 : dt == LOOM_DTYPE_F32 ? 4 : 2;
}

/* Panel `panel` of operand x (which 0: A, lines are rows; 1: B, lines are
** columns) into dst, the element offset `base` (batch entry) added. */
static void pack_one(void *dst, const pk_gemm_operand *x, int64_t base, int which, int f64, int64_t w,
                     int64_t panel, int64_t mn, int64_t k)
{
    int64_t sw = which == 0 ? x->rs : x->cs, sk = which == 0 ? x->cs : x->rs;
    int64_t first = panel * w, valid = min64(w, mn - first);
    const char *src = (const char *)x->data + (size_t)(base + first * sw) * dtype_bytes(x->dtype);
    const pk_gemm_kern *kr = kern_for(f64);
    if (which == 0 && kr->pack_a != NULL && valid == w && sk == 1
        && x->dtype == (f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32)) {
        kr->pack_a(dst, src, sw, k);
        return;
    }
    if (which == 1 && kr->pack_b != NULL && valid == w && sk == 1
        && x->dtype == (f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32)) {
        kr->pack_b(dst, src, sw, k);
        return;
    }
    if (f64)
        pack_panel_f64(dst, src, x->dtype, w, valid, k, sw, sk);
    else
        pack_panel_f32(dst, src, x->dtype, w, valid, k, sw, sk);
}

size_t pk_gemm_pack_bytes(int which, loom_dtype compute, int64_t mn, int64_t k)
{
    const pk_gemm_kern *kr = kern_for(compute == LOOM_DTYPE_F64);
    int64_t w = which == 0 ? kr->mr : kr->nr;
    return (size_t)(round_up(mn > 0 ? mn : 1, w) * (k > 0 ? k : 1)) * dtype_bytes(compute);
}

void pk_gemm_pack(pk_gemm_packed *out, void *dst, int which, const pk_gemm_operand *x, int64_t mn, int64_t k)
{
    int f64 = x->dtype == LOOM_DTYPE_F64;
    const pk_gemm_kern *kr = kern_for(f64);
    int64_t w = which == 0 ? kr->mr : kr->nr;
    size_t es = f64 ? 8 : 4;
    (void)es;
    for (int64_t pnl = 0; pnl < ceil_div(mn, w); pnl++)
        pack_sliced(dst, ceil_div(mn, w), pnl, kr->kc, x, 0, which, f64, w, pnl, mn, k);
    *out = (pk_gemm_packed){ .which = which, .width = (int)w, .mn = mn, .k = k,
                             .compute = f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32, .data = dst };
}

/* ------------------------------------------------- merge, scale, epilogue */

#define DEFINE_TYPED(SUF, T, TANH, ERF, EXP)                                                        \
    /* C[rows x cols] = t (row stride tld) + beta * C */                                          \
    static void merge_##SUF(T *c, int64_t ldc, const T *t, int64_t tld, int64_t rows, int64_t cols, \
                            double beta)                                                           \
    {                                                                                              \
        for (int64_t r = 0; r < rows; r++)                                                         \
            for (int64_t j = 0; j < cols; j++)                                                     \
                c[r * ldc + j] = beta != 0 ? t[r * tld + j] + (T)beta * c[r * ldc + j] : t[r * tld + j]; \
    }                                                                                              \
    /* act(v + bias) + residual on C[rows x cols] at (i0, j0) of the matrix */                    \
    static void epilogue_##SUF(const pk_gemm_args *g, T *c, int64_t ldc, const T *bias, const T *res, \
                               int64_t i0, int64_t j0, int64_t rows, int64_t cols)                 \
    {                                                                                              \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            T *row = c + r * ldc;                                                                  \
            if (g->bias_kind == PK_GEMM_BIAS_COL)                                                  \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] += bias[j0 + j];                                                        \
            else if (g->bias_kind == PK_GEMM_BIAS_ROW)                                             \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] += bias[i0 + r];                                                        \
            switch (g->act) {                                                                      \
            case PK_GEMM_ACT_RELU:                                                                 \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] = row[j] < 0 ? (T)0 : row[j];                                           \
                break;                                                                             \
            case PK_GEMM_ACT_GELU_TANH:                                                            \
                for (int64_t j = 0; j < cols; j++) {                                               \
                    T x = row[j];                                                                  \
                    row[j] = (T)0.5 * x * ((T)1 + TANH((T)0.7978845608028654 * (x + (T)0.044715 * x * x * x))); \
                }                                                                                  \
                break;                                                                             \
            case PK_GEMM_ACT_GELU_ERF:                                                             \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] = (T)0.5 * row[j] * ((T)1 + ERF(row[j] * (T)0.7071067811865476));        \
                break;                                                                             \
            case PK_GEMM_ACT_SILU:                                                                 \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] = row[j] / ((T)1 + EXP(-row[j]));                                       \
                break;                                                                             \
            default:                                                                               \
                break;                                                                             \
            }                                                                                      \
            if (res != NULL)                                                                       \
                for (int64_t j = 0; j < cols; j++)                                                 \
                    row[j] += res[(i0 + r) * g->ldr + j0 + j];                                     \
        }                                                                                          \
    }                                                                                              \
    /* C = beta * C (alpha == 0 or k == 0: A and B are not read) */                               \
    static void scale_##SUF(T *c, int64_t ldc, int64_t rows, int64_t cols, double beta)             \
    {                                                                                              \
        for (int64_t r = 0; r < rows; r++)                                                         \
            for (int64_t j = 0; j < cols; j++)                                                     \
                c[r * ldc + j] = beta != 0 ? (T)beta * c[r * ldc + j] : (T)0;                      \
    }                                                                                              \
    /* Small-M columns the vector kernel leaves (or all of them without one):                     \
    ** B(p, j) = b[p * ldb + (j / nr) * pstride + j % nr]; A read in place. */                    \
    static void rows_portable_##SUF(int64_t rows, int64_t k, const T *a, int64_t ars, int64_t acs, \
                                    const T *b, int64_t ldb, int64_t pstride, int64_t nr, int64_t j0, \
                                    int64_t j1, T *c, int64_t ldc, double alpha, double beta)      \
    {                                                                                              \
        for (int64_t i = 0; i < rows; i++)                                                         \
            for (int64_t j = j0; j < j1; j++) {                                                    \
                const T *bj = b + (j / nr) * pstride + j % nr;                                     \
                T s = 0;                                                                           \
                for (int64_t p = 0; p < k; p++)                                                    \
                    s += a[i * ars + p * acs] * bj[p * ldb];                                       \
                T *cp = c + i * ldc + j;                                                           \
                *cp = beta != 0 ? (T)alpha * s + (T)beta * *cp : (T)alpha * s;                     \
            }                                                                                      \
    }
DEFINE_TYPED(f32, float, tanhf, erff, expf)
DEFINE_TYPED(f64, double, tanh, erf, exp)

/* ---------------------------------------------------------------- driver */

typedef struct gjob {
    const pk_gemm_args *g;
    const pk_gemm_kern *kr;
    int f64;
    size_t es;
    int64_t mr, nr, kc, m, n, k;
    int has_epilogue;
    /* the batch entry */
    int64_t a_off, b_off;                   /* element offsets into a.data / b.data */
    char *c;
    const char *bias, *res;
    /* packed panels, slice-major (piece_at): panel p of A is panel
    ** p - a_origin of the a_npan at abase */
    char *abase, *bbase;
    int64_t a_origin, b_origin, a_npan, b_npan;
    /* the chunk */
    int64_t m0, m1, n0, n1;
    int pack_a, pack_b;
    int b_inline;                           /* B panels packed slice by slice inside the tile */
    int a_inline;                           /* the tile's rows of A too (small calls: one phase) */
    char *slices;                           /* per thread: a KC x NR slice of B, then MC x KC of A */
    size_t slice_bytes;
    int64_t tile_m, tile_n, tiles_n;
    int64_t k0, k1;                         /* the depth of this compute phase */
    /* small M */
    int64_t col_block;
    char *work;                             /* per-thread serial workspaces (batch tasks) */
    size_t work_bytes;
} gjob;

static const char *a_piece(const gjob *j, int64_t p, int64_t pc, int64_t kcur)
{
    return j->abase + (size_t)piece_at(j->a_npan, p - j->a_origin, pc, kcur, j->mr) * j->es;
}
static const char *b_piece(const gjob *j, int64_t p, int64_t pc, int64_t kcur)
{
    return j->bbase + (size_t)piece_at(j->b_npan, p - j->b_origin, pc, kcur, j->nr) * j->es;
}

static void pack_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const gjob *j = user;
    int64_t na = j->pack_a ? ceil_div(j->m1 - j->m0, j->mr) : 0;
    (void)thread_index;
    for (int64_t t = begin; t < end; t++) {
        if (t < na) {
            int64_t p = j->m0 / j->mr + t;
            pack_sliced(j->abase, j->a_npan, p - j->a_origin, j->kc, &j->g->a, j->a_off, 0, j->f64, j->mr, p, j->m,
                        j->k);
        } else {
            int64_t p = j->n0 / j->nr + (t - na);
            pack_sliced(j->bbase, j->b_npan, p - j->b_origin, j->kc, &j->g->b, j->b_off, 1, j->f64, j->nr, p, j->n,
                        j->k);
        }
    }
}

static void epilogue_at(const gjob *j, char *cp, int64_t i0, int64_t j0, int64_t rows, int64_t cols)
{
    const pk_gemm_args *g = j->g;
    if (j->f64)
        epilogue_f64(g, (double *)(void *)cp, g->ldc, (const double *)(const void *)j->bias,
                     (const double *)(const void *)j->res, i0, j0, rows, cols);
#ifdef PK_GEMM_X86
    else if (j->kr->epilogue_f32 != NULL && g->act != PK_GEMM_ACT_GELU_TANH)
        j->kr->epilogue_f32(g, (float *)(void *)cp, g->ldc, (const float *)(const void *)j->bias,
                            (const float *)(const void *)j->res, i0, j0, rows, cols);
#endif
    else
        epilogue_f32(g, (float *)(void *)cp, g->ldc, (const float *)(const void *)j->bias,
                     (const float *)(const void *)j->res, i0, j0, rows, cols);
}

/* One tile of C: rows [i0, i1), columns [j0, j1) of the chunk. slice: the
** thread's buffers for a B slice (b_inline) and the tile's A slice (a_inline). */
static void compute_tile(const gjob *j, int64_t i0, int64_t i1, int64_t j0, int64_t j1, char *slice)
{
    const pk_gemm_args *g = j->g;
    const int64_t es = (int64_t)j->es, mr = j->mr, nr = j->nr, ldc = g->ldc;
    union { float f[EDGE_BYTES / 4]; double d[EDGE_BYTES / 8]; } edge_u;
    void *edge = j->f64 ? (void *)edge_u.d : (void *)edge_u.f;
    char *aslice = slice + (((size_t)(j->kc * nr) * j->es + 63) & ~(size_t)63);
    for (int64_t pc = j->k0; pc < j->k1; pc += j->kc) {
        int64_t kcur = min64(j->kc, j->k1 - pc);
        double beta = pc == 0 ? g->beta : 1.0;
        int last = pc + kcur == j->k;
        if (j->a_inline)
            for (int64_t ip = i0 / mr; ip < ceil_div(i1, mr); ip++)
                pack_one(aslice + (size_t)((ip - i0 / mr) * kcur * mr) * j->es, &g->a, j->a_off + pc * g->a.cs, 0,
                         j->f64, mr, ip, j->m, kcur);
        for (int64_t jp = j0 / nr; jp < ceil_div(j1, nr); jp++) {
            const char *bp;
            if (j->b_inline) {   /* read once by this tile only: pack it where it is used, in L1 */
                pack_one(slice, &g->b, j->b_off + pc * g->b.rs, 1, j->f64, nr, jp, j->n, kcur);
                bp = slice;
            } else {
                bp = b_piece(j, jp, pc, kcur);
            }
            int64_t col = jp * nr, cols = min64(nr, j->n - col);
            /* the B piece read after this one (the next panel, else the
            ** tile's first of the next slice), prefetched a share per
            ** micro-tile: from DRAM (weights read once per call) it would
            ** stall the first micro-tile of every panel */
            const char *next = NULL;
            int64_t next_bytes = 0;
            const int64_t ip0 = i0 / mr, nip = ceil_div(i1, mr) - ip0;
            if (!j->b_inline) {
                const int64_t knext = jp + 1 < ceil_div(j1, nr) ? kcur : min64(j->kc, j->k1 - pc - kcur);
                if (knext > 0) {
                    next = jp + 1 < ceil_div(j1, nr) ? b_piece(j, jp + 1, pc, kcur) : b_piece(j, j0 / nr, pc + kcur, knext);
                    next_bytes = knext * nr * es;
                }
            }
            for (int64_t ip = ip0; ip < ip0 + nip; ip++) {
                const int64_t s0 = next_bytes * (ip - ip0) / nip, s1 = next_bytes * (ip - ip0 + 1) / nip;
                const char *pf = next == NULL ? NULL : next + s0;
                const char *ap = j->a_inline ? aslice + (size_t)((ip - ip0) * kcur * mr) * j->es
                                             : a_piece(j, ip, pc, kcur);
                int64_t row = ip * mr, rows = min64(mr, j->m - row);
                char *cp = j->c + (row * ldc + col) * es;
                if (rows == mr && cols == nr) {
                    j->kr->ukr(kcur, ap, bp, cp, ldc, g->alpha, beta, pf, s1 - s0);
                } else {
                    j->kr->ukr(kcur, ap, bp, edge, nr, g->alpha, 0.0, pf, s1 - s0);
                    if (j->f64)
                        merge_f64((double *)(void *)cp, ldc, (const double *)(const void *)edge, nr, rows, cols, beta);
                    else
                        merge_f32((float *)(void *)cp, ldc, (const float *)(const void *)edge, nr, rows, cols, beta);
                }
                if (last && j->has_epilogue)
                    epilogue_at(j, cp, row, col, rows, cols);
            }
        }
    }
}

static void compute_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const gjob *j = user;
    char *slice = j->slices + (size_t)thread_index * j->slice_bytes;
    for (int64_t t = begin; t < end; t++) {
        int64_t i0 = j->m0 + (t / j->tiles_n) * j->tile_m, c0 = j->n0 + (t % j->tiles_n) * j->tile_n;
        compute_tile(j, i0, min64(i0 + j->tile_m, j->m1), c0, min64(c0 + j->tile_n, j->n1), slice);
    }
}

/* Rows and columns of a chunk so that a packed chunk stays within cap. */
static void chunk_sizes(const gjob *j, int64_t cap, int64_t *mch, int64_t *nch)
{
    int64_t per = max64(1, j->k) * (int64_t)j->es;
    *mch = j->g->a.packed != NULL ? round_up(j->m, j->mr) : round_up(min64(j->m, max64(1, cap / per)), j->mr);
    *nch = j->g->b.packed != NULL ? round_up(j->n, j->nr) : round_up(min64(j->n, max64(1, cap / per)), j->nr);
}

static size_t slice_bytes(const gjob *j)
{
    return (((size_t)(j->kc * j->nr) * j->es + 63) & ~(size_t)63) + (((size_t)(j->kr->mc * j->kc) * j->es + 63) & ~(size_t)63);
}

/* The packed chunks, then one B slice per thread. */
static size_t packed_bytes(const gjob *j, int64_t cap, int threads)
{
    int64_t mch, nch;
    chunk_sizes(j, cap, &mch, &nch);
    int64_t a = j->g->a.packed ? 0 : mch * j->k, b = j->g->b.packed ? 0 : nch * j->k;
    return (size_t)(a + b) * j->es + 128 + (size_t)threads * slice_bytes(j);
}

typedef loom_status (*run_fn)(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user);

static loom_status run_inline(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    (void)ctx;
    (void)grain;
    if (n > 0)
        fn(user, 0, n, 0);
    return LOOM_OK;
}

/* The packed path over chunks; buf holds packed_bytes(j, cap). */
static loom_status run_packed(gjob *j, loom_exec_ctx *ctx, run_fn run, int threads, int64_t cap, char *buf)
{
    const pk_gemm_args *g = j->g;
    int64_t mch, nch;
    chunk_sizes(j, cap, &mch, &nch);
    char *abuf = buf, *bbuf = buf + (g->a.packed ? 0 : (size_t)(mch * j->k) * j->es);
    bbuf = (char *)(((uintptr_t)bbuf + 63) & ~(uintptr_t)63);
    j->slice_bytes = slice_bytes(j);
    j->slices = (char *)(((uintptr_t)(bbuf + (g->b.packed ? 0 : (size_t)(nch * j->k) * j->es)) + 63) & ~(uintptr_t)63);
    if (g->a.packed) {
        j->abase = (char *)(uintptr_t)g->a.packed->data;
        j->a_origin = 0;
        j->a_npan = ceil_div(j->m, j->mr);
    }
    if (g->b.packed) {
        j->bbase = (char *)(uintptr_t)g->b.packed->data;
        j->b_origin = 0;
        j->b_npan = ceil_div(j->n, j->nr);
    }
    int single_n = nch >= j->n;
    for (j->m0 = 0; j->m0 < j->m; j->m0 += mch) {
        j->m1 = min64(j->m, j->m0 + mch);
        for (j->n0 = 0; j->n0 < j->n; j->n0 += nch) {
            j->n1 = min64(j->n, j->n0 + nch);
            /* tiles: MC rows (balanced), and the columns cut so that there
            ** are about two tiles per thread */
            int64_t rows = j->m1 - j->m0, cols = j->n1 - j->n0;
            int64_t tiles_m = ceil_div(rows, j->kr->mc);
            j->tile_m = round_up(ceil_div(rows, tiles_m), j->mr);
            tiles_m = ceil_div(rows, j->tile_m);
            int64_t want_n = threads > 1 ? ceil_div(2 * threads, tiles_m) : 1;
            j->tile_n = round_up(ceil_div(cols, want_n), j->nr);
            j->tiles_n = ceil_div(cols, j->tile_n);
            /* one row of tiles reads each B panel once: no packing phase for B */
            j->b_inline = !g->b.packed && tiles_m == 1 && j->m1 - j->m0 == j->m;
            /* a small call on threads: every tile packs what it reads, so a
            ** call is one fork-join (each panel is packed by at most a few tiles) */
            j->a_inline = 0;
            if (threads > 1 && !g->a.packed && !g->b.packed && rows == j->m && cols == j->n
                && 2.0 * (double)j->m * (double)j->n * (double)j->k < ONE_PHASE_FLOPS)
                j->a_inline = j->b_inline = 1;
            j->pack_a = !g->a.packed && !j->a_inline && j->n0 == 0;
            j->pack_b = !g->b.packed && !j->b_inline && (j->m0 == 0 || !single_n);
            if (j->pack_a) {
                j->abase = abuf;
                j->a_origin = j->m0 / j->mr;
                j->a_npan = mch / j->mr;
            }
            if (j->pack_b) {
                j->bbase = bbuf;
                j->b_origin = j->n0 / j->nr;
                j->b_npan = nch / j->nr;
            }
            int64_t np = (j->pack_a ? ceil_div(j->m1 - j->m0, j->mr) : 0)
                       + (j->pack_b ? ceil_div(j->n1 - j->n0, j->nr) : 0);
            loom_status st = np > 0 ? run(ctx, np, max64(1, np / (4 * threads)), pack_tasks, j) : LOOM_OK;
            if (st != LOOM_OK)
                return st;
            /* the depth in phases whose slice of packed B stays within L3,
            ** so the row tiles of a phase share it (a multiple of KC) */
            int64_t kph = j->b_inline ? j->k : max64(j->kc, B_PHASE_BYTES / (cols * (int64_t)j->es) / j->kc * j->kc);
            for (j->k0 = 0; j->k0 < j->k; j->k0 += kph) {
                j->k1 = min64(j->k, j->k0 + kph);
                st = run(ctx, tiles_m * j->tiles_n, 1, compute_tasks, j);
                if (st != LOOM_OK)
                    return st;
            }
        }
    }
    return LOOM_OK;
}

/* ---------------------------------------------------------------- small M */

static int small_m_ok(const gjob *j)
{
    const pk_gemm_args *g = j->g;
    loom_dtype ct = j->f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32;
    if (j->m >= j->mr || j->kr->rows == NULL)
        return 0;
    if (!g->a.packed && g->a.dtype != ct)
        return 0;
    return g->b.packed != NULL || (g->b.dtype == ct && g->b.cs == 1);
}

static void small_m_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const gjob *j = user;
    const pk_gemm_args *g = j->g;
    const int64_t es = (int64_t)j->es;
    const char *a, *b;
    int64_t ars, acs, ldb, pstride, nr;
    (void)thread_index;
    if (g->a.packed) {
        a = g->a.packed->data;
        ars = 1;
        acs = j->mr;
    } else {
        a = (const char *)g->a.data + j->a_off * es;
        ars = g->a.rs;
        acs = g->a.cs;
    }
    int packed_b = g->b.packed != NULL, use_gemv = j->m == 1 && !packed_b && j->kr->gemv != NULL;
    if (packed_b) {
        b = g->b.packed->data;
        ldb = nr = j->nr;
    } else {
        b = (const char *)g->b.data + j->b_off * es;
        ldb = g->b.rs;
        nr = j->kr->nr;
    }
    /* K in passes: a packed B's slices, or SMALL_M_KB rows (the columns of a
    ** pass share its pages) */
    const int64_t kb = packed_b ? j->kc : SMALL_M_KB, npan = ceil_div(j->n, j->nr);
    for (int64_t t = begin; t < end; t++) {
        int64_t c0 = t * j->col_block, c1 = min64(j->n, c0 + j->col_block);
        char *cp = j->c + c0 * es;
        int64_t vec = (c1 - c0) / j->kr->vl * j->kr->vl;
        if (vec > 0 && use_gemv)
            j->kr->gemv(j->k, a, acs, b + c0 * es, ldb, vec, cp, g->alpha, g->beta);
        for (int64_t p0 = 0; p0 < j->k; p0 += kb) {
            int64_t kcur = min64(kb, j->k - p0);
            double beta = p0 == 0 ? g->beta : 1.0;
            const char *bp = packed_b ? b + (size_t)piece_at(npan, 0, p0, kcur, nr) * es : b + p0 * ldb * es;
            pstride = packed_b ? kcur * nr : nr;
            if (vec > 0 && !use_gemv)
                j->kr->rows((int)j->m, kcur, a + p0 * acs * es, ars, acs, bp + ((c0 / nr) * pstride + c0 % nr) * es,
                            ldb, pstride, vec, cp, g->ldc, g->alpha, beta);
            if (c0 + vec >= c1)
                continue;
            if (j->f64)
                rows_portable_f64(j->m, kcur, (const double *)(const void *)(a + p0 * acs * es), ars, acs,
                                  (const double *)(const void *)bp, ldb, pstride, nr, c0 + vec, c1,
                                  (double *)(void *)j->c, g->ldc, g->alpha, beta);
            else
                rows_portable_f32(j->m, kcur, (const float *)(const void *)(a + p0 * acs * es), ars, acs,
                                  (const float *)(const void *)bp, ldb, pstride, nr, c0 + vec, c1,
                                  (float *)(void *)j->c, g->ldc, g->alpha, beta);
        }
        if (j->has_epilogue)
            epilogue_at(j, cp, 0, c0, j->m, c1 - c0);
    }
}

/* ------------------------------------------------------------ the entries */

static loom_status check_args(const pk_gemm_args *g, int *f64)
{
    loom_dtype at = g->a.packed ? g->a.packed->compute : g->a.dtype;
    loom_dtype bt = g->b.packed ? g->b.packed->compute : g->b.dtype;
    *f64 = at == LOOM_DTYPE_F64;
    if (*f64 != (bt == LOOM_DTYPE_F64))
        return LOOM_EINVAL;
    if (!*f64)
        for (int i = 0; i < 2; i++) {
            loom_dtype d = i == 0 ? at : bt;
            if (d != LOOM_DTYPE_F32 && d != LOOM_DTYPE_BF16 && d != LOOM_DTYPE_F16)
                return LOOM_EINVAL;
        }
    const pk_gemm_kern *kr = kern_for(*f64);
    if (g->a.packed && (g->a.packed->which != 0 || g->a.packed->width != kr->mr || g->a.packed->mn != g->m
                        || g->a.packed->k != g->k))
        return LOOM_EINVAL;
    if (g->b.packed && (g->b.packed->which != 1 || g->b.packed->width != kr->nr || g->b.packed->mn != g->n
                        || g->b.packed->k != g->k))
        return LOOM_EINVAL;
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0)
        return LOOM_EINVAL;
    return LOOM_OK;
}

static void job_init(gjob *j, const pk_gemm_args *g, int f64)
{
    *j = (gjob){ .g = g, .f64 = f64, .es = f64 ? 8 : 4, .m = g->m, .n = g->n, .k = g->k };
    j->kr = kern_for(f64);
    j->mr = j->kr->mr;
    j->nr = j->kr->nr;
    j->kc = j->kr->kc;
    j->has_epilogue = g->bias_kind != PK_GEMM_BIAS_NONE || g->act != PK_GEMM_ACT_NONE || g->residual != NULL;
}

static void job_entry(gjob *j, int64_t bi)
{
    const pk_gemm_args *g = j->g;
    j->a_off = g->a.packed ? 0 : bi * g->a.bs;
    j->b_off = g->b.packed ? 0 : bi * g->b.bs;
    j->c = (char *)g->c + (size_t)(bi * g->c_bs) * j->es;
    j->bias = g->bias != NULL ? (const char *)g->bias + (size_t)(bi * g->bias_bs) * j->es : NULL;
    j->res = g->residual != NULL ? (const char *)g->residual + (size_t)(bi * g->r_bs) * j->es : NULL;
}

/* No product to form (k == 0 or alpha == 0): C = epilogue(beta * C). */
static void run_trivial(const gjob *j)
{
    if (j->f64)
        scale_f64((double *)(void *)j->c, j->g->ldc, j->m, j->n, j->g->beta);
    else
        scale_f32((float *)(void *)j->c, j->g->ldc, j->m, j->n, j->g->beta);
    if (j->has_epilogue)
        epilogue_at(j, j->c, 0, 0, j->m, j->n);
}

/* One batch entry on the calling thread (run_inline) or on the pool. */
static loom_status run_entry(gjob *j, loom_exec_ctx *ctx, run_fn run, int threads, int64_t cap, char *buf)
{
    if (j->k == 0 || j->g->alpha == 0) {
        run_trivial(j);
        return LOOM_OK;
    }
    if (small_m_ok(j)) {
        int64_t vl = j->kr->nr;
        double flops = 2.0 * (double)j->m * (double)j->n * (double)j->k;
        /* GEMV streams rows of B: one contiguous share of the columns per thread */
        int gemv = j->m == 1 && !j->g->b.packed && j->kr->gemv != NULL;
        int64_t blocks = flops < 1e5 || threads == 1 ? 1 : gemv ? threads : 4 * threads;
        j->col_block = round_up(ceil_div(j->n, blocks), vl);
        return run(ctx, ceil_div(j->n, j->col_block), 1, small_m_tasks, j);
    }
    return run_packed(j, ctx, run, threads, cap, buf);
}

size_t pk_gemm_serial_workspace(const pk_gemm_args *g)
{
    gjob j;
    int f64;
    if (check_args(g, &f64) != LOOM_OK)
        return 0;
    job_init(&j, g, f64);
    return packed_bytes(&j, CHUNK_BYTES_SER, 1);
}

loom_status pk_gemm_serial(const pk_gemm_args *g, void *work, size_t work_bytes)
{
    gjob j;
    int f64;
    loom_status st = check_args(g, &f64);
    if (st != LOOM_OK)
        return st;
    if (g->m == 0 || g->n == 0)
        return LOOM_OK;
    job_init(&j, g, f64);
    if (work_bytes < packed_bytes(&j, CHUNK_BYTES_SER, 1) && !(g->k == 0 || g->alpha == 0 || small_m_ok(&j)))
        return LOOM_EINVAL;
    for (int64_t bi = 0; bi < g->batch && st == LOOM_OK; bi++) {
        job_entry(&j, bi);
        st = run_entry(&j, NULL, run_inline, 1, CHUNK_BYTES_SER, work);
    }
    return st;
}

static void batch_tasks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    gjob j = *(const gjob *)user;
    char *work = j.work + (size_t)thread_index * j.work_bytes;
    for (int64_t bi = begin; bi < end; bi++) {
        job_entry(&j, bi);
        run_entry(&j, NULL, run_inline, 1, CHUNK_BYTES_SER, work);
    }
}

loom_status pk_gemm(loom_exec_ctx *ctx, const pk_gemm_args *g)
{
    const loom_host_api *host = ctx->host;
    gjob j;
    int f64;
    if (check_args(g, &f64) != LOOM_OK)
        return host->fail(LOOM_EINVAL, "pk_gemm: unsupported operands (dtypes %s x %s, %lldx%lldx%lld, packed %s/%s)",
                          host->dtype_name(g->a.packed ? g->a.packed->compute : g->a.dtype),
                          host->dtype_name(g->b.packed ? g->b.packed->compute : g->b.dtype), (long long)g->m,
                          (long long)g->n, (long long)g->k, g->a.packed ? "yes" : "no", g->b.packed ? "yes" : "no");
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return LOOM_OK;
    job_init(&j, g, f64);
    int threads = ctx->n_threads > 0 ? ctx->n_threads : 1;
    double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    if (g->batch >= threads && threads > 1 && flops < SMALL_ENTRY_FLOPS) {
        j.work_bytes = round_up((int64_t)packed_bytes(&j, CHUNK_BYTES_SER, 1), 64);
        j.work = host->scratch(ctx, j.work_bytes * (size_t)threads);
        if (j.work == NULL)
            return host->fail(LOOM_ENOMEM, "pk_gemm: no memory for %d workspaces of %zu bytes", threads, j.work_bytes);
        return host->parallel_for(ctx, g->batch, 1, batch_tasks, &j);
    }
    char *buf = NULL;
    if (!(g->k == 0 || g->alpha == 0 || small_m_ok(&j))) {
        size_t bytes = packed_bytes(&j, CHUNK_BYTES_PAR, threads);
        buf = host->scratch(ctx, bytes);
        if (buf == NULL)
            return host->fail(LOOM_ENOMEM, "pk_gemm: no memory for the %zu bytes of packed panels of a "
                              "%lldx%lldx%lld GEMM", bytes, (long long)g->m, (long long)g->n, (long long)g->k);
    }
    for (int64_t bi = 0; bi < g->batch; bi++) {
        job_entry(&j, bi);
        loom_status st = run_entry(&j, ctx, host->parallel_for, threads, CHUNK_BYTES_PAR, buf);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}
