/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm_internal.h - what the GEMM driver (gemm.c) needs from one ISA's
** micro-kernels (gemm_avx2.c, gemm_avx512.c, and the scalar ones in gemm.c).
** Not for packs: they include gemm.h.
**
** Packed layouts (shared by every ISA, only MR/NR/KC differ): a packed A
** is ceil(M/MR) panels, panel i = rows [i*MR, i*MR+MR) as depth steps of MR
** values (rows past M zero); a packed B is ceil(N/NR) panels of NR columns
** (past N zero). Both are slice-major: for each KC slice of the depth, the
** [kcur][W] pieces of every panel back to back (gemm.c, piece_at), so a
** tile's pieces of one slice are contiguous.
*/
#ifndef LOOM_PACK_GEMM_INTERNAL_H
#define LOOM_PACK_GEMM_INTERNAL_H

#include <stdint.h>

/* C[MR x NR] (row stride ldc) = alpha * Apanel(kc x MR) * Bpanel(kc x NR)
** + beta * C; beta == 0 does not read C (it may hold NaN). [pf, pf +
** pf_bytes) is memory the caller reads next (the following B piece): the
** vector kernels prefetch it into L2 during the call, one B row's worth of
** it per depth step (the rate B itself is read); a hint only, never read. */
typedef void (*pk_gemm_ukr_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, double alpha,
                               double beta, const void *pf, int64_t pf_bytes);

/* The small-M kernel: C[rows x ncols] = alpha * A[rows x k] * B[k x ncols]
** + beta * C for 1 <= rows < MR, ncols a multiple of the vector length. A
** is read in place (element strides ars, acs); B row p, column j is at
** b + p * ldb + (j / NR) * pstride + j % NR, which covers both a row-major
** B (pstride = NR) and one slice of a packed one (ldb = NR, pstride =
** kcur * NR). */
typedef void (*pk_gemm_rows_fn)(int rows, int64_t k, const void *a, int64_t ars, int64_t acs, const void *b,
                                int64_t ldb, int64_t pstride, int64_t ncols, void *c, int64_t ldc, double alpha,
                                double beta);

struct pk_gemm_args;

typedef struct pk_gemm_kern {
    const char *name;               /* "avx2-fma", "avx512", "scalar" */
    int mr, nr;                     /* micro-tile */
    int vl;                         /* vector lanes (1 for scalar): rows() takes multiples of it */
    int64_t kc, mc;                 /* depth of a slice, rows of an L2 block of A */
    pk_gemm_ukr_fn ukr;
    pk_gemm_rows_fn rows;           /* NULL: the small-M path is not vectorised */
    /* M = 1 on a row-major B: c[0, ncols) = alpha * a B + beta c, ncols a
    ** multiple of vl, a[p * acs], B row p at b + p * ldb. */
    void (*gemv)(int64_t k, const void *a, int64_t acs, const void *b, int64_t ldb, int64_t ncols, void *c,
                 double alpha, double beta);
    /* A full MR-row panel of a row-major A of the compute type (rows sw
    ** apart, depth contiguous) over k, or NULL for the portable packing. */
    void (*pack_a)(void *dst, const void *src, int64_t sw, int64_t k);
    /* A full NR-column panel of a B of the compute type whose columns have
    ** their depth contiguous (columns sw apart: a transposed row-major
    ** matrix, nn.Linear's weight), or NULL for the portable packing. */
    void (*pack_b)(void *dst, const void *src, int64_t sw, int64_t k);
    /* The f32 epilogue of this ISA (below; every one gives the AVX2 bits),
    ** or NULL for gemm.c's portable one. */
    void (*epilogue_f32)(const struct pk_gemm_args *g, float *c, int64_t ldc, const float *bias, const float *res,
                         int64_t i0, int64_t j0, int64_t rows, int64_t cols);
} pk_gemm_kern;

/* The f32 epilogue act(v + bias) + residual of C[rows x cols] at (i0, j0)
** (gemm.c's epilogue_f32, the same order of operations) with 8 lanes: relu
** and the adds give the same bits, silu's exp is simd_avx2.h's (2 ulp), gelu
** (erf) is simd_avx2.h's pk_gelu_erf_ps (erfc-based, within 16 ulp for x >= -2,
** 96 on [-6, -2), where libm's 1 + erf loses digits); gelu (tanh) is not here (gemm.c keeps
** libm's). In gemm_avx2.c, for the vector kernels only. The AVX-512 one
** (gemm_avx512.c) is the same with 16 lanes and simd_avx512.h's exp and
** GELU, which are the 8-lane ones lane for lane: the same bits, at half the
** instructions (GELU is most of a ViT MLP's epilogue). */
void pk_gemm_epilogue_f32_avx2(const struct pk_gemm_args *g, float *c, int64_t ldc, const float *bias,
                               const float *res, int64_t i0, int64_t j0, int64_t rows, int64_t cols);
void pk_gemm_epilogue_f32_avx512(const struct pk_gemm_args *g, float *c, int64_t ldc, const float *bias,
                                 const float *res, int64_t i0, int64_t j0, int64_t rows, int64_t cols);

/* The f32 packing of a 12-row A panel and of 16 / 32-column B panels by
** register transposes (gemm_avx2.c, -mavx2: the AVX-512 kernels use them
** too, AVX512F implying AVX2). */
void pk_gemm_pack_a12_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k);
void pk_gemm_pack_b16_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k);
void pk_gemm_pack_b32_avx2_f32(void *dst, const void *src, int64_t sw, int64_t k);

/* Per ISA: [0] f32, [1] f64. Defined only where the ISA files are built. */
extern const pk_gemm_kern pk_gemm_kern_avx2[2];
extern const pk_gemm_kern pk_gemm_kern_avx512[2];

#endif
