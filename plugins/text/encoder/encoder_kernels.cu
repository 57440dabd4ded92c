/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_kernels.cu - the device kernels of text.bert_encoder on cuda
** (see encoder_kernels.h): one block per row for the LayerNorms, the
** masked softmax and the pooling (block reductions in double for the
** LayerNorm statistics and the softmax sum, as the cpu's portable rows),
** grid-stride loops for the elementwise kernels and the head layouts.
*/
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "encoder_kernels.h"

#define THREADS 256

static unsigned grid_for(int64_t n)
{
    int64_t g = (n + THREADS - 1) / THREADS;
    return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}

static unsigned rows_grid(int64_t n)
{
    return (unsigned)(n < 1 ? 1 : n > 2147483647 ? 2147483647 : n);
}

/* Sum of v over the block; every thread gets the result. */
__device__ static double block_sum(double v, double *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

__device__ static float block_max(float v, float *sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

/* y (row of H, already summed) = LayerNorm(y) * g + b, in place. */
__device__ static void ln_row(float *y, const float *g, const float *b, int64_t H, float eps, double *sh)
{
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < H; i += THREADS)
        s += y[i];
    const double mean = block_sum(s, sh) / (double)H;
    double v = 0.0;
    for (int64_t i = threadIdx.x; i < H; i += THREADS) {
        const double d = (double)y[i] - mean;
        v += d * d;
    }
    const double rstd = 1.0 / sqrt(block_sum(v, sh) / (double)H + (double)eps);
    for (int64_t i = threadIdx.x; i < H; i += THREADS)
        y[i] = (float)(((double)y[i] - mean) * rstd) * g[i] + b[i];
}

__global__ void embed_kernel(float *x, const int64_t *ids, const int64_t *types, const float *word,
                             const float *pos, const float *type, const float *g, const float *b, int64_t N,
                             int64_t L, int64_t H, float eps)
{
    __shared__ double sh[THREADS];
    for (int64_t r = blockIdx.x; r < N; r += gridDim.x) {
        float *y = x + r * H;
        const float *w = word + ids[r] * H, *p = pos + (r % L) * H, *t = type + (types != NULL ? types[r] : 0) * H;
        for (int64_t i = threadIdx.x; i < H; i += THREADS)
            y[i] = w[i] + p[i] + t[i];
        __syncthreads();
        ln_row(y, g, b, H, eps, sh);
        __syncthreads();
    }
}

__global__ void add_ln_kernel(float *x, const float *yv, const float *bias, const float *g, const float *b,
                              int64_t N, int64_t H, float eps)
{
    __shared__ double sh[THREADS];
    for (int64_t r = blockIdx.x; r < N; r += gridDim.x) {
        float *y = x + r * H;
        const float *a = yv + r * H;
        for (int64_t i = threadIdx.x; i < H; i += THREADS)
            y[i] = y[i] + a[i] + bias[i];
        __syncthreads();
        ln_row(y, g, b, H, eps, sh);
        __syncthreads();
    }
}

__global__ void bias_act_kernel(float *x, const float *bias, int64_t N, int64_t n, int act)
{
    const int64_t total = N * n;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i] + bias[i % n];
        float r;
        if (act == 0)
            r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        else if (act == 1)
            r = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else
            r = v > 0.0f ? v : 0.0f;
        x[i] = r;
    }
}

__global__ void split_kernel(const float *qkv, const float *bias, float *q, float *kt, float *v, int64_t B,
                             int64_t L, int64_t heads, int64_t d)
{
    const int64_t H = heads * d, total = B * L * 3 * H;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % (3 * H), row = i / (3 * H), b = row / L, t = row % L;
        const int64_t part = c / H, h = (c % H) / d, k = c % d;
        const float val = qkv[i] + bias[c];
        const int64_t bh = b * heads + h;
        if (part == 0)
            q[(bh * L + t) * d + k] = val;
        else if (part == 1)
            kt[(bh * d + k) * L + t] = val;
        else
            v[(bh * L + t) * d + k] = val;
    }
}

__global__ void softmax_kernel(float *s, const int64_t *mask, float scale, int64_t rows, int64_t heads, int64_t L)
{
    __shared__ double sh[THREADS];
    __shared__ float shf[THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float *x = s + r * L;
        const int64_t *keep = mask != NULL ? mask + (r / (heads * L)) * L : NULL;
        float mx = -INFINITY;
        int kept = 0;
        for (int64_t j = threadIdx.x; j < L; j += THREADS)
            if (keep == NULL || keep[j] != 0) {
                kept = 1;
                mx = fmaxf(mx, scale * x[j]);
            }
        const double any = block_sum((double)kept, sh);
        mx = block_max(mx, shf);
        if (any == 0.0) {
            for (int64_t j = threadIdx.x; j < L; j += THREADS)
                x[j] = 1.0f / (float)L;
            continue;
        }
        double sum = 0.0;
        for (int64_t j = threadIdx.x; j < L; j += THREADS) {
            const float e = keep == NULL || keep[j] != 0 ? expf(scale * x[j] - mx) : 0.0f;
            x[j] = e;
            sum += e;
        }
        const float inv = (float)(1.0 / block_sum(sum, sh));
        for (int64_t j = threadIdx.x; j < L; j += THREADS)
            x[j] *= inv;
    }
}

__global__ void merge_kernel(const float *o, float *ctx, int64_t B, int64_t L, int64_t heads, int64_t d)
{
    const int64_t H = heads * d, total = B * L * H;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = i % H, row = i / H, b = row / L, t = row % L, h = c / d, k = c % d;
        ctx[i] = o[((b * heads + h) * L + t) * d + k];
    }
}

__global__ void pool_kernel(const float *x, const int64_t *mask, float *out, int64_t B, int64_t L, int64_t H,
                            int pooling, int normalize)
{
    __shared__ double sh[THREADS];
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        float *o = out + b * H;
        const int64_t *keep = mask != NULL ? mask + b * L : NULL;
        const float *xb = x + b * L * H;
        for (int64_t k = threadIdx.x; k < H; k += THREADS) {
            float v;
            if (pooling == 1) {
                v = xb[k];
            } else if (pooling == 2) {
                v = -1e9f;
                for (int64_t t = 0; t < L; t++)
                    if (keep == NULL || keep[t] != 0)
                        v = fmaxf(v, xb[t * H + k]);
            } else {
                int64_t cnt = 0;
                v = 0.0f;
                for (int64_t t = 0; t < L; t++)
                    if (keep == NULL || keep[t] != 0) {
                        cnt++;
                        v += xb[t * H + k];
                    }
                v *= cnt > 0 ? 1.0f / (float)cnt : 0.0f;
            }
            o[k] = v;
        }
        if (!normalize)
            continue;
        __syncthreads();
        double ss = 0.0;
        for (int64_t k = threadIdx.x; k < H; k += THREADS)
            ss += (double)o[k] * o[k];
        const double nrm = sqrt(block_sum(ss, sh));
        const float inv = (float)(1.0 / (nrm > 1e-12 ? nrm : 1e-12));
        for (int64_t k = threadIdx.x; k < H; k += THREADS)
            o[k] *= inv;
        __syncthreads();
    }
}

#define LAUNCHED() ((int)cudaGetLastError())

extern "C" int enc_cu_embed(float *x, const int64_t *ids, const int64_t *types, const float *word, const float *pos,
                            const float *type, const float *g, const float *b, int64_t N, int64_t L, int64_t H,
                            float eps, void *stream)
{
    embed_kernel<<<rows_grid(N), THREADS, 0, (cudaStream_t)stream>>>(x, ids, types, word, pos, type, g, b, N, L, H,
                                                                     eps);
    return LAUNCHED();
}

extern "C" int enc_cu_add_ln(float *x, const float *y, const float *bias, const float *g, const float *b, int64_t N,
                             int64_t H, float eps, void *stream)
{
    add_ln_kernel<<<rows_grid(N), THREADS, 0, (cudaStream_t)stream>>>(x, y, bias, g, b, N, H, eps);
    return LAUNCHED();
}

extern "C" int enc_cu_bias_act(float *x, const float *bias, int64_t N, int64_t n, int act, void *stream)
{
    bias_act_kernel<<<grid_for(N * n), THREADS, 0, (cudaStream_t)stream>>>(x, bias, N, n, act);
    return LAUNCHED();
}

extern "C" int enc_cu_split_heads(const float *qkv, const float *bias, float *q, float *kt, float *v, int64_t B,
                                  int64_t L, int64_t heads, int64_t d, void *stream)
{
    split_kernel<<<grid_for(B * L * 3 * heads * d), THREADS, 0, (cudaStream_t)stream>>>(qkv, bias, q, kt, v, B, L,
                                                                                      heads, d);
    return LAUNCHED();
}

extern "C" int enc_cu_softmax(float *s, const int64_t *mask, float scale, int64_t B, int64_t heads, int64_t L,
                              void *stream)
{
    softmax_kernel<<<rows_grid(B * heads * L), THREADS, 0, (cudaStream_t)stream>>>(s, mask, scale, B * heads * L,
                                                                                 heads, L);
    return LAUNCHED();
}

extern "C" int enc_cu_merge_heads(const float *o, float *ctx, int64_t B, int64_t L, int64_t heads, int64_t d,
                                  void *stream)
{
    merge_kernel<<<grid_for(B * L * heads * d), THREADS, 0, (cudaStream_t)stream>>>(o, ctx, B, L, heads, d);
    return LAUNCHED();
}

extern "C" int enc_cu_pool(const float *x, const int64_t *mask, float *out, int64_t B, int64_t L, int64_t H,
                           int pooling, int normalize, void *stream)
{
    pool_kernel<<<rows_grid(B), THREADS, 0, (cudaStream_t)stream>>>(x, mask, out, B, L, H, pooling, normalize);
    return LAUNCHED();
}
