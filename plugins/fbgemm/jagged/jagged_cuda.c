/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_cuda.c - the cuda kernels of the jagged ops: checks (shared with
** the cpu path, jagged_checks.c), then a launch of jagged_kernels.cu on
** the call's stream.
**
** Offsets and indices are untrusted and live on the device: they are
** copied to the host and validated there in O(B) before any kernel runs
** (one synchronisation per call; the output shape of dense_to_jagged
** depends on them anyway). The validated int64 offsets go back to the
** device in the call's scratch memory. The file ends with the jagged
** module of fbgemm-cuda.so: the ops (JG_OPS) and these kernels.
*/
#include <cuda_runtime.h>

#include "jagged.h"
#include "jagged_kernels.h"
#include "pack.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static const loom_dl_device host_device = { LOOM_DEVICE_CPU, 0 };

/* A host copy of a small device tensor; host->free it. */
static loom_status copy_to_host(loom_call *call, const loom_tensor *t, void **out)
{
    size_t bytes = (size_t)loom_numel(t) * pk_host->dtype_size(loom_tensor_dtype_of(t));
    *out = pk_host->alloc(host_device, bytes > 0 ? bytes : 1, 64);
    if (*out == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory (%zu bytes)", bytes);
    cudaStream_t s = (cudaStream_t)call->ctx->stream;
    cudaError_t e = cudaMemcpyAsync(*out, loom_data(t), bytes, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        pk_host->free(host_device, *out);
        *out = NULL;
        return cuda_fail(e, "copying offsets to the host");
    }
    return LOOM_OK;
}

static loom_status read_device_offsets(loom_call *call, const char *arg, const loom_tensor *t, int64_t rows,
                                       int64_t *dst)
{
    void *host;
    loom_status st = copy_to_host(call, t, &host);
    if (st != LOOM_OK)
        return st;
    st = jg_read_offsets(arg, t, host, rows, dst);
    pk_host->free(host_device, host);
    return st;
}

/* Device copy of the validated offsets of every level. */
static loom_status upload_offsets(loom_call *call, const jg_plan *p, jg_cuda_args *a)
{
    for (int32_t k = 0; k < p->levels; k++) {
        size_t bytes = (size_t)p->offs_count[k] * sizeof(int64_t);
        int64_t *d = pk_host->scratch(call->ctx, bytes);
        if (d == NULL)
            return LOOM_ENOMEM;
        /* from pageable memory: returns once the source has been staged */
        cudaError_t e = cudaMemcpyAsync(d, p->offs[k], bytes, cudaMemcpyHostToDevice, (cudaStream_t)call->ctx->stream);
        if (e != cudaSuccess)
            return cuda_fail(e, "copying offsets to the device");
        a->offs[k] = d;
    }
    a->off = a->offs[0];
    return LOOM_OK;
}

typedef int (*launcher)(const jg_cuda_args *a, void *stream);

static loom_status launch(loom_call *call, launcher fn, const jg_cuda_args *a, const char *what)
{
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e == cudaSuccess)
        e = (cudaError_t)fn(a, call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, what);
}

static jg_cuda_args args_of(const jg_plan *p)
{
    jg_cuda_args a = { .dtype = (int32_t)p->dtype, .es = (int32_t)p->es, .B = p->B, .max_L = p->max_L, .D = p->D,
                       .total_L = p->total_L, .M = p->M, .K = p->K, .N = p->N, .levels = p->levels,
                       .outer = p->outer };
    for (int32_t k = 0; k < p->levels && k < JG_MAX_LEVELS; k++)
        a.max_Ls[k] = p->max_Ls[k];
    return a;
}

/* Prepare with device offsets, upload them, fill the common args. */
#define PREPARE_JAGGED(prepare_call)                                  \
    jg_plan p = { 0 };                                                \
    loom_status st = cudaSetDevice(call->ctx->device.device_id) == cudaSuccess ? LOOM_OK \
                     : pk_host->fail(LOOM_EDEVICE, "cudaSetDevice failed");          \
    if (st == LOOM_OK)                                                \
        st = prepare_call;                                            \
    jg_cuda_args a = args_of(&p);                                     \
    if (st == LOOM_OK)                                                \
        st = upload_offsets(call, &p, &a);

static loom_status to_padded_cuda(loom_call *call)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_to_padded(call, read_device_offsets, &p, &out))
    if (st == LOOM_OK && loom_numel(out) > 0) {
        uint64_t bits = 0;
        for (size_t i = 0; i < p.es; i++)
            bits |= (uint64_t)p.pad[i] << (8 * i);
        a.pad_bits = bits;
        a.x = loom_data(call->inputs[0]);
        a.out = loom_data(out);
        st = launch(call, jg_cuda_to_padded, &a, "jagged_to_padded_dense kernel");
    }
    jg_plan_release(&p);
    return st;
}

static loom_status to_jagged_common(loom_call *call, loom_status st, jg_plan *p, jg_cuda_args *a, loom_tensor *out)
{
    if (st == LOOM_OK && loom_numel(out) > 0) {
        a->x = loom_data(call->inputs[0]);
        a->out = loom_data(out);
        st = launch(call, jg_cuda_to_jagged, a, "dense_to_jagged kernel");
    }
    jg_plan_release(p);
    return st;
}

static loom_status to_padded_backward_cuda(loom_call *call)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_to_padded_backward(call, read_device_offsets, &p, &out))
    return to_jagged_common(call, st, &p, &a, out);
}

static loom_status to_jagged_cuda(loom_call *call)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_to_jagged(call, read_device_offsets, &p, &out))
    return to_jagged_common(call, st, &p, &a, out);
}

static loom_status elementwise_cuda(loom_call *call, int op, int dense_out)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_elementwise(call, read_device_offsets, dense_out, &p, &out))
    if (st == LOOM_OK && loom_numel(out) > 0) {
        a.op = op;
        a.x = loom_data(call->inputs[0]);
        a.y = loom_data(call->inputs[2]);
        a.out = loom_data(out);
        st = launch(call, dense_out ? jg_cuda_dense_out : jg_cuda_jagged_out, &a, "jagged element-wise kernel");
    }
    jg_plan_release(&p);
    return st;
}

static loom_status add_cuda(loom_call *call) { return elementwise_cuda(call, 0, 1); }
static loom_status add_jagged_output_cuda(loom_call *call) { return elementwise_cuda(call, 0, 0); }
static loom_status mul_cuda(loom_call *call) { return elementwise_cuda(call, 1, 0); }

static loom_status mul_backward_cuda(loom_call *call)
{
    loom_tensor *outs[2] = { NULL, NULL };
    PREPARE_JAGGED(jg_prepare_mul_backward(call, read_device_offsets, &p, outs))
    a.op = 1;
    if (st == LOOM_OK && loom_numel(outs[0]) > 0) {
        jg_cuda_args g = a;
        g.x = loom_data(call->inputs[0]);
        g.y = loom_data(call->inputs[2]);
        g.out = loom_data(outs[0]);
        g.zero_past = 1;
        st = launch(call, jg_cuda_jagged_out, &g, "jagged_dense_elementwise_mul_backward kernel");
    }
    if (st == LOOM_OK && loom_numel(outs[1]) > 0) {
        jg_cuda_args g = a;
        g.x = loom_data(call->inputs[0]);
        g.x2 = loom_data(call->inputs[3]);
        g.out = loom_data(outs[1]);
        st = launch(call, jg_cuda_dense_out, &g, "jagged_dense_elementwise_mul_backward kernel");
    }
    jg_plan_release(&p);
    return st;
}

static loom_status dense_bmm_cuda(loom_call *call)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_dense_bmm(call, read_device_offsets, &p, &out))
    if (st == LOOM_OK && loom_numel(out) > 0) {
        a.x = loom_data(call->inputs[0]);
        a.y = loom_data(call->inputs[2]);
        a.out = loom_data(out);
        st = launch(call, jg_cuda_dense_bmm, &a, "jagged_dense_bmm kernel");
    }
    jg_plan_release(&p);
    return st;
}

static loom_status jagged_bmm_cuda(loom_call *call)
{
    loom_tensor *out = NULL;
    PREPARE_JAGGED(jg_prepare_jagged_bmm(call, read_device_offsets, &p, &out))
    if (st == LOOM_OK && loom_numel(out) > 0) {
        a.x = loom_data(call->inputs[0]);
        a.y = loom_data(call->inputs[1]);
        a.out = loom_data(out);
        st = launch(call, jg_cuda_jagged_bmm, &a, "jagged_jagged_bmm kernel");
    }
    jg_plan_release(&p);
    return st;
}

static loom_status permute102_cuda(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out = NULL;
    loom_status st = jg_prepare_permute102(call, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    jg_cuda_args a = args_of(&p);
    a.bias = loom_data(call->inputs[0]);
    a.x = loom_data(call->inputs[1]);
    a.y = loom_data(call->inputs[2]);
    a.out = loom_data(out);
    return launch(call, jg_cuda_permute102, &a, "permute102_baddbmm_permute102 kernel");
}

static loom_status index_select_cuda(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out = NULL;
    void *host = NULL;
    const loom_tensor *idx = call->inputs[1];
    loom_status st = jg_prepare_index_select(call, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (p.es != 2 && p.es != 4 && p.es != 8)
        return pk_host->fail(LOOM_ENOTSUP, "'input' of %zu-byte elements: the cuda kernel copies 2, 4 or 8",
                             p.es);
    st = copy_to_host(call, idx, &host);
    if (st == LOOM_OK)
        st = jg_check_indices(idx, host, p.B, p.total_L);
    pk_host->free(host_device, host);
    if (st != LOOM_OK)
        return st;
    jg_cuda_args a = args_of(&p);
    a.x = loom_data(call->inputs[0]);
    a.indices = loom_data(idx);
    a.indices32 = loom_tensor_dtype_of(idx) == LOOM_DTYPE_I32;
    a.out = loom_data(out);
    return launch(call, jg_cuda_index_select, &a, "index_select_dim0 kernel");
}


static const loom_kernel_desc jagged_cuda_kernels[] = {
    PK_KERNEL_CUDA(jg_jagged_to_padded_dense_schema, "cuda:row-blocks", JG_COPYABLE, to_padded_cuda),
    PK_KERNEL_CUDA(jg_jagged_to_padded_dense_backward_schema, "cuda:row-blocks", JG_COPYABLE,
                   to_padded_backward_cuda),
    PK_KERNEL_CUDA(jg_dense_to_jagged_schema, "cuda:row-blocks", JG_COPYABLE, to_jagged_cuda),
    PK_KERNEL_CUDA(jg_elementwise_add_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX, add_cuda),
    PK_KERNEL_CUDA(jg_elementwise_add_jagged_output_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX,
                   add_jagged_output_cuda),
    PK_KERNEL_CUDA(jg_elementwise_mul_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX, mul_cuda),
    PK_KERNEL_CUDA(jg_elementwise_mul_backward_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX, mul_backward_cuda),
    PK_KERNEL_CUDA(jg_dense_bmm_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX, dense_bmm_cuda),
    PK_KERNEL_CUDA(jg_jagged_bmm_schema, "cuda:row-blocks", PK_FLOAT_MASK | JG_INDEX, jagged_bmm_cuda),
    PK_KERNEL_CUDA(jg_permute102_baddbmm_schema, "cuda:row-blocks", PK_FLOAT_MASK, permute102_cuda),
    PK_KERNEL_CUDA(jg_index_select_dim0_schema, "cuda:row-blocks", 0, index_select_cuda),
};

const pk_module fbgemm_jagged_cuda = PK_MODULE("jagged", fbgemm_jagged_ops, jagged_cuda_kernels, NULL);
