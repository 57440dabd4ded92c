/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_kernels.h - the device kernels of the jagged ops, called from C
** (jagged_cuda.c). Implemented in jagged_kernels.cu. Every launcher is
** asynchronous on `stream` and returns the cudaError_t of the launch.
**
** Offsets (`off`, B+1 int64 in device memory) were validated on the host
** (jagged_checks.c); kernels still clamp what they read so that a bad
** value could never leave the buffers. dtype: the loom_dtype value
** (1 f32, 2 f64, 3 f16, 4 bf16); copy kernels take the element size
** instead (2, 4 or 8 bytes) and a padding bit pattern.
*/
#ifndef LOOM_FBGEMM_JAGGED_KERNELS_H
#define LOOM_FBGEMM_JAGGED_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jg_cuda_args {
    int32_t dtype;            /* arithmetic kernels */
    int32_t es;               /* copy kernels: bytes per element */
    int32_t op;               /* element-wise: 0 add, 1 mul */
    int32_t zero_past;        /* jagged output: rows past max_L are +0 */
    int64_t B, max_L, D, total_L, M, K, N;
    uint64_t pad_bits;        /* to_padded: the padding element's bits */
    const int64_t *off;       /* device, B+1 */
    /* jagged_to_padded_dense, its backward, dense_to_jagged: the offsets of
    ** every level (device; offs[0] == off), max length per level, and
    ** outer = product of the max lengths above the last (max_L is the last) */
    int32_t levels;
    const int64_t *offs[3];
    int64_t max_Ls[3];
    int64_t outer;
    const void *x, *x2, *y, *bias, *indices;
    int32_t indices32;
    void *out;
} jg_cuda_args;

int jg_cuda_to_padded(const jg_cuda_args *a, void *stream);     /* values x -> dense out */
int jg_cuda_to_jagged(const jg_cuda_args *a, void *stream);     /* dense x -> values out (zeroed first) */
int jg_cuda_jagged_out(const jg_cuda_args *a, void *stream);    /* out rows = f(x, y or 0) */
int jg_cuda_dense_out(const jg_cuda_args *a, void *stream);     /* out[b,l] = f(x or 0, y), or padded f(x, x2) */
int jg_cuda_dense_bmm(const jg_cuda_args *a, void *stream);
int jg_cuda_jagged_bmm(const jg_cuda_args *a, void *stream);
int jg_cuda_permute102(const jg_cuda_args *a, void *stream);    /* x = A, y = B */
int jg_cuda_index_select(const jg_cuda_args *a, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_FBGEMM_JAGGED_KERNELS_H */
