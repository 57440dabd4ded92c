/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_kernels.h - the device kernels of core-cuda.so, called from C.
** Implemented in cuda_kernels.cu; every launcher is asynchronous on
** `stream` and returns the cudaError_t of the launch (0 = success).
*/
#ifndef LOOM_CORE_CUDA_KERNELS_H
#define LOOM_CORE_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORE_CUDA_MAX_NDIM 12

/* input + alpha * other over an output of `ndim` dims; element strides per
** operand (0 on broadcast dims). dtype: 1 f32, 2 f64, 3 f16, 4 bf16 (the
** loom_dtype values). f16/bf16 compute in float like torch's opmath. */
typedef struct core_cuda_add_args {
    int32_t ndim;
    int32_t dtype;
    int64_t n;
    int64_t shape[CORE_CUDA_MAX_NDIM];
    int64_t sa[CORE_CUDA_MAX_NDIM], sb[CORE_CUDA_MAX_NDIM], sc[CORE_CUDA_MAX_NDIM];
    const void *a, *b;
    void *c;
    double alpha;
} core_cuda_add_args;

int core_cuda_add_launch(const core_cuda_add_args *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_CORE_CUDA_KERNELS_H */
