/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rowwise_cuda_kernels.cu - the row-wise device code of the layers module:
** softmax (rowwise_cpu.c's three passes: max, exp(x - max) and its f32
** sum, scale by 1 / sum; one thread per line along a strided dim, so the
** sum's order is the cpu's; one block per row along the last dim, the sum
** reduced over the block's threads), layer_norm (one block per row: mean and variance in double, as
** the cpu kernel, reduced over the block's threads; then (x - mean) * rstd
** * weight + bias in f32) and the bias rows a cuBLAS GEMM accumulates onto.
*/
#include <math.h>

#include "layers_cuda_launch.cuh"

static __global__ void softmax_kernel(const float *xs, float *ys, int64_t lines, int64_t len, int64_t inner)
{
    LCU_FOR(l, lines) {
        int64_t o = l / inner, in = l % inner;
        const float *x = xs + o * len * inner + in;
        float *y = ys + o * len * inner + in;
        float m = -INFINITY;
        for (int64_t t = 0; t < len; t++) {
            float v = x[t * inner];
            m = v > m || v != v ? v : m;
        }
        float s = 0.0f;
        for (int64_t t = 0; t < len; t++) {
            float e = expf(x[t * inner] - m);
            y[t * inner] = e;
            s += e;
        }
        float inv = 1.0f / s;
        for (int64_t t = 0; t < len; t++)
            y[t * inner] *= inv;
    }
}

/* The max (NaN wins, as the cpu's compare) or the sum of v over the block. */
static __device__ float block_reduce(float v, float *shared, int is_max)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = LCU_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            float a = shared[threadIdx.x], b = shared[threadIdx.x + s];
            shared[threadIdx.x] = is_max ? (b > a || b != b ? b : a) : a + b;
        }
        __syncthreads();
    }
    float r = shared[0];
    __syncthreads();
    return r;
}

static __global__ void softmax_rows_kernel(const float *xs, float *ys, int64_t rows, int64_t len)
{
    __shared__ float shared[LCU_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *x = xs + r * len;
        float *y = ys + r * len;
        float m = -INFINITY;
        for (int64_t t = threadIdx.x; t < len; t += LCU_THREADS)
            m = x[t] > m || x[t] != x[t] ? x[t] : m;
        m = block_reduce(m, shared, 1);
        float s = 0.0f;
        for (int64_t t = threadIdx.x; t < len; t += LCU_THREADS) {
            float e = expf(x[t] - m);
            y[t] = e;
            s += e;
        }
        float inv = 1.0f / block_reduce(s, shared, 0);
        for (int64_t t = threadIdx.x; t < len; t += LCU_THREADS)
            y[t] *= inv;
    }
}

extern "C" int lcu_softmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, void *stream)
{
    int64_t lines = outer * inner;
    if (lines == 0 || len == 0)
        return 0;
    if (inner == 1 && len >= 64) {      /* rows: a block each (logits, attention rows) */
        unsigned blocks = (unsigned)(outer < 65535 ? outer : 65535);
        softmax_rows_kernel<<<blocks, LCU_THREADS, 0, (cudaStream_t)stream>>>(x, y, outer, len);
        return (int)cudaGetLastError();
    }
    softmax_kernel<<<lcu_blocks(lines), LCU_THREADS, 0, (cudaStream_t)stream>>>(x, y, lines, len, inner);
    return (int)cudaGetLastError();
}

/* The sum of v over the block (LCU_THREADS threads), in every thread. */
static __device__ double block_sum(double v, double *shared)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = LCU_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    double total = shared[0];
    __syncthreads();
    return total;
}

static __global__ void layer_norm_kernel(const float *xs, const float *w, const float *b, double eps, float *ys,
                                         int64_t rows, int64_t len)
{
    __shared__ double shared[LCU_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float *x = xs + r * len;
        float *y = ys + r * len;
        double s = 0.0;
        for (int64_t i = threadIdx.x; i < len; i += LCU_THREADS)
            s += x[i];
        double mean = block_sum(s, shared) / (double)len, q = 0.0;
        for (int64_t i = threadIdx.x; i < len; i += LCU_THREADS)
            q += (x[i] - mean) * (x[i] - mean);
        q = block_sum(q, shared);
        float fm = (float)mean, rstd = (float)(1.0 / sqrt(q / (double)len + eps));
        for (int64_t i = threadIdx.x; i < len; i += LCU_THREADS)
            y[i] = (x[i] - fm) * rstd * w[i] + (b != NULL ? b[i] : 0.0f);
    }
}

extern "C" int lcu_layer_norm(const float *x, const float *weight, const float *bias, double eps, float *y,
                              int64_t rows, int64_t len, void *stream)
{
    if (rows == 0 || len == 0)
        return 0;
    unsigned blocks = (unsigned)(rows < 65535 ? rows : 65535);
    layer_norm_kernel<<<blocks, LCU_THREADS, 0, (cudaStream_t)stream>>>(x, weight, bias, eps, y, rows, len);
    return (int)cudaGetLastError();
}

static __global__ void fill_rows_kernel(float *y, const float *bias, int64_t total, int64_t cols)
{
    LCU_FOR(i, total)
        y[i] = bias != NULL ? bias[i % cols] : 0.0f;
}

extern "C" int lcu_fill_rows(float *y, const float *bias, int64_t rows, int64_t cols, void *stream)
{
    int64_t total = rows * cols;
    if (total == 0)
        return 0;
    fill_rows_kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(y, bias, total, cols);
    return (int)cudaGetLastError();
}
