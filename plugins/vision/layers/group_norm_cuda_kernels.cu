/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_cuda_kernels.cu - vision.group_norm on the device: one block
** per (sample, group); the mean, then the sum of squared deviations, in
** double and reduced over the block's threads (two passes where the cpu
** kernel makes one shifted pass: both are exact to double rounding); then y = fma(x, scale, shift) in f32
** per channel, as the cpu kernel.
*/
#include <cuda_runtime.h>
#include <math.h>

#include "group_norm_cuda_kernels.h"

#define GN_THREADS 256

/* The sum of v over the block, in every thread. */
static __device__ double gn_block_sum(double v, double *shared)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = GN_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    double total = shared[0];
    __syncthreads();
    return total;
}

static __global__ void group_norm_kernel(const float *xs, const float *w, const float *b, double eps, float *ys,
                                         int64_t groups, int64_t num_groups, int64_t cpg, int64_t inner)
{
    __shared__ double shared[GN_THREADS];
    const int64_t len = cpg * inner;
    for (int64_t r = blockIdx.x; r < groups; r += gridDim.x) {
        const float *x = xs + r * len;
        float *y = ys + r * len;
        double s = 0.0;
        for (int64_t i = threadIdx.x; i < len; i += GN_THREADS)
            s += x[i];
        double mean = gn_block_sum(s, shared) / (double)len, q = 0.0;
        for (int64_t i = threadIdx.x; i < len; i += GN_THREADS)
            q += ((double)x[i] - mean) * ((double)x[i] - mean);
        q = gn_block_sum(q, shared);
        float rstd = (float)(1.0 / sqrt(q / (double)len + eps)), fmean = (float)mean;
        int64_t c0 = (r % num_groups) * cpg;
        for (int64_t i = threadIdx.x; i < len; i += GN_THREADS) {
            int64_t c = c0 + i / inner;
            float scale = rstd * (w != NULL ? w[c] : 1.0f);
            float shift = (b != NULL ? b[c] : 0.0f) - scale * fmean;
            y[i] = fmaf(x[i], scale, shift);
        }
    }
}

extern "C" int lcu_group_norm(const float *x, const float *weight, const float *bias, double eps, float *y,
                              int64_t groups, int64_t num_groups, int64_t channels_per_group, int64_t inner,
                              void *stream)
{
    if (groups == 0 || channels_per_group == 0 || inner == 0)
        return 0;
    unsigned blocks = (unsigned)(groups < 65535 ? groups : 65535);
    group_norm_kernel<<<blocks, GN_THREADS, 0, (cudaStream_t)stream>>>(x, weight, bias, eps, y, groups, num_groups,
                                                                       channels_per_group, inner);
    return (int)cudaGetLastError();
}
