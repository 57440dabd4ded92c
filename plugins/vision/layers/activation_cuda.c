/* SPDX-License-Identifier: BSD-3-Clause */
/*
** activation_cuda.c - the element-wise layers on the cuda backend:
** vision.relu, relu6, silu, gelu, hardswish, sigmoid and vision.batch_norm
** at inference, one launch each (elementwise_cuda_kernels.cu) on the call's
** stream, with the cpu kernels' formulas and checks.
*/
#include <string.h>

#include "layers_cuda.h"

static loom_status act_run_cuda(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK || (st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &out)) != LOOM_OK
        || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    int act = (int)(intptr_t)call->kernel->user;
    if (act == LCU_ACT_GELU_ERF && strcmp(call->attrs[PK_ATTR(gelu, approximate)].u.s, "tanh") == 0)
        act = LCU_ACT_GELU_TANH;
    cudaError_t e = (cudaError_t)lcu_activation(act, loom_data(x), loom_data(out), loom_numel(out), stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "activation kernel launch");
}

static loom_status bn_run_cuda(loom_call *call)
{
    const loom_tensor *x = call->inputs[BN_INPUT];
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_batch_norm(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    const loom_tensor *w = call->inputs[BN_WEIGHT], *b = call->inputs[BN_BIAS];
    const int64_t c = x->shape[1], outer = x->shape[0], inner = loom_numel(x) / (outer * c);
    cudaError_t e = (cudaError_t)lcu_batch_norm(loom_data(x), loom_data(call->inputs[BN_MEAN]),
                                                loom_data(call->inputs[BN_VAR]), w != NULL ? loom_data(w) : NULL,
                                                b != NULL ? loom_data(b) : NULL,
                                                (float)call->attrs[PK_ATTR(batch_norm, eps)].u.f, loom_data(out),
                                                outer, c, inner, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "batch_norm kernel launch");
}

#define ACT_KERNEL(schema, act) \
    PK_KERNEL_CUDA(schema, "cuda:elementwise", LAYERS_DTYPES, act_run_cuda, .user = (void *)(intptr_t)(act))
const loom_kernel_desc layers_activation_cuda_kernels[7] = {
    ACT_KERNEL(vision_relu_schema, LCU_ACT_RELU),
    ACT_KERNEL(vision_relu6_schema, LCU_ACT_RELU6),
    ACT_KERNEL(vision_silu_schema, LCU_ACT_SILU),
    ACT_KERNEL(vision_gelu_schema, LCU_ACT_GELU_ERF),
    ACT_KERNEL(vision_hardswish_schema, LCU_ACT_HARDSWISH),
    ACT_KERNEL(vision_sigmoid_schema, LCU_ACT_SIGMOID),
    PK_KERNEL_CUDA(vision_batch_norm_schema, "cuda:per-channel", LAYERS_DTYPES, bn_run_cuda),
};
