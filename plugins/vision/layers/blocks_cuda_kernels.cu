/* SPDX-License-Identifier: BSD-3-Clause */
/*
** blocks_cuda_kernels.cu - the device code of the model blocks (blocks.h):
** squeeze_excitation's plane means (one block per plane, an f32 tree
** reduction) and its per-plane scale, and channel_shuffle's gather (one
** thread per output element, read through the sources' strides).
*/
#include "layers_cuda_launch.cuh"

static __global__ void plane_means_kernel(const float *xs, float *means, int64_t planes, int64_t hw)
{
    __shared__ float shared[LCU_THREADS];
    for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
        const float *x = xs + p * hw;
        float s = 0.0f;
        for (int64_t i = threadIdx.x; i < hw; i += LCU_THREADS)
            s += x[i];
        shared[threadIdx.x] = s;
        __syncthreads();
        for (int k = LCU_THREADS / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k)
                shared[threadIdx.x] += shared[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            means[p] = shared[0] / (float)hw;
        __syncthreads();
    }
}

extern "C" int lcu_plane_means(const float *x, float *means, int64_t planes, int64_t hw, void *stream)
{
    if (planes == 0)
        return 0;
    unsigned blocks = (unsigned)(planes < 65535 ? planes : 65535);
    plane_means_kernel<<<blocks, LCU_THREADS, 0, (cudaStream_t)stream>>>(x, means, planes, hw);
    return (int)cudaGetLastError();
}

static __global__ void plane_scale_kernel(const float *x, const float *scale, float *y, int64_t total, int64_t hw)
{
    LCU_FOR(i, total)
        y[i] = x[i] * scale[i / hw];
}

extern "C" int lcu_plane_scale(const float *x, const float *scale, float *y, int64_t planes, int64_t hw,
                               void *stream)
{
    int64_t total = planes * hw;
    if (total == 0)
        return 0;
    plane_scale_kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(x, scale, y, total, hw);
    return (int)cudaGetLastError();
}

static __device__ __forceinline__ void copy_elem(char *dst, const char *src, int64_t elem)
{
    switch (elem) {
    case 1: *dst = *src; break;
    case 2: *(uint16_t *)dst = *(const uint16_t *)src; break;
    case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
    case 8: *(uint64_t *)dst = *(const uint64_t *)src; break;
    default:
        for (int64_t b = 0; b < elem; b++)
            dst[b] = src[b];
    }
}

static __global__ void shuffle_kernel(lcu_shuffle s, char *y, int64_t total)
{
    const int64_t per_group = s.c / s.groups;
    LCU_FOR(i, total) {
        /* output channel o = k * groups + g reads channel g * per_group + k of cat([src0, src1], 1) */
        int64_t n = i / (s.c * s.inner), o = (i / s.inner) % s.c, r = i % s.inner;
        int64_t cc = (o % s.groups) * per_group + o / s.groups;
        int src = cc < s.channels[0] ? 0 : 1;
        cc = src == 0 ? cc : cc - s.channels[0];
        int64_t off = n * s.stride[src][0] + cc * s.stride[src][1];
        for (int32_t d = s.ndim - 1; d >= 2; d--) {
            off += (r % s.shape[d]) * s.stride[src][d];
            r /= s.shape[d];
        }
        copy_elem(y + i * s.elem, (const char *)s.data[src] + off * s.elem, s.elem);
    }
}

extern "C" int lcu_channel_shuffle(const lcu_shuffle *s, void *y, void *stream)
{
    int64_t total = s->shape[0] * s->c * s->inner;
    if (total == 0)
        return 0;
    shuffle_kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(*s, (char *)y, total);
    return (int)cudaGetLastError();
}
