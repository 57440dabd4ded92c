/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_kernels.cu - audio.ctc_greedy_decoder on the device
** (ctc_greedy_kernels.h): one thread per frame for the argmax, one per
** utterance for the count and the collapse (utterances are independent;
** frames within one are a scan, short next to the argmax's reads).
*/
#include "ctc_cu_launch.cuh"
#include "ctc_greedy_kernels.h"

static unsigned blocks_for(int64_t n) { return (unsigned)((n + 255) / 256); }

__global__ void argmax_kernel(const float *e, int64_t rows, int64_t n, int32_t *best)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *x = e + r * n;
    int32_t b = 0;
    float v = x[0];
    if (!isnan(v)) {
        for (int64_t i = 1; i < n; i++) {
            const float y = x[i];
            if (isnan(y)) {
                b = (int32_t)i;
                break;
            }
            if (y > v) {
                v = y;
                b = (int32_t)i;
            }
        }
    }
    best[r] = b;
}

__device__ static int64_t frames_of(const int64_t *lengths, int64_t b, int64_t T)
{
    return lengths != NULL ? lengths[b] : T;
}

__global__ void count_kernel(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                             int64_t *counts)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B)
        return;
    const int32_t *p = best + b * T;
    int64_t k = 0, n = frames_of(lengths, b, T);
    for (int64_t t = 0; t < n; t++)
        k += p[t] != blank && (t == 0 || p[t] != p[t - 1]);
    counts[b] = k;
}

__global__ void write_kernel(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                             const int64_t *offsets, int64_t *tokens)
{
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B)
        return;
    const int32_t *p = best + b * T;
    int64_t k = offsets[b], n = frames_of(lengths, b, T);
    for (int64_t t = 0; t < n; t++)
        if (p[t] != blank && (t == 0 || p[t] != p[t - 1]))
            tokens[k++] = p[t];
}

extern "C" int ctc_greedy_cu_argmax(const float *e, int64_t rows, int64_t n, int32_t *best, void *stream, char *err,
                                    size_t err_size)
{
    argmax_kernel<<<blocks_for(rows), 256, 0, (cudaStream_t)stream>>>(e, rows, n, best);
    return ctc_cu_launched("argmax", err, err_size);
}

extern "C" int ctc_greedy_cu_count(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                                   int64_t *counts, void *stream, char *err, size_t err_size)
{
    count_kernel<<<blocks_for(B), 256, 0, (cudaStream_t)stream>>>(best, lengths, B, T, blank, counts);
    return ctc_cu_launched("count", err, err_size);
}

extern "C" int ctc_greedy_cu_write(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                                   const int64_t *offsets, int64_t *tokens, void *stream, char *err, size_t err_size)
{
    write_kernel<<<blocks_for(B), 256, 0, (cudaStream_t)stream>>>(best, lengths, B, T, blank, offsets, tokens);
    return ctc_cu_launched("collapse", err, err_size);
}
