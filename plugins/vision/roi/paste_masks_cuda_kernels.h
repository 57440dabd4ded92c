/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks_cuda_kernels.h - the device code of vision.paste_masks
** (paste_masks_cuda_kernels.cu), called from paste_masks_cuda.c.
** Asynchronous on `stream`; returns the cudaError_t of the launch (0 =
** success). Pointers are device memory of the checked call's compact f32
** tensors: masks [k, 1, mh, mw], boxes [k, 4], out [k, 1, h, w].
*/
#ifndef LOOM_VISION_PASTE_MASKS_CUDA_KERNELS_H
#define LOOM_VISION_PASTE_MASKS_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int lcu_paste_masks(const float *masks, const float *boxes, float *out, int64_t k, int64_t mh, int64_t mw,
                    int64_t pad, float scale, int64_t h, int64_t w, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_VISION_PASTE_MASKS_CUDA_KERNELS_H */
