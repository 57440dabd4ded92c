/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_gemm.h - the small dense GEMM the jagged bmm ops run on one batch
** row at a time: C[m, n] = bias + A[m, k] @ B[k, n], in the compute type
** `compute` (LOOM_DTYPE_F32 or LOOM_DTYPE_F64).
**
** A is addressed as A[i * rsa + p * csa], so a transposed operand (the
** x^T of jagged_jagged_bmm) needs no copy; B and C are row-major with
** leading dimensions ldb and ldc. bias is one row of n added to every row
** of C, or NULL for none. C is overwritten. Single-threaded (callers split
** the work over batch rows): the common GEMM's serial form
** (plugins/common/gemm), with a workspace of jg_gemm_workspace bytes (for
** the largest m, n, k the caller will run) per thread, 64-byte aligned,
** taken from scratch before the parallel_for.
*/
#ifndef LOOM_FBGEMM_JAGGED_GEMM_H
#define LOOM_FBGEMM_JAGGED_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

size_t jg_gemm_workspace(loom_dtype compute, int64_t m, int64_t n, int64_t k);
void jg_gemm(loom_dtype compute, int64_t m, int64_t n, int64_t k, const void *A, int64_t rsa, int64_t csa,
             const void *B, int64_t ldb, void *C, int64_t ldc, const void *bias, void *work, size_t work_bytes);

#endif
