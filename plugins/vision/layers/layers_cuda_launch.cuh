/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cuda_launch.cuh - what the layers module's .cu files share: the
** grid of a grid-stride loop over n elements and the element-wise
** functions (torch's formulas in f32, as activation_cpu.c computes them:
** NaN passes through relu, relu6 and hardswish's clamp).
*/
#ifndef LOOM_VISION_LAYERS_CUDA_LAUNCH_CUH
#define LOOM_VISION_LAYERS_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "layers_cuda_kernels.h"

#define LCU_THREADS 256

/* Blocks for n elements, LCU_THREADS each, capped: the kernels loop. */
static inline unsigned lcu_blocks(int64_t n)
{
    int64_t b = (n + LCU_THREADS - 1) / LCU_THREADS;
    return (unsigned)(b < 1 ? 1 : b > (INT64_C(1) << 20) ? (INT64_C(1) << 20) : b);
}

#define LCU_FOR(i, n)                                                                              \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                      \
         i += (int64_t)gridDim.x * blockDim.x)

static __device__ __forceinline__ float lcu_clamp6(float r)
{
    return r != r ? r : r < 0.0f ? 0.0f : r > 6.0f ? 6.0f : r;
}

static __device__ __forceinline__ float lcu_act_apply(int act, float v)
{
    switch (act) {
    case LCU_ACT_RELU: return v > 0.0f ? v : (v != v ? v : 0.0f);
    case LCU_ACT_RELU6: return lcu_clamp6(v);
    case LCU_ACT_SILU: return v / (1.0f + expf(-v));
    case LCU_ACT_GELU_ERF: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case LCU_ACT_GELU_TANH: return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case LCU_ACT_HARDSWISH: return v * lcu_clamp6(v + 3.0f) / 6.0f;
    case LCU_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case LCU_ACT_HARDSIGMOID: return lcu_clamp6(v + 3.0f) / 6.0f;
    default: return v;
    }
}

#endif /* LOOM_VISION_LAYERS_CUDA_LAUNCH_CUH */
