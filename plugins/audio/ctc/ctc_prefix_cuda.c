/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix_cuda.c - the cuda kernel of audio.cuda_ctc_decoder
** (ctc_prefix.h, ctc_prefix_kernels.cu): lengths are read on the host
** first, to check them as the cpu kernel does; the search writes the
** scores and stages each hypothesis's tokens on the device; their counts
** come to the host (the output's size and the offsets), then the tokens
** are gathered on the device.
*/
#include <cuda_runtime.h>
#include <stdlib.h>

#include "ctc_prefix.h"
#include "ctc_prefix_kernels.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status to_host(void *dst, const void *src, size_t n, cudaStream_t s, const char *what)
{
    cudaError_t ce = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(s);
    return ce == cudaSuccess ? LOOM_OK : cuda_fail(ce, what);
}

static loom_status prefix_run_cuda(loom_call *call)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const int64_t B = e->shape[0], T = e->shape[1], V = e->shape[2];
    cudaStream_t s = (cudaStream_t)call->ctx->stream;
    cudaError_t ce = cudaSetDevice(call->ctx->device.device_id);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "cudaSetDevice");
    int64_t *lengths = NULL;
    loom_status st = LOOM_OK;
    if (len != NULL && B > 0 && len->shape[0] == B) {
        lengths = malloc((size_t)B * sizeof *lengths);
        if (lengths == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        st = to_host(lengths, loom_data(len), (size_t)B * sizeof *lengths, s, "'lengths' to the host");
    }
    ctc_prefix_params prm;
    if (st == LOOM_OK)
        st = ctc_prefix_check(call, len != NULL ? lengths : NULL, &prm);
    free(lengths);
    if (st != LOOM_OK)
        return st;
    const int64_t H = B * prm.nbest, n_off = H + 1, sshape[2] = { B, prm.nbest };
    loom_tensor *tokens, *offsets, *score;
    st = pk_host->alloc_output(call, 2, LOOM_DTYPE_F32, 2, sshape, &score);
    int64_t *off = st == LOOM_OK ? malloc((size_t)n_off * sizeof *off) : NULL;
    int32_t *counts = st == LOOM_OK ? malloc((size_t)(H > 0 ? H : 1) * sizeof *counts) : NULL;
    if (st == LOOM_OK && (off == NULL || counts == NULL))
        st = pk_host->fail(LOOM_ENOMEM, "out of memory");
    char err[160];
    int32_t *staged = NULL, *dcounts = NULL;
    if (st == LOOM_OK && H > 0 && V > 0) {
        void *scratch = pk_host->scratch(call->ctx, ctc_prefix_cu_scratch_bytes(B, T, V, prm.beam));
        staged = pk_host->scratch(call->ctx, (size_t)(H * (T > 0 ? T : 1)) * sizeof *staged);
        dcounts = pk_host->scratch(call->ctx, (size_t)H * sizeof *dcounts);
        if (scratch == NULL || staged == NULL || dcounts == NULL)
            st = LOOM_ENOMEM;
        else if (ctc_prefix_cu_search(loom_data(e), len != NULL ? loom_data(len) : NULL, B, T, V, prm.beam, prm.nbest,
                                      prm.threshold, scratch, staged, dcounts, loom_data(score), s, err,
                                      sizeof err) != 0)
            st = pk_host->fail(LOOM_EDEVICE, "%s", err);
        if (st == LOOM_OK)
            st = to_host(counts, dcounts, (size_t)H * sizeof *counts, s, "the token counts to the host");
    } else if (st == LOOM_OK) {
        for (int64_t h = 0; h < H; h++)
            counts[h] = 0;
        if (H > 0 && (ce = cudaMemsetAsync(loom_data(score), 0, (size_t)H * sizeof(float), s)) != cudaSuccess)
            st = cuda_fail(ce, "the scores");
    }
    if (st == LOOM_OK) {
        int64_t total = 0;
        for (int64_t h = 0; h < H; h++) {
            off[h] = total;
            total += counts[h];
        }
        off[H] = total;
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &tokens);
        if (st == LOOM_OK)
            st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &n_off, &offsets);
        if (st == LOOM_OK) {
            ce = cudaMemcpyAsync(loom_data(offsets), off, (size_t)n_off * sizeof *off, cudaMemcpyHostToDevice, s);
            if (ce == cudaSuccess)
                ce = cudaStreamSynchronize(s);
            if (ce != cudaSuccess)
                st = cuda_fail(ce, "the offsets to the device");
        }
        if (st == LOOM_OK && total > 0
            && ctc_prefix_cu_gather(staged, dcounts, loom_data(offsets), H, T, loom_data(tokens), s, err, sizeof err)
                   != 0)
            st = pk_host->fail(LOOM_EDEVICE, "%s", err);
    }
    free(off);
    free(counts);
    return st;
}

static const loom_kernel_desc prefix_cuda_kernels[] = {
    PK_KERNEL_CUDA(ctc_prefix_schema, "cuda:prefix-beam", 0, prefix_run_cuda),
};

const pk_module audio_ctc_prefix_cuda = PK_MODULE("ctc_prefix", audio_ctc_prefix_ops, prefix_cuda_kernels, NULL);
