/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_cuda.c - the cuda kernel of audio.ctc_greedy_decoder
** (ctc_greedy.h, ctc_greedy_kernels.cu): argmax of every frame and the
** per-utterance counts on the device; the counts come to the host (the
** output's size), then the tokens are written on the device. lengths are
** read on the host first, to check them as the cpu kernel does.
*/
#include <cuda_runtime.h>
#include <stdlib.h>

#include "ctc_greedy.h"
#include "ctc_greedy_kernels.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status greedy_run_cuda(loom_call *call)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const int64_t B = e->shape[0], T = e->shape[1], N = e->shape[2], blank = call->attrs[PK_ATTR(ctc_greedy, blank)].u.i;
    cudaStream_t s = (cudaStream_t)call->ctx->stream;
    cudaError_t ce = cudaSetDevice(call->ctx->device.device_id);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "cudaSetDevice");
    int64_t *host = malloc(((size_t)B + 1) * 2 * sizeof(int64_t));
    if (host == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    int64_t *lengths = host, *counts = host + B + 1;
    loom_status st = LOOM_OK;
    if (len != NULL && B > 0 && len->shape[0] == B) {
        ce = cudaMemcpyAsync(lengths, loom_data(len), (size_t)B * sizeof(int64_t), cudaMemcpyDeviceToHost, s);
        if (ce == cudaSuccess)
            ce = cudaStreamSynchronize(s);
        if (ce != cudaSuccess)
            st = cuda_fail(ce, "'lengths' to the host");
    }
    if (st == LOOM_OK)
        st = ctc_greedy_check(call, len != NULL ? lengths : NULL);
    char err[160];
    int32_t *best = NULL;
    int64_t *dcounts = NULL;
    if (st == LOOM_OK && B * T > 0) {
        best = pk_host->scratch(call->ctx, (size_t)(B * T) * sizeof *best);
        dcounts = pk_host->scratch(call->ctx, (size_t)B * sizeof *dcounts);
        if (best == NULL || dcounts == NULL)
            st = LOOM_ENOMEM;
        else if (ctc_greedy_cu_argmax(loom_data(e), B * T, N, best, s, err, sizeof err) != 0
                 || ctc_greedy_cu_count(best, len != NULL ? loom_data(len) : NULL, B, T, blank, dcounts, s, err,
                                        sizeof err) != 0)
            st = pk_host->fail(LOOM_EDEVICE, "%s", err);
        if (st == LOOM_OK) {
            ce = cudaMemcpyAsync(counts, dcounts, (size_t)B * sizeof(int64_t), cudaMemcpyDeviceToHost, s);
            if (ce == cudaSuccess)
                ce = cudaStreamSynchronize(s);
            if (ce != cudaSuccess)
                st = cuda_fail(ce, "the counts to the host");
        }
    } else {
        for (int64_t b = 0; b < B; b++)
            counts[b] = 0;
    }
    /* offsets, on the host in place of the lengths */
    int64_t *off = lengths;
    if (st == LOOM_OK) {
        int64_t total = 0;
        for (int64_t b = 0; b < B; b++) {
            const int64_t c = counts[b];
            off[b] = total;
            total += c;
        }
        off[B] = total;
        loom_tensor *tokens, *offsets;
        const int64_t n_off = B + 1;
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &tokens);
        if (st == LOOM_OK)
            st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &n_off, &offsets);
        if (st == LOOM_OK) {
            ce = cudaMemcpyAsync(loom_data(offsets), off, (size_t)n_off * sizeof(int64_t), cudaMemcpyHostToDevice, s);
            if (ce == cudaSuccess)
                ce = cudaStreamSynchronize(s);
            if (ce != cudaSuccess)
                st = cuda_fail(ce, "the offsets to the device");
        }
        if (st == LOOM_OK && total > 0
            && ctc_greedy_cu_write(best, len != NULL ? loom_data(len) : NULL, B, T, blank, loom_data(offsets),
                                   loom_data(tokens), s, err, sizeof err) != 0)
            st = pk_host->fail(LOOM_EDEVICE, "%s", err);
    }
    free(host);
    return st;
}

static const loom_kernel_desc greedy_cuda_kernels[] = {
    PK_KERNEL_CUDA(ctc_greedy_schema, "cuda:argmax", 0, greedy_run_cuda),
};

const pk_module audio_ctc_greedy_cuda = PK_MODULE("ctc_greedy", audio_ctc_greedy_ops, greedy_cuda_kernels, NULL);
