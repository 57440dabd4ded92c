/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rowwise_cuda.c - vision.linear (cuBLAS SGEMM onto the bias rows, f32
** math), vision.softmax and vision.layer_norm (rowwise_cuda_kernels.cu) on
** the cuda backend, on the call's stream, with the cpu kernels' checks.
*/
#include "layers_cuda.h"

static loom_status linear_run_cuda(loom_call *call)
{
    const loom_tensor *w = call->inputs[1], *b = call->inputs[2];
    loom_tensor *out;
    loom_status st = layers_check_linear(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t k = w->shape[1], n = w->shape[0], m = loom_numel(out) / n;
    return layers_cuda_fc(call, loom_data(call->inputs[0]), m, k, loom_data(w), b != NULL ? loom_data(b) : NULL, n,
                          loom_data(out));
}

static loom_status softmax_run_cuda(loom_call *call)
{
    int64_t len, inner;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_softmax(call, &len, &inner, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    const int64_t outer = loom_numel(out) / (len * inner);
    cudaError_t e = (cudaError_t)lcu_softmax(loom_data(call->inputs[0]), loom_data(out), outer, len, inner, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "softmax kernel launch");
}

static loom_status layer_norm_run_cuda(loom_call *call)
{
    const loom_tensor *w = call->inputs[1], *b = call->inputs[2];
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_layer_norm(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    const int64_t len = loom_numel(w);
    cudaError_t e = (cudaError_t)lcu_layer_norm(loom_data(call->inputs[0]), loom_data(w),
                                                b != NULL ? loom_data(b) : NULL,
                                                call->attrs[PK_ATTR(layer_norm, eps)].u.f, loom_data(out),
                                                loom_numel(out) / len, len, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "layer_norm kernel launch");
}

const loom_kernel_desc layers_rowwise_cuda_kernels[3] = {
    PK_KERNEL_CUDA(vision_linear_schema, "cuda:cublas-sgemm", LAYERS_DTYPES, linear_run_cuda),
    PK_KERNEL_CUDA(vision_softmax_schema, "cuda:three-pass", LAYERS_DTYPES, softmax_run_cuda),
    PK_KERNEL_CUDA(vision_layer_norm_schema, "cuda:rowwise", LAYERS_DTYPES, layer_norm_run_cuda),
};
