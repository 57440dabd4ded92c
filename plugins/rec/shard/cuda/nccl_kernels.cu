/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nccl_kernels.cu - the device code of rec-mpi-cuda.so (nccl_kernels.h):
** a strided row accumulation and the expansion of bag rows to samples.
** One thread per element, grid-stride loops; both are memory-bound copies
** whose cost is small beside the lookups and the collectives.
*/
#include "nccl_kernels.h"

static unsigned blocks_for(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

__global__ void accumulate_kernel(float *dst, int64_t dpitch, const float *src, int64_t spitch, int64_t rows,
                                  int64_t cols)
{
    const int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = i / cols, c = i % cols;
        dst[s * dpitch + c] += src[s * spitch + c];
    }
}

__global__ void expand_kernel(float *out, int64_t D, int64_t col, const float *kt, int64_t d, const int64_t *inv,
                              int64_t B)
{
    const int64_t n = B * d;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = i / d, c = i % d;
        out[b * D + col + c] = kt[(inv ? inv[b] : b) * d + c];
    }
}

extern "C" cudaError_t rec_nccl_accumulate(cudaStream_t stream, float *dst, int64_t dpitch, const float *src,
                                           int64_t spitch, int64_t rows, int64_t cols)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    accumulate_kernel<<<blocks_for(rows * cols), 256, 0, stream>>>(dst, dpitch, src, spitch, rows, cols);
    return cudaGetLastError();
}

extern "C" cudaError_t rec_nccl_expand(cudaStream_t stream, float *out, int64_t D, int64_t col, const float *kt,
                                       int64_t d, const int64_t *inv, int64_t B)
{
    if (B <= 0 || d <= 0)
        return cudaSuccess;
    expand_kernel<<<blocks_for(B * d), 256, 0, stream>>>(out, D, col, kt, d, inv, B);
    return cudaGetLastError();
}
