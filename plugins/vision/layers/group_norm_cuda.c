/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_cuda.c - vision.group_norm on the cuda backend
** (group_norm_cuda_kernels.cu) on the call's stream, with the cpu kernel's
** checks (group_norm_schema.c).
*/
#include "group_norm.h"
#include "group_norm_cuda_kernels.h"
#include "layers_cuda.h"

static loom_status group_norm_run_cuda(loom_call *call)
{
    const loom_tensor *w = call->inputs[GN_WEIGHT], *b = call->inputs[GN_BIAS];
    group_norm_geom g;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = group_norm_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    cudaError_t e = (cudaError_t)lcu_group_norm(loom_data(call->inputs[GN_INPUT]), w != NULL ? loom_data(w) : NULL,
                                                b != NULL ? loom_data(b) : NULL, g.eps, loom_data(out), g.groups,
                                                g.g, g.channels_per_group, g.inner, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "group_norm kernel launch");
}

const loom_kernel_desc layers_group_norm_cuda_kernel =
    PK_KERNEL_CUDA(vision_group_norm_schema, "cuda:two-pass", LAYERS_DTYPES, group_norm_run_cuda);
