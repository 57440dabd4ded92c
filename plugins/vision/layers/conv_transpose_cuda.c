/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose_cuda.c - vision.conv_transpose2d on the cuda backend
** (conv_transpose_cuda_kernels.cu) on the call's stream, with the cpu
** kernel's checks (conv_transpose_schema.c).
*/
#include "conv_transpose.h"
#include "conv_transpose_cuda_kernels.h"
#include "layers_cuda.h"

static loom_status conv_transpose2d_run_cuda(loom_call *call)
{
    conv_transpose_geom g;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = conv_transpose2d_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    const lcu_conv_transpose_args a = { g.n, g.cin, g.h, g.w, g.cout, g.kh, g.kw, g.groups, g.sh, g.sw, g.ph, g.pw,
                                        g.dh, g.dw, g.ho, g.wo, g.x, g.wt, g.bias, g.y };
    cudaError_t e = (cudaError_t)lcu_conv_transpose2d(&a, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "conv_transpose2d kernel launch");
}

const loom_kernel_desc layers_conv_transpose2d_cuda_kernel =
    PK_KERNEL_CUDA(vision_conv_transpose2d_schema, "cuda:gather", LAYERS_DTYPES, conv_transpose2d_run_cuda);
