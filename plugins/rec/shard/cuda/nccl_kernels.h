/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nccl_kernels.h - the two small device kernels of the sharded
** collection's cuda forward (nccl_kernels.cu), launched on the call's
** stream; each returns the launch's error.
*/
#ifndef LOOM_REC_SHARD_NCCL_KERNELS_H
#define LOOM_REC_SHARD_NCCL_KERNELS_H

#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[s * dpitch + c] += src[s * spitch + c] for s < rows, c < cols (the
** row-wise partial sums into the reduce-scatter's block). */
cudaError_t rec_nccl_accumulate(cudaStream_t stream, float *dst, int64_t dpitch, const float *src, int64_t spitch,
                                int64_t rows, int64_t cols);

/* out[b * D + col + c] = kt[(inv ? inv[b] : b) * d + c] for b < B, c < d:
** one feature's bag rows to its samples (the expansion through
** inverse_indices; inv is device memory or NULL). */
cudaError_t rec_nccl_expand(cudaStream_t stream, float *out, int64_t D, int64_t col, const float *kt, int64_t d,
                            const int64_t *inv, int64_t B);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_REC_SHARD_NCCL_KERNELS_H */
