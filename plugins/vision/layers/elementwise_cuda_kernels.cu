/* SPDX-License-Identifier: BSD-3-Clause */
/*
** elementwise_cuda_kernels.cu - the element-wise device code of the layers module
** (layers_cuda_kernels.h): the activations, batch_norm at inference,
** conv2d's bias / activation / residual epilogue and the padding modes of
** nn.Conv2d. One thread per element in grid-stride loops.
*/
#include "layers_cuda_launch.cuh"

static __global__ void act_kernel(int act, const float *x, float *y, int64_t n)
{
    LCU_FOR(i, n)
        y[i] = lcu_act_apply(act, x[i]);
}

extern "C" int lcu_activation(int act, const float *x, float *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    act_kernel<<<lcu_blocks(n), LCU_THREADS, 0, (cudaStream_t)stream>>>(act, x, y, n);
    return (int)cudaGetLastError();
}

/* alpha and beta are formed per element as the cpu kernel forms them per
** channel (f32: inv = 1 / sqrt(var + eps)), so both round alike. */
static __global__ void bn_kernel(const float *x, const float *mean, const float *var, const float *weight,
                                 const float *bias, float eps, float *y, int64_t n, int64_t c, int64_t inner)
{
    LCU_FOR(i, n) {
        int64_t ch = (i / inner) % c;
        float inv = 1.0f / sqrtf(var[ch] + eps);
        float a = weight != NULL ? weight[ch] * inv : inv;
        float b = (bias != NULL ? bias[ch] : 0.0f) - mean[ch] * a;
        y[i] = x[i] * a + b;
    }
}

extern "C" int lcu_batch_norm(const float *x, const float *mean, const float *var, const float *weight,
                              const float *bias, float eps, float *y, int64_t outer, int64_t c, int64_t inner,
                              void *stream)
{
    int64_t n = outer * c * inner;
    if (n == 0)
        return 0;
    bn_kernel<<<lcu_blocks(n), LCU_THREADS, 0, (cudaStream_t)stream>>>(x, mean, var, weight, bias, eps, y, n, c,
                                                                      inner);
    return (int)cudaGetLastError();
}

static __global__ void epilogue_kernel(float *y, const float *bias, const float *residual, int act, int64_t total,
                                       int64_t c, int64_t plane)
{
    LCU_FOR(i, total) {
        float v = y[i] + (bias != NULL ? bias[(i / plane) % c] : 0.0f);
        v = lcu_act_apply(act, v);
        y[i] = residual != NULL ? v + residual[i] : v;
    }
}

extern "C" int lcu_conv_epilogue(float *y, const float *bias, const float *residual, int act, int64_t n, int64_t c,
                                 int64_t plane, void *stream)
{
    int64_t total = n * c * plane;
    if (total == 0)
        return 0;
    epilogue_kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(y, bias, residual, act, total, c,
                                                                                plane);
    return (int)cudaGetLastError();
}

/* The source index of padded coordinate i (in [-pad, size + pad)), as
** conv2d_cpu.c's src_index: reflect mirrors without repeating the edge,
** replicate clamps, circular wraps. */
static __device__ __forceinline__ int64_t pad_src(int64_t i, int64_t size, int mode)
{
    if (i >= 0 && i < size)
        return i;
    switch (mode) {
    case 1: return i < 0 ? -i : 2 * (size - 1) - i;
    case 2: return i < 0 ? 0 : size - 1;
    default: return i < 0 ? i + size : i - size;
    }
}

static __global__ void pad_kernel(const float *x, float *y, int64_t total, int64_t h, int64_t w, int64_t ph,
                                  int64_t pw, int mode)
{
    const int64_t hp = h + 2 * ph, wp = w + 2 * pw;
    LCU_FOR(i, total) {
        int64_t p = i / (hp * wp), r = i % (hp * wp);
        int64_t iy = pad_src(r / wp - ph, h, mode), ix = pad_src(r % wp - pw, w, mode);
        y[i] = x[(p * h + iy) * w + ix];
    }
}

extern "C" int lcu_pad(const float *x, float *y, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw,
                       int mode, void *stream)
{
    int64_t total = planes * (h + 2 * ph) * (w + 2 * pw);
    if (total == 0)
        return 0;
    pad_kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(x, y, total, h, w, ph, pw, mode);
    return (int)cudaGetLastError();
}
