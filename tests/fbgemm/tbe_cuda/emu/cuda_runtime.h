/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_runtime.h (host emulation) - the CUDA runtime calls that
** test_tbe_cuda.c and tbe_cuda_device.cuh use, on host memory, so the
** cuda TBE kernels can be checked on a machine without a GPU: "device"
** memory is malloc'ed, copies are memcpy, the one "device" always exists.
** Only for tests/fbgemm/tbe_cuda (the emulated build of the test).
*/
#ifndef LOOM_TEST_EMU_CUDA_RUNTIME_H
#define LOOM_TEST_EMU_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t;
enum { cudaSuccess = 0 };
typedef void *cudaStream_t;
enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n > 0 ? n : 1);
    return *p != NULL ? cudaSuccess : 2;
}

static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

static inline cudaError_t cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int kind)
{
    (void)kind;
    memcpy(d, s, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemcpy2D(void *d, size_t dpitch, const void *s, size_t spitch, size_t width,
                                       size_t height, int kind)
{
    (void)kind;
    for (size_t r = 0; r < height; r++)
        memcpy((char *)d + r * dpitch, (const char *)s + r * spitch, width);
    return cudaSuccess;
}

static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

static inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }

static inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "out of memory";
}

#endif
