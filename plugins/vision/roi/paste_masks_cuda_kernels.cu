/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks_cuda_kernels.cu - vision.paste_masks on the device: one
** thread per output pixel, the arithmetic of paste_masks.h (the cpu
** kernel's, each f32 step rounded alone).
*/
#include <cuda_runtime.h>

#include "paste_masks.h"
#include "paste_masks_cuda_kernels.h"

#define PM_THREADS 256

static __global__ void paste_masks_kernel(const float *masks, const float *boxes, float *out, int64_t k, int64_t mh,
                                          int64_t mw, int64_t pad, float scale, int64_t h, int64_t w)
{
    const int64_t total = k * h * w;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = e % w, y = (e / w) % h, m = e / (w * h);
        const paste_box p = paste_box_of(boxes + 4 * m, scale, mh + 2 * pad, mw + 2 * pad);
        out[e] = paste_pixel(masks + m * mh * mw, mh, mw, pad, &p, y, x);
    }
}

extern "C" int lcu_paste_masks(const float *masks, const float *boxes, float *out, int64_t k, int64_t mh,
                               int64_t mw, int64_t pad, float scale, int64_t h, int64_t w, void *stream)
{
    const int64_t total = k * h * w;
    if (total == 0)
        return 0;
    const int64_t want = (total + PM_THREADS - 1) / PM_THREADS;
    const unsigned blocks = (unsigned)(want < 65535 ? want : 65535);
    paste_masks_kernel<<<blocks, PM_THREADS, 0, (cudaStream_t)stream>>>(masks, boxes, out, k, mh, mw, pad, scale, h,
                                                                        w);
    return (int)cudaGetLastError();
}
