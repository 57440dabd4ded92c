/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose_cuda_kernels.h - the device code of
** vision.conv_transpose2d (conv_transpose_cuda_kernels.cu), called from
** conv_transpose_cuda.c. Asynchronous on `stream`; returns the cudaError_t
** of the launch (0 = success). Pointers are device memory of compact f32
** tensors; bias may be NULL. The geometry is the checked call's.
*/
#ifndef LOOM_VISION_CONV_TRANSPOSE_CUDA_KERNELS_H
#define LOOM_VISION_CONV_TRANSPOSE_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lcu_conv_transpose_args {
    int64_t n, cin, h, w, cout, kh, kw, groups;
    int64_t sh, sw, ph, pw, dh, dw, ho, wo;
    const float *x, *weight, *bias;
    float *y;
} lcu_conv_transpose_args;

int lcu_conv_transpose2d(const lcu_conv_transpose_args *a, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_VISION_CONV_TRANSPOSE_CUDA_KERNELS_H */
