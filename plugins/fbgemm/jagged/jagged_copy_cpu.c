/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_copy_cpu.c - the jagged ops that only move rows, on the CPU:
** jagged_to_padded_dense, its backward, dense_to_jagged and
** index_select_dim0. They are dtype-agnostic: a batch row's valid rows are
** contiguous in both the jagged and the dense layout, so each batch row is
** one copy of min(L_b, max_L) * D elements plus a fill of the rest (with
** several jagged dims, one such copy per position of the outer dims)
** (padding, or zeros for rows that have no source). Threaded over batch
** rows (or indices) through host->parallel_for. (Streaming stores were
** measured slower here: a fresh output's pages are already in cache after
** the kernel zeroes them on first touch.)
*/
#include <string.h>

#include "jagged.h"
#include "jagged_cpu.h"

typedef struct copy_job {
    const jg_plan *p;
    const char *src;
    char *dst;
    const void *indices;        /* index_select */
    int indices32;
} copy_job;

/* n elements of es bytes at dst, each the pattern pad[0..es) */
static void fill(char *dst, int64_t n, const unsigned char *pad, size_t es)
{
    int zero = 1;
    for (size_t i = 0; i < es; i++)
        zero &= pad[i] == 0;
    if (zero) {
        memset(dst, 0, (size_t)n * es);
        return;
    }
    switch (es) {
    case 2: { uint16_t v; memcpy(&v, pad, 2); for (int64_t i = 0; i < n; i++) memcpy(dst + 2 * i, &v, 2); break; }
    case 4: { uint32_t v; memcpy(&v, pad, 4); for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, &v, 4); break; }
    case 8: { uint64_t v; memcpy(&v, pad, 8); for (int64_t i = 0; i < n; i++) memcpy(dst + 8 * i, &v, 8); break; }
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * es, pad, es);
    }
}

/* Rows [*begin, *begin + *len) of values under outer position q of batch
** row b (the last level's entry); 0 when a level above ends before q. */
static int leaf_rows(const jg_plan *p, int64_t b, int64_t q, int64_t *begin, int64_t *len)
{
    int64_t leaf = jg_leaf(p, b, q);
    if (leaf < 0)
        return 0;
    const int64_t *last = p->offs[p->levels - 1];
    *begin = last[leaf];
    *len = last[leaf + 1] - last[leaf];
    return 1;
}

/* Both directions between the jagged values and the dense blocks: the
** block of (b, q) holds values rows [first, first + kept), kept =
** min(len, max_L), then padding.
**   to_dense: block = those rows, then padding (all padding when no leaf);
**   else:     those rows = the block's first kept rows; the leaf's rows past
**             max_L are 0. Rows no block reaches are zeroed by the caller. */
static void copy_blocks(const copy_job *j, int64_t begin, int64_t end, int to_dense)
{
    const jg_plan *p = j->p;
    const size_t row = (size_t)p->D * p->es;
    for (int64_t b = begin; b < end; b++)
        for (int64_t q = 0; q < p->outer; q++) {
            int64_t first = 0, len = 0;
            if (!leaf_rows(p, b, q, &first, &len) && !to_dense)
                continue;
            int64_t kept = len < p->max_L ? len : p->max_L;
            size_t block = (size_t)((b * p->outer + q) * p->max_L) * row, values = (size_t)first * row;
            if (to_dense) {
                if (kept > 0)
                    memcpy(j->dst + block, j->src + values, (size_t)kept * row);
                fill(j->dst + block + (size_t)kept * row, (p->max_L - kept) * p->D, p->pad, p->es);
            } else {
                if (kept > 0)
                    memcpy(j->dst + values, j->src + block, (size_t)kept * row);
                memset(j->dst + values + (size_t)kept * row, 0, (size_t)(len - kept) * row);
            }
        }
}

static void to_padded_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    copy_blocks(user, begin, end, 1);
}

static void to_jagged_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    copy_blocks(user, begin, end, 0);
}

void jg_cpu_zero_head(const jg_plan *p, void *out, size_t row_bytes)
{
    if (p->off[0] > 0)
        memset(out, 0, (size_t)p->off[0] * row_bytes);
}

loom_status jg_to_padded_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_to_padded(call, jg_read_host, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    copy_job j = { .p = &p, .src = loom_data(call->inputs[0]), .dst = loom_data(out) };
    return pk_host->parallel_for(call->ctx, p.B, jg_cpu_grain(p.outer * p.max_L * p.D), to_padded_rows, &j);
}

static loom_status to_jagged_common(loom_call *call, const jg_plan *p, loom_tensor *out)
{
    if (loom_numel(out) == 0)
        return LOOM_OK;
    const size_t row = (size_t)p->D * p->es;
    char *dst = loom_data(out);
    const int64_t *last = p->offs[p->levels - 1], n_last = p->offs_count[p->levels - 1] - 1;
    if (p->levels > 1) {
        /* a leaf under a truncated outer level is reached by no dense position */
        memset(dst, 0, (size_t)p->total_L * row);
    } else {
        /* rows no batch row owns */
        memset(dst, 0, (size_t)last[0] * row);
        memset(dst + (size_t)last[n_last] * row, 0, (size_t)(p->total_L - last[n_last]) * row);
    }
    copy_job j = { .p = p, .src = loom_data(call->inputs[0]), .dst = dst };
    return pk_host->parallel_for(call->ctx, p->B, jg_cpu_grain(p->outer * p->max_L * p->D), to_jagged_rows, &j);
}

loom_status jg_to_padded_backward_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_to_padded_backward(call, jg_read_host, &p, &out);
    return st != LOOM_OK ? st : to_jagged_common(call, &p, out);
}

loom_status jg_to_jagged_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_to_jagged(call, jg_read_host, &p, &out);
    return st != LOOM_OK ? st : to_jagged_common(call, &p, out);
}

/* ---------------------------------------------------------- index_select */

static void select_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const copy_job *j = user;
    const size_t row = (size_t)j->p->D * j->p->es;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++) {
        int64_t r = j->indices32 ? (int64_t)((const int32_t *)j->indices)[i] : ((const int64_t *)j->indices)[i];
        memcpy(j->dst + (size_t)i * row, j->src + (size_t)r * row, row);
    }
}

loom_status jg_index_select_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    const loom_tensor *idx = call->inputs[1];
    loom_status st = jg_prepare_index_select(call, &p, &out);
    if (st == LOOM_OK)
        st = jg_check_indices(idx, loom_data(idx), p.B, p.total_L);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    copy_job j = { .p = &p, .src = loom_data(call->inputs[0]), .dst = loom_data(out), .indices = loom_data(idx),
                   .indices32 = loom_tensor_dtype_of(idx) == LOOM_DTYPE_I32 };
    return pk_host->parallel_for(call->ctx, p.B, jg_cpu_grain(p.D), select_rows, &j);
}
