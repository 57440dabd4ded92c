/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_pack.c - the entry of core-cuda.so: the CUDA device provider and the
** cuda kernels of core.matmul (cuBLAS) and core.add (cuda_kernels.cu).
**
** On a machine without a GPU or driver every CUDA query fails softly:
** count() answers 0 and the core reports the pack as having no device.
** cuBLAS handles are created lazily, one per device, and used under a
** mutex because a handle's stream is per-handle state (set from the call's
** ctx->stream before each GEMM). Every launch is asynchronous on that
** stream; the core synchronises when the host reads a result.
*/
#include <pthread.h>
#include <stdio.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cuda_kernels.h"
#include "kernels.h"
#include "register.h"


#define MAX_DEVICES 64

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t handles[MAX_DEVICES];

/* ---------------------------------------------------------------- device */

static int32_t cuda_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();       /* clear the sticky "no driver" error */
        return 0;
    }
    return n;
}

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status cuda_describe(int32_t id, char *buf, size_t size)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, id);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaGetDeviceProperties");
    snprintf(buf, size, "%s, %.1f GiB, sm_%d%d, %d SMs", p.name,
             (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), p.major, p.minor, p.multiProcessorCount);
    return LOOM_OK;
}

static void *cuda_alloc(int32_t id, size_t nbytes)
{
    void *p = NULL;
    cudaError_t e = cudaSetDevice(id);
    if (e == cudaSuccess)
        e = cudaMalloc(&p, nbytes > 0 ? nbytes : 1);
    if (e != cudaSuccess) {
        cuda_fail(e, "cudaMalloc");
        return NULL;
    }
    return p;
}

static void cuda_free(int32_t id, void *ptr)
{
    if (ptr != NULL && cudaSetDevice(id) == cudaSuccess)
        cudaFree(ptr);
}

static loom_status cuda_copy(void *dst, loom_dl_device dst_dev, const void *src, loom_dl_device src_dev,
                           size_t nbytes)
{
    /* unified addressing: the runtime knows where each pointer lives */
    (void)dst_dev;
    (void)src_dev;
    cudaError_t e = cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaMemcpy");
}

static loom_status cuda_synchronize(int32_t id, void *stream)
{
    cudaError_t e = cudaSetDevice(id);
    if (e == cudaSuccess)
        e = stream != NULL ? cudaStreamSynchronize((cudaStream_t)stream) : cudaDeviceSynchronize();
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "synchronize");
}

static const loom_device_provider provider = {
    .struct_size = sizeof(loom_device_provider),
    .device_type = LOOM_DEVICE_CUDA,
    .name = "cuda",
    .count = cuda_count,
    .describe = cuda_describe,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .synchronize = cuda_synchronize,
};

/* ---------------------------------------------------------------- matmul */

static int64_t batch_count(const loom_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim - 2; d++)
        n *= t->shape[d];
    return n;
}

static loom_status matmul_supports(const loom_call *call, char *why, size_t why_size)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (a->ndim < 2 || b->ndim < 2)
        return LOOM_OK;                 /* run() reports the rank error */
    if (!loom_is_contiguous(a) || !loom_is_contiguous(b)) {
        snprintf(why, why_size, "cuBLAS path needs contiguous inputs");
        return LOOM_ENOTSUP;
    }
    int64_t ba = batch_count(a), bb = batch_count(b), big = ba > bb ? ba : bb;
    if ((ba != 1 && ba != big) || (bb != 1 && bb != big)) {
        snprintf(why, why_size, "batch broadcast other than equal batches or a batch of 1");
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

static loom_status get_handle(int32_t id, cublasHandle_t *out)
{
    if (id < 0 || id >= MAX_DEVICES)
        return pk_host->fail(LOOM_EINVAL, "CUDA device %d out of range", (int)id);
    if (handles[id] == NULL) {
        cublasStatus_t s = cublasCreate(&handles[id]);
        if (s != CUBLAS_STATUS_SUCCESS) {
            handles[id] = NULL;
            return pk_host->fail(LOOM_EDEVICE, "cublasCreate failed with status %d", (int)s);
        }
    }
    *out = handles[id];
    return LOOM_OK;
}

static loom_status matmul_cuda(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    core_mm_geom g;
    loom_tensor *out;
    loom_status st = core_matmul_prepare(call, LOOM_DTYPE_F32, &g, &out);
    if (st != LOOM_OK || out == NULL)
        return st;
    int32_t dev = call->ctx->device.device_id;
    cudaStream_t stream = (cudaStream_t)call->ctx->stream;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (g.k == 0) {
        e = cudaMemsetAsync(loom_data(out), 0, (size_t)loom_numel(out) * sizeof(float), stream);
        return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaMemsetAsync");
    }
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
    const float one = 1.0f, zero = 0.0f;
    long long sa = batch_count(a) == 1 ? 0 : g.m * g.k, sb = batch_count(b) == 1 ? 0 : g.k * g.n;
    cublasHandle_t h = NULL;
    pthread_mutex_lock(&blas_lock);
    st = get_handle(dev, &h);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (st == LOOM_OK) {
        s = cublasSetStream(h, stream);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g.n, (int)g.m, (int)g.k, &one,
                                          loom_data(b), (int)g.n, sb, loom_data(a), (int)g.k, sa,
                                          &zero, loom_data(out), (int)g.n, g.m * g.n, (int)g.batch);
    }
    pthread_mutex_unlock(&blas_lock);
    if (st == LOOM_OK && s != CUBLAS_STATUS_SUCCESS)
        st = pk_host->fail(LOOM_EDEVICE, "cublasSgemmStridedBatched failed with status %d", (int)s);
    return st;
}

/* ------------------------------------------------------------------- add */

static loom_status add_cuda(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    core_cuda_add_args args = { .dtype = (int32_t)loom_tensor_dtype_of(a) };
    int64_t alpha_i, shape[LOOM_MAX_NDIM];
    int32_t ndim;
    loom_tensor *out;
    core_nd_iter it;
    loom_status st = core_add_check(call, &args.alpha, &alpha_i);
    if (st == LOOM_OK)
        st = core_broadcast_shape(a, b, &ndim, shape);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(a), ndim, shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    st = core_iter_setup(&it, ndim, shape, (const loom_tensor *[]){ a, b, out },
                         (const char *[]){ "input", "other", "output" }, 3);
    if (st != LOOM_OK)
        return st;
    args.ndim = it.ndim;
    args.n = loom_numel(out);
    for (int32_t d = 0; d < it.ndim; d++) {
        args.shape[d] = it.shape[d];
        args.sa[d] = it.strides[0][d];
        args.sb[d] = it.strides[1][d];
        args.sc[d] = it.strides[2][d];
    }
    args.a = loom_data(a);
    args.b = loom_data(b);
    args.c = loom_data(out);
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e == cudaSuccess)
        e = (cudaError_t)core_cuda_add_launch(&args, call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "core.add kernel launch");
}

/* ------------------------------------------------------------------ pack */

static const loom_op_schema *const cuda_ops[] = { &core_matmul_schema, &core_add_schema };

static const loom_kernel_desc cuda_kernels[] = {
    PK_KERNEL_CUDA(core_matmul_schema, "cuda:cublas-sgemm", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), matmul_cuda,
                   .supports = matmul_supports),
    PK_KERNEL_CUDA(core_add_schema, "cuda:strided", LOOM_DTYPES_FLOAT, add_cuda, .flags = LOOM_KERNEL_STRIDED),
};

static const pk_module core_cuda_module = PK_MODULE("core", cuda_ops, cuda_kernels, NULL);

static loom_status cuda_setup(const loom_host_api *host, loom_registrar *reg)
{
    core_dtypes_init();
    return host->register_device(reg, &provider);
}

static void cuda_fini(void)
{
    pthread_mutex_lock(&blas_lock);
    for (int i = 0; i < MAX_DEVICES; i++)
        if (handles[i] != NULL) {
            cublasDestroy(handles[i]);
            handles[i] = NULL;
        }
    pthread_mutex_unlock(&blas_lock);
}

PK_PACK_DEFINE("core-cuda", "0.1.0", "core ops on CUDA: matmul (cuBLAS), add", cuda_setup, cuda_fini,
               &core_cuda_module)
