/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cuda_handles.c - the layers module's cuBLAS and cuDNN handles
** (one of each per device, made on first use, under one lock: a handle's
** stream is per-handle state), its device errors as loom errors, and the
** fully connected product of linear and squeeze_excitation on cuBLAS.
*/
#include <pthread.h>

#include "layers_cuda.h"

#define MAX_DEVICES 64

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t blas[MAX_DEVICES];
#ifdef LOOM_VISION_HAVE_CUDNN
static cudnnHandle_t dnn[MAX_DEVICES];
#endif

loom_status layers_cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

loom_status layers_cublas_fail(cublasStatus_t s, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: cuBLAS %s (%s)", what, cublasGetStatusString(s), cublasGetStatusName(s));
}

loom_status layers_cuda_stream(const loom_call *call, cudaStream_t *stream)
{
    const int32_t id = call->ctx->device.device_id;
    if (id < 0 || id >= MAX_DEVICES)
        return pk_host->fail(LOOM_EINVAL, "CUDA device %d out of range", (int)id);
    cudaError_t e = cudaSetDevice(id);
    if (e != cudaSuccess)
        return layers_cuda_fail(e, "cudaSetDevice");
    *stream = (cudaStream_t)call->ctx->stream;
    return LOOM_OK;
}

/* The call's device made current and its stream; the lock taken on LOOM_OK. */
static loom_status lock_device(const loom_call *call, cudaStream_t *stream, int32_t *id)
{
    loom_status st = layers_cuda_stream(call, stream);
    if (st == LOOM_OK) {
        *id = call->ctx->device.device_id;
        pthread_mutex_lock(&handle_lock);
    }
    return st;
}

loom_status layers_cublas_acquire(const loom_call *call, cublasHandle_t *handle)
{
    cudaStream_t stream;
    int32_t id;
    loom_status st = lock_device(call, &stream, &id);
    if (st != LOOM_OK)
        return st;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (blas[id] == NULL) {
        s = cublasCreate(&blas[id]);
        /* f32 stays f32: no TF32 tensor-core products */
        if (s == CUBLAS_STATUS_SUCCESS && (s = cublasSetMathMode(blas[id], CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
            cublasDestroy(blas[id]);
        if (s != CUBLAS_STATUS_SUCCESS)
            blas[id] = NULL;
    }
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetStream(blas[id], stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        pthread_mutex_unlock(&handle_lock);
        return layers_cublas_fail(s, "the layers' cuBLAS handle (create, math mode, stream)");
    }
    *handle = blas[id];
    return LOOM_OK;
}

#ifdef LOOM_VISION_HAVE_CUDNN
loom_status layers_cudnn_fail(cudnnStatus_t s, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: cuDNN %s", what, cudnnGetErrorString(s));
}

loom_status layers_cudnn_acquire(const loom_call *call, cudnnHandle_t *handle)
{
    cudaStream_t stream;
    int32_t id;
    loom_status st = lock_device(call, &stream, &id);
    if (st != LOOM_OK)
        return st;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    if (dnn[id] == NULL && (s = cudnnCreate(&dnn[id])) != CUDNN_STATUS_SUCCESS)
        dnn[id] = NULL;
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetStream(dnn[id], stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        pthread_mutex_unlock(&handle_lock);
        return layers_cudnn_fail(s, "the layers' cuDNN handle (create, stream)");
    }
    *handle = dnn[id];
    return LOOM_OK;
}
#endif

void layers_cuda_release(void) { pthread_mutex_unlock(&handle_lock); }

loom_status layers_cuda_fc(const loom_call *call, const float *in, int64_t m, int64_t k, const float *w,
                           const float *bias, int64_t n, float *out)
{
    cudaStream_t stream;
    loom_status st = layers_cuda_stream(call, &stream);
    if (st != LOOM_OK)
        return st;
    cudaError_t e = (cudaError_t)lcu_fill_rows(out, bias, m, n, stream);
    if (e != cudaSuccess)
        return layers_cuda_fail(e, "the bias rows' launch");
    if (m == 0 || n == 0 || k == 0)
        return LOOM_OK;     /* out is the bias alone */
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
        return pk_host->fail(LOOM_EINVAL, "a %lld x %lld x %lld product is beyond cuBLAS's int sizes",
                             (long long)m, (long long)n, (long long)k);
    /* Row-major out = in w^T is column-major out^T = w in^T: w is [n, k]
    ** row-major = k x n column-major, transposed; in likewise, untransposed. */
    cublasHandle_t h;
    if ((st = layers_cublas_acquire(call, &h)) != LOOM_OK)
        return st;
    const float one = 1.0f;
    cublasStatus_t s = cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, w, (int)k, in, (int)k,
                                   &one, out, (int)n);
    layers_cuda_release();
    return s == CUBLAS_STATUS_SUCCESS ? LOOM_OK : layers_cublas_fail(s, "cublasSgemm");
}

void layers_cuda_fini(void)
{
#ifdef LOOM_VISION_HAVE_CUDNN
    layers_conv2d_cuda_fini();
#endif
    pthread_mutex_lock(&handle_lock);
    for (int i = 0; i < MAX_DEVICES; i++) {
        if (blas[i] != NULL)
            cublasDestroy(blas[i]);
        blas[i] = NULL;
#ifdef LOOM_VISION_HAVE_CUDNN
        if (dnn[i] != NULL)
            cudnnDestroy(dnn[i]);
        dnn[i] = NULL;
#endif
    }
    pthread_mutex_unlock(&handle_lock);
}
