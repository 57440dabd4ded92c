/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_cuda_pack.c - the deform module of vision-cuda.so: its ops and
** their cuda kernels: checks (deform_checks.c, shared with the cpu), outputs
** and workspace on the call's device, then the asynchronous launchers of
** deform_cuda_kernels.cu on the call's stream. The workspace is call
** scratch, released by the core after the call (cudaFree synchronises).
*/
#include <string.h>

#include <cuda_runtime.h>

#include "deform.h"
#include "deform_cuda_kernels.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status launched(int err, const char *what)
{
    return err == 0 ? LOOM_OK : cuda_fail((cudaError_t)err, what);
}

static loom_status set_device(const loom_call *call)
{
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaSetDevice");
}

static void *workspace(loom_call *call, size_t bytes)
{
    return pk_host->scratch(call->ctx, bytes > 0 ? bytes : 256);
}

static deform_cuda_conv conv_args(const deform_geom *g)
{
    deform_cuda_conv c = {
        .dtype = (int32_t)g->dtype, .use_mask = g->use_mask, .n = g->n, .cin = g->cin, .h = g->h, .w = g->w,
        .cout = g->cout, .kh = g->kh, .kw = g->kw, .groups = g->groups, .offset_groups = g->offset_groups,
        .sh = g->sh, .sw = g->sw, .ph = g->ph, .pw = g->pw, .dh = g->dh, .dw = g->dw, .ho = g->ho, .wo = g->wo,
        .input = g->input, .offset = g->offset, .weight = g->weight, .bias = g->bias, .mask = g->mask,
        .grad = g->grad,
    };
    return c;
}

static loom_status deform_conv2d_cuda(loom_call *call)
{
    deform_geom g;
    loom_tensor *out;
    loom_status st = deform_conv_check(call, 0, &g);
    if (st == LOOM_OK)
        st = deform_conv_alloc(call, &g, 0, &out);
    if (st != LOOM_OK || loom_numel(out) == 0 || (st = set_device(call)) != LOOM_OK)
        return st;
    deform_cuda_conv c = conv_args(&g);
    void *ws = workspace(call, deform_cuda_forward_workspace(&c));
    if (ws == NULL)
        return LOOM_ENOMEM;
    return launched(deform_cuda_forward(&c, loom_data(out), ws, call->ctx->stream), "deform_conv2d kernels");
}

static loom_status deform_conv2d_backward_cuda(loom_call *call)
{
    deform_geom g;
    loom_tensor *outs[5];
    loom_status st = deform_conv_check(call, 1, &g);
    if (st == LOOM_OK)
        st = deform_conv_alloc(call, &g, 1, outs);
    if (st != LOOM_OK || (st = set_device(call)) != LOOM_OK)
        return st;
    deform_cuda_conv c = conv_args(&g);
    void *ws = workspace(call, deform_cuda_backward_workspace(&c)), *ptrs[5];
    if (ws == NULL)
        return LOOM_ENOMEM;
    for (int i = 0; i < 5; i++)
        ptrs[i] = loom_data(outs[i]);
    return launched(deform_cuda_backward(&c, ptrs, ws, call->ctx->stream), "deform_conv2d_backward kernels");
}

static loom_status copy_on_device(loom_call *call, const loom_tensor *in)
{
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(in), in->ndim, in->shape, &out);
    size_t bytes = (size_t)loom_numel(in) * pk_host->dtype_size(loom_tensor_dtype_of(in));
    if (st != LOOM_OK || bytes == 0 || (st = set_device(call)) != LOOM_OK)
        return st;
    cudaError_t e = cudaMemcpyAsync(loom_data(out), loom_data(in), bytes, cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaMemcpyAsync");
}

static loom_status drop_block_cuda(loom_call *call, int dims)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    drop_block_plan pl;
    loom_tensor *out;
    loom_status st = drop_block_check(call, dims, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || pl.numel == 0)
        return copy_on_device(call, in);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK
        || (st = set_device(call)) != LOOM_OK)
        return st;
    deform_cuda_drop_block d = {
        .dtype = (int32_t)pl.dtype, .dims = dims, .planes = pl.n * pl.c, .bs = pl.bs, .numel = pl.numel,
        .gamma = pl.gamma, .eps = pl.eps, .seed = pl.seed, .input = pl.input, .noise = pl.noise,
    };
    memcpy(d.sp, pl.sp, sizeof d.sp);
    memcpy(d.nsp, pl.nsp, sizeof d.nsp);
    void *ws = workspace(call, deform_cuda_drop_block_workspace(&d));
    if (ws == NULL)
        return LOOM_ENOMEM;
    return launched(deform_cuda_drop_block_run(&d, loom_data(out), ws, call->ctx->stream), "drop_block kernels");
}

static loom_status drop_block2d_cuda(loom_call *call) { return drop_block_cuda(call, 2); }
static loom_status drop_block3d_cuda(loom_call *call) { return drop_block_cuda(call, 3); }

static loom_status stochastic_depth_cuda(loom_call *call)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    stochastic_depth_plan pl;
    loom_tensor *out;
    loom_status st = stochastic_depth_check(call, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || loom_numel(in) == 0)
        return copy_on_device(call, in);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK
        || (st = set_device(call)) != LOOM_OK)
        return st;
    deform_cuda_stochastic_depth d = {
        .dtype = (int32_t)pl.dtype, .rows = pl.rows, .row_len = pl.row_len, .p = pl.p, .seed = pl.seed,
        .input = pl.input, .noise = pl.noise,
    };
    return launched(deform_cuda_stochastic_depth_run(&d, loom_data(out), call->ctx->stream),
                    "stochastic_depth kernel");
}

/* ---------------------------------------------------------------- module */

static const loom_kernel_desc cuda_kernels[] = {
    PK_KERNEL_CUDA(vision_deform_conv2d_schema, "cuda:im2col-gemm", VISION_FLOATS, deform_conv2d_cuda),
    PK_KERNEL_CUDA(vision_deform_conv2d_backward_schema, "cuda:im2col-col2im", VISION_FLOATS,
                   deform_conv2d_backward_cuda),
    PK_KERNEL_CUDA(vision_drop_block2d_schema, "cuda:elementwise", VISION_FLOATS, drop_block2d_cuda),
    PK_KERNEL_CUDA(vision_drop_block3d_schema, "cuda:elementwise", VISION_FLOATS, drop_block3d_cuda),
    PK_KERNEL_CUDA(vision_stochastic_depth_schema, "cuda:elementwise", VISION_FLOATS, stochastic_depth_cuda),
};

const pk_module vision_deform_cuda = PK_MODULE("deform", vision_deform_ops, cuda_kernels, NULL);
