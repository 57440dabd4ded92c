/*
** jagged_gemm.h - the small dense GEMM the jagged bmm ops run on one batch
** row at a time: C[m, n] = bias + A[m, k] @ B[k, n].
**
** A is addressed as A[i * rsa + p * csa], so a transposed operand (the
** x^T of jagged_jagged_bmm) needs no copy; B and C are row-major with
** leading dimensions ldb and ldc. bias is one row of n added to every row
** of C, or NULL for none. C is overwritten. Single-threaded (callers split
** the work over batch rows): f32 and f64 run on the common GEMM's serial
** form (plugins/common/gemm), with a workspace of jg_gemm_workspace bytes
** (for the largest m, n, k the caller will run) per thread, 64-byte
** aligned, taken from scratch before the parallel_for.
*/
#ifndef LOOM_FBGEMM_JAGGED_GEMM_H
#define LOOM_FBGEMM_JAGGED_GEMM_H

#include <stddef.h>
#include <stdint.h>

size_t jg_gemm_workspace(int f64, int64_t m, int64_t n, int64_t k);
void jg_gemm_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa, const float *B,
                 int64_t ldb, float *C, int64_t ldc, const float *bias, void *work, size_t work_bytes);
void jg_gemm_f64(int64_t m, int64_t n, int64_t k, const double *A, int64_t rsa, int64_t csa, const double *B,
                 int64_t ldb, double *C, int64_t ldc, const double *bias, void *work, size_t work_bytes);

/* fbgemm's 16-bit jagged bmm: each product is rounded to the 16-bit dtype
** (f16: 1, bf16: 2) before it joins the f32 sum over k, in order. Not on
** the common GEMM: see jagged_gemm.c. */
void jg_gemm_f32_rounded(int round16, int64_t m, int64_t n, int64_t k, const float *A, int64_t rsa, int64_t csa,
                         const float *B, int64_t ldb, float *C, int64_t ldc);

/* "avx512", "avx2-fma" or "scalar": the common GEMM's micro-kernel. */
const char *jg_gemm_isa(void);

#endif
