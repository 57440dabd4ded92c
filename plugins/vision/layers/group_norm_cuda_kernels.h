/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_cuda_kernels.h - the device code of vision.group_norm
** (group_norm_cuda_kernels.cu), called from group_norm_cuda.c. Asynchronous
** on `stream`; returns the cudaError_t of the launch (0 = success). Pointers
** are device memory of compact f32 tensors; weight and bias may be NULL.
*/
#ifndef LOOM_VISION_GROUP_NORM_CUDA_KERNELS_H
#define LOOM_VISION_GROUP_NORM_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* groups = N * G rows of channels_per_group planes of `inner` values; the
** group r's channels start at (r % num_groups) * channels_per_group. */
int lcu_group_norm(const float *x, const float *weight, const float *bias, double eps, float *y, int64_t groups,
                   int64_t num_groups, int64_t channels_per_group, int64_t inner, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_VISION_GROUP_NORM_CUDA_KERNELS_H */
