/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cuda_kernels.h - the device kernels of the RoI ops (vision-cuda.so),
** called from C. Implemented in roi_cuda_kernels.cu; the launcher is
** asynchronous on `stream` and returns the cudaError_t of the launch
** (0 = success).
**
** The caller has checked every argument (roi_checks.c), every batch index
** and every argmax / channel_mapping entry, zero-filled the gradient of a
** backward call, and skips calls with an empty output.
*/
#ifndef LOOM_VISION_ROI_CUDA_KERNELS_H
#define LOOM_VISION_ROI_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct roi_cuda_args {
    int32_t kind;               /* roi_kind: 0 roi_align, 1 roi_pool, 2 ps_roi_align, 3 ps_roi_pool */
    int32_t backward;
    int32_t dtype;              /* loom_dtype: 1 f32, 2 f64, 3 f16 */
    int32_t aligned;
    int64_t n, c, h, w;         /* input, or the gradient of the input */
    int64_t k, ph, pw, c_out;   /* output (or grad) is [k, c_out, ph, pw] */
    double spatial_scale;
    int64_t sampling_ratio;
    const void *input;          /* forward: input; backward: grad */
    const void *rois;
    const int32_t *map_in;      /* backward of roi_pool (argmax) and ps ops (channel_mapping) */
    void *output;
    int32_t *map_out;           /* forward of roi_pool and ps ops */
} roi_cuda_args;

int roi_cuda_launch(const roi_cuda_args *args, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_VISION_ROI_CUDA_KERNELS_H */
