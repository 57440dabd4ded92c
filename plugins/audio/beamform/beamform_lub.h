/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lub.h - the lane-batched solves of rtf_power and
** mvdr_weights_rtf: BF_LUB_LANES(dtype) consecutive bins at once, one bin
** per SIMD lane, for C <= BF_LUB_MAX_C channels.
**
** Why not LAPACK here: these ops factor one small matrix per bin (1028 of
** them, 8 x 8, in the benchmark), and a LAPACK call on an 8 x 8 complex
** matrix costs about 3 us, almost all of it call and recursion overhead
** (getrf2 recurses to 1 x 1 blocks, each level a ctrsm and a cgemm call);
** reference LAPACK and OpenBLAS measured the same. No maintained CPU
** library on Debian offers batched small-matrix LU (MKL's batch API is not
** free software; cuBLAS's getrfBatched is what the cuda kernels use). So
** the LU is laid out structure-of-arrays across bins, where every
** operation is one vector instruction for all lanes. The algorithm is
** LAPACK's getrf + getrs exactly: partial pivoting on the first maximum of
** |re| + |im| (icamax), whole-row swaps, the column scaled by the pivot's
** reciprocal, info = the first exactly zero pivot; solves apply the
** swaps, then unit-lower and upper substitution. Results agree with the
** LAPACK path to rounding (the goldens hold both to 1e-5 / 1e-10).
** Larger C stays on LAPACK (blocked code wins there), and so do Souden's
** solves (C right-hand sides, where LAPACK's per-call cost is amortised)
** and every eigenproblem.
**
** Each function handles bins [bin0, bin0 + nl), nl <= lanes, with
** `ws` of bf_lub_ws_bytes(C) bytes (any alignment), and writes the LU's
** info per lane into info[0..nl) (0, or the 1-based zero pivot: that
** lane's output is then unspecified). The _avx2 twins are the same code
** compiled for AVX2 (beamform_lub_avx2.c), chosen by bf_have_avx2().
*/
#ifndef LOOM_AUDIO_BEAMFORM_LUB_H
#define LOOM_AUDIO_BEAMFORM_LUB_H

#include "beamform_cpu.h"

#define BF_LUB_MAX_C 16
#define BF_LUB_BYTES 32    /* one vector: 8 float lanes, 4 double lanes */
#define BF_LUB_LANES(dtype) ((dtype) == LOOM_DTYPE_C128 ? 4 : 8)

/* the arrays and options of one call; bins are b * F + f */
typedef struct bf_lub_problem {
    int64_t C, F;
    const void *psd_s, *psd_n, *rtf;  /* [bins][C][C] row-major, rtf [bins][C]; complex interleaved */
    void *out;                        /* [bins][C] */
    const bf_refv *ref;
    bf_loading load;
    int64_t n_iter;
    double eps;
} bf_lub_problem;

size_t bf_lub_ws_bytes(int64_t C);

#define BF_LUB_DECLARE(isa)                                                                               \
    void bf_lub_rtf_power_c64##isa(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info);   \
    void bf_lub_rtf_power_c128##isa(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info);  \
    void bf_lub_rtf_weights_c64##isa(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info); \
    void bf_lub_rtf_weights_c128##isa(const bf_lub_problem *p, int64_t bin0, int nl, void *ws, int *info);
BF_LUB_DECLARE()
BF_LUB_DECLARE(_avx2)
#undef BF_LUB_DECLARE

#endif /* LOOM_AUDIO_BEAMFORM_LUB_H */
