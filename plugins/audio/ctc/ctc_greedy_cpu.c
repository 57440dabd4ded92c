/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_cpu.c - the cpu kernel of audio.ctc_greedy_decoder
** (ctc_greedy.h): argmax of every frame over the core's pool, then each
** utterance collapsed in order.
*/
#include <string.h>

#include "cpu.h"
#include "ctc_greedy.h"

typedef struct argmax_job {
    const float *x;
    int64_t n;
    int32_t *out;
    int avx2;
} argmax_job;

static void argmax_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const argmax_job *j = user;
    if (j->avx2)
        ctc_argmax_rows_avx2(j->x, j->n, begin, end, j->out);
    else
        ctc_argmax_rows_scalar(j->x, j->n, begin, end, j->out);
}

static loom_status greedy_run_cpu(loom_call *call)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const int64_t *lengths = len != NULL ? loom_data(len) : NULL;
    loom_status st = ctc_greedy_check(call, lengths);
    if (st != LOOM_OK)
        return st;
    const int64_t B = e->shape[0], T = e->shape[1], N = e->shape[2], blank = call->attrs[PK_ATTR(ctc_greedy, blank)].u.i;
    int32_t *best = NULL;
    if (B * T > 0) {
        best = pk_host->scratch(call->ctx, (size_t)(B * T) * sizeof *best);
        if (best == NULL)
            return LOOM_ENOMEM;
        argmax_job job = { loom_data(e), N, best, pk_cpu_avx2(0) };
        st = pk_host->parallel_for(call->ctx, B * T, 256, argmax_range, &job);
        if (st != LOOM_OK)
            return st;
    }
    int64_t total = 0;
    for (int64_t b = 0; b < B; b++) {
        const int64_t n = lengths != NULL ? lengths[b] : T;
        for (int64_t t = 0; t < n; t++) {
            const int32_t k = best[b * T + t];
            total += k != blank && (t == 0 || k != best[b * T + t - 1]);
        }
    }
    loom_tensor *tokens, *offsets;
    const int64_t n_off = B + 1;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &tokens);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &n_off, &offsets);
    if (st != LOOM_OK)
        return st;
    int64_t *tok = loom_data(tokens), *off = loom_data(offsets), k = 0;
    off[0] = 0;
    for (int64_t b = 0; b < B; b++) {
        const int64_t n = lengths != NULL ? lengths[b] : T;
        for (int64_t t = 0; t < n; t++) {
            const int32_t v = best[b * T + t];
            if (v != blank && (t == 0 || v != best[b * T + t - 1]))
                tok[k++] = v;
        }
        off[b + 1] = k;
    }
    return LOOM_OK;
}

/* The implementation name says which argmax runs (LOOM_CPU_MAX_ISA). */
static loom_status greedy_register(const loom_host_api *host, loom_registrar *reg)
{
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(ctc_greedy_schema, pk_cpu_avx2(0) ? "cpu:argmax-avx2" : "cpu:argmax", 0, greedy_run_cpu),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module audio_ctc_greedy_cpu = {
    .name = "ctc_greedy", .ops = audio_ctc_greedy_ops, .n_ops = PK_COUNT(audio_ctc_greedy_ops),
    .register_more = greedy_register,
};
