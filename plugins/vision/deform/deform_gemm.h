/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_gemm.h - the GEMMs of the cpu deform_conv2d, on the common GEMM
** (plugins/common/gemm, serial form: each runs inside one thread's task).
**
** The forward packs the weights of each group once per call
** (deform_gemm_pack_weights) and multiplies them with the columns of one
** tile of output positions, a row-major [kg x width] block im2col writes,
** adding the bias per output channel in the GEMM's epilogue. The backward
** runs both of its products through deform_gemm with strided operands.
** dt is LOOM_DTYPE_F32 or LOOM_DTYPE_F64 (f16 runs widened to f32).
*/
#ifndef LOOM_VISION_DEFORM_GEMM_H
#define LOOM_VISION_DEFORM_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"

/* Bytes of the packed weights of one group: m x k, row-major. */
size_t deform_gemm_packed_bytes(loom_dtype dt, int64_t m, int64_t k);
void deform_gemm_pack_weights(pk_gemm_packed *out, void *dst, loom_dtype dt, const void *w, int64_t m, int64_t k);

/* Workspace bytes (per thread) for deform_gemm calls up to m x n x k, with
** or without a packed A. */
size_t deform_gemm_workspace(loom_dtype dt, int64_t m, int64_t n, int64_t k, int a_packed);

/* c[m x n] (row stride ldc) = (accumulate ? c : 0) + A * B (+ bias[i] on
** row i when bias is not NULL). A is apacked when not NULL, else a with
** element strides ars, acs; B is b with strides brs, bcs. */
void deform_gemm(loom_dtype dt, int64_t m, int64_t n, int64_t k, const pk_gemm_packed *apacked, const void *a,
                 int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs, void *c, int64_t ldc,
                 int accumulate, const void *bias, void *work, size_t work_bytes);

#endif /* LOOM_VISION_DEFORM_GEMM_H */
