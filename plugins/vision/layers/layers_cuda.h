/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cuda.h - what the host files of the layers module in
** vision-cuda.so share: the per-device cuBLAS (and, when the build found
** it, cuDNN) handles, the device errors as loom errors and the kernel
** tables of each file, registered together by layers_cuda.c. (The argument
** checks are the cpu kernels': layers_op_checks.c, layers_checks.c.)
**
** Handles: created lazily, one per device, for the pack's lifetime
** (layers_cuda_fini destroys them). A handle's stream is per-handle state,
** so a handle is bound to the call's ctx->stream and held under the
** module's lock from acquire to release. Math: cuBLAS in
** CUBLAS_DEFAULT_MATH, cuDNN convolutions in CUDNN_FMA_MATH (conv2d_cuda.c):
** no TF32, f32 products stay f32.
*/
#ifndef LOOM_VISION_LAYERS_CUDA_H
#define LOOM_VISION_LAYERS_CUDA_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#ifdef LOOM_VISION_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "layers.h"
#include "layers_cuda_kernels.h"

/* LOOM_EDEVICE with what failed and the runtime's words. */
loom_status layers_cuda_fail(cudaError_t e, const char *what);
loom_status layers_cublas_fail(cublasStatus_t s, const char *what);

/* The call's stream after cudaSetDevice(the call's device). */
loom_status layers_cuda_stream(const loom_call *call, cudaStream_t *stream);

/* The device's cuBLAS handle on the call's stream; on LOOM_OK the module's
** lock is held until layers_cuda_release. */
loom_status layers_cublas_acquire(const loom_call *call, cublasHandle_t *handle);
#ifdef LOOM_VISION_HAVE_CUDNN
loom_status layers_cudnn_fail(cudnnStatus_t s, const char *what);
/* The device's cuDNN handle on the call's stream; the lock as above. */
loom_status layers_cudnn_acquire(const loom_call *call, cudnnHandle_t *handle);
#endif
void layers_cuda_release(void);

/* out[m, n] = in[m, k] @ w[n, k]^T + bias[n] (bias NULL: 0), row-major, on
** the call's stream: the bias rows first, then one SGEMM with beta = 1. */
loom_status layers_cuda_fc(const loom_call *call, const float *in, int64_t m, int64_t k, const float *w,
                           const float *bias, int64_t n, float *out);

/* The kernel tables (each file's), and conv2d's cache teardown. */
extern const loom_kernel_desc layers_activation_cuda_kernels[7];
extern const loom_kernel_desc layers_pool_cuda_kernels[3];
extern const loom_kernel_desc layers_rowwise_cuda_kernels[3];
extern const loom_kernel_desc layers_blocks_cuda_kernels[2];
extern const loom_kernel_desc layers_group_norm_cuda_kernel;
extern const loom_kernel_desc layers_conv_transpose2d_cuda_kernel;
#ifdef LOOM_VISION_HAVE_CUDNN
extern const loom_kernel_desc layers_conv2d_cuda_kernel;
void layers_conv2d_cuda_fini(void);
#endif

/* Destroys the handles and conv2d's cached descriptors (the pack's fini). */
void layers_cuda_fini(void);

#endif /* LOOM_VISION_LAYERS_CUDA_H */
