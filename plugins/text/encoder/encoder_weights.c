/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_weights.c - the W^T layout of a layer's dense weights, for the
** products through core.matmul (dense=matmul on the cpu, and the cuda
** kernels, which upload it): built from the file's [out, in] matrices the
** layer borrows. In both packs, so that dense=linear objects keep no W^T
** copy on the host and cuda makes its own only while uploading.
*/
#include "encoder.h"

/* dst[i * ld + col0 + j] = src[j * in + i]: W [out, in] into columns
** col0 .. col0+out of W^T [in, ld]. Blocked so both sides stay in cache. */
static void transpose_into(float *dst, int64_t ld, int64_t col0, const float *src, int64_t out, int64_t in)
{
    enum { TB = 32 };
    for (int64_t j0 = 0; j0 < out; j0 += TB)
        for (int64_t i0 = 0; i0 < in; i0 += TB)
            for (int64_t j = j0; j < j0 + TB && j < out; j++)
                for (int64_t i = i0; i < i0 + TB && i < in; i++)
                    dst[i * ld + col0 + j] = src[j * in + i];
}

void enc_layer_transposed(const enc_layer *L, int64_t H, int64_t I, float *wqkv, float *wo, float *wi, float *wout)
{
    transpose_into(wqkv, 3 * H, 0, L->w_q, H, H);
    transpose_into(wqkv, 3 * H, H, L->w_k, H, H);
    transpose_into(wqkv, 3 * H, 2 * H, L->w_v, H, H);
    transpose_into(wo, H, 0, L->w_o, H, H);
    transpose_into(wi, I, 0, L->w_i, I, H);
    transpose_into(wout, H, 0, L->w_out, H, I);
}
