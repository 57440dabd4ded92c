/* SPDX-License-Identifier: BSD-3-Clause */
/*
** blocks_cuda.c - the model blocks (blocks.h) on the cuda backend:
** vision.squeeze_excitation as the planes' means, fc1 and fc2 on cuBLAS
** (layers_cuda_fc) with fc1's activation and the scale activation as
** element-wise launches, then each plane times its scale (the output may be
** the input: every mean is taken before any element is written, on one
** stream); vision.channel_shuffle as one gather through the inputs'
** strides, any dtype (blocks_cuda_kernels.cu).
*/
#include <string.h>

#include "blocks.h"
#include "layers_cuda.h"

static loom_status se_run_cuda(loom_call *call)
{
    const loom_tensor *x = call->inputs[SE_INPUT];
    int64_t s;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_squeeze_excitation(call, &s, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    const int64_t n = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3];
    float *pooled = pk_host->scratch(call->ctx, (size_t)(n * c + n * s + 16) * sizeof(float));
    if (pooled == NULL)
        return pk_host->fail(LOOM_ENOMEM, "squeeze_excitation: no device scratch for %lld x %lld channels",
                             (long long)n, (long long)c);
    float *hidden = pooled + n * c;
    const char *act = call->attrs[PK_ATTR(squeeze_excitation, activation)].u.s;
    const int hard = strcmp(call->attrs[PK_ATTR(squeeze_excitation, scale_activation)].u.s, "hardsigmoid") == 0;
    cudaError_t e = (cudaError_t)lcu_plane_means(loom_data(x), pooled, n * c, hw, stream);
    if (e != cudaSuccess)
        return layers_cuda_fail(e, "squeeze_excitation mean kernel launch");
    if ((st = layers_cuda_fc(call, pooled, n, c, loom_data(call->inputs[SE_FC1_WEIGHT]),
                             loom_data(call->inputs[SE_FC1_BIAS]), s, hidden)) != LOOM_OK)
        return st;
    e = (cudaError_t)lcu_activation(strcmp(act, "silu") == 0 ? LCU_ACT_SILU : LCU_ACT_RELU, hidden, hidden, n * s,
                                    stream);
    if (e != cudaSuccess)
        return layers_cuda_fail(e, "squeeze_excitation activation launch");
    /* the scales overwrite the means, which fc1 has consumed */
    if ((st = layers_cuda_fc(call, hidden, n, s, loom_data(call->inputs[SE_FC2_WEIGHT]),
                             loom_data(call->inputs[SE_FC2_BIAS]), c, pooled)) != LOOM_OK)
        return st;
    e = (cudaError_t)lcu_activation(hard ? LCU_ACT_HARDSIGMOID : LCU_ACT_SIGMOID, pooled, pooled, n * c, stream);
    if (e == cudaSuccess)
        e = (cudaError_t)lcu_plane_scale(loom_data(x), pooled, loom_data(out), n * c, hw, stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "squeeze_excitation scale kernel launch");
}

/* The source's data, channels and element strides (compact when absent). */
static void shuffle_src(lcu_shuffle *s, int i, const loom_tensor *t)
{
    int64_t expect = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        s->stride[i][d] = t->strides != NULL ? t->strides[d] : expect;
        expect *= t->shape[d];
    }
    s->data[i] = loom_data(t);
    s->channels[i] = t->shape[1];
}

static loom_status shuffle_run_cuda(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *other = call->n_inputs > 1 ? call->inputs[1] : NULL;
    loom_tensor *out;
    cudaStream_t stream;
    loom_status st = layers_check_shuffle(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = layers_cuda_stream(call, &stream)) != LOOM_OK)
        return st;
    lcu_shuffle s;
    memset(&s, 0, sizeof s);
    s.ndim = out->ndim;
    memcpy(s.shape, out->shape, (size_t)out->ndim * sizeof s.shape[0]);
    s.c = out->shape[1];
    s.groups = call->attrs[PK_ATTR(channel_shuffle, groups)].u.i;
    s.inner = 1;
    for (int32_t d = 2; d < out->ndim; d++)
        s.inner *= out->shape[d];
    s.elem = ((int64_t)x->dtype.bits * x->dtype.lanes + 7) / 8;
    shuffle_src(&s, 0, x);
    if (other != NULL)
        shuffle_src(&s, 1, other);
    cudaError_t e = (cudaError_t)lcu_channel_shuffle(&s, loom_data(out), stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "channel_shuffle kernel launch");
}

const loom_kernel_desc layers_blocks_cuda_kernels[2] = {
    PK_KERNEL_CUDA(vision_squeeze_excitation_schema, "cuda:cublas", LAYERS_DTYPES, se_run_cuda),
    PK_KERNEL_CUDA(vision_channel_shuffle_schema, "cuda:gather", LOOM_DTYPES_ALL, shuffle_run_cuda,
                   .flags = LOOM_KERNEL_STRIDED),
};
