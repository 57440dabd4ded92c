/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks_cuda.c - vision.paste_masks on the cuda backend
** (paste_masks_cuda_kernels.cu) on the call's stream, with the cpu
** kernel's checks (paste_masks_schema.c), and its module of vision-cuda.so.
*/
#include <cuda_runtime.h>

#include "paste_masks.h"
#include "paste_masks_cuda_kernels.h"

static loom_status paste_masks_run_cuda(loom_call *call)
{
    paste_masks_geom g;
    loom_tensor *out;
    loom_status st = paste_masks_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e == cudaSuccess)
        e = (cudaError_t)lcu_paste_masks(g.masks, g.boxes, g.out, g.k, g.mh, g.mw, g.pad, g.scale, g.h, g.w,
                                         call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK
                            : pk_host->fail(LOOM_EDEVICE, "paste_masks kernel launch: %s (%s)", cudaGetErrorString(e),
                                            cudaGetErrorName(e));
}

static const loom_kernel_desc cuda_kernels[] = {
    PK_KERNEL_CUDA(vision_paste_masks_schema, "cuda:pixels", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), paste_masks_run_cuda),
};

const pk_module vision_paste_masks_cuda = PK_MODULE("paste_masks", vision_paste_masks_ops, cuda_kernels, NULL);
