/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_blocks.c - the layouts of the pooled rows that the sharded
** collection's forward sends back to the samples' ranks and its backward
** sends the gradients of (shard.h), for the strides of the call (every
** rank's bags per feature, which with VBE differ by rank and feature).
**
** Every block is feature-major, the rows of a feature one after another
** (torchrec's layout of pooled embeddings with VBE: [B_f, D_f] per
** feature): the table-/column-wise block from rank r to rank q holds, for
** each of r's pairs in order, rank q's stride of its feature times the
** pair's columns; the row-wise block of rank q (reduce-scattered in the
** forward, all-gathered in the backward) and the data-parallel one
** (all-gathered in the backward) hold, for each such feature in feature
** order, rank q's stride times D_f. Every rank computes the same layouts
** from the same plan and the all-gathered strides.
*/
#include <stdlib.h>

#include "shard.h"

void shard_blocks_free(shard_blocks *b)
{
    free(b->mem);
    *b = (shard_blocks){ 0 };
}

/* n[W] into MPI counts and displacements, failing by name past int. */
static loom_status to_counts(const rec_sebc *e, const int64_t *n, int W, const char *what, int *cnt, int *dis)
{
    int64_t at = 0;
    for (int q = 0; q < W; q++) {
        loom_status st = shard_count(e->c.name, n[q], what, &cnt[q]);
        if (st != LOOM_OK)
            return st;
        if (at > 2147483647)
            return pk_host->fail(LOOM_EINVAL, "%s: %s: the displacements exceed int", e->c.name, what);
        dis[q] = (int)at;
        at += n[q];
    }
    if (at > 2147483647)
        return pk_host->fail(LOOM_EINVAL, "%s: %s: the displacements exceed int", e->c.name, what);
    return LOOM_OK;
}

loom_status shard_blocks_build(const rec_sebc *e, const shard_input *in, shard_blocks *b)
{
    const int W = e->c.size, me = e->c.rank;
    const int64_t F = e->n_features;
    *b = (shard_blocks){ 0 };
    const size_t n64 = (size_t)W * 4 + (size_t)W * (size_t)F * 2, n32 = (size_t)W * 8;
    if ((b->mem = calloc(n64 * sizeof(int64_t) + n32 * sizeof(int), 1)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    int64_t *m = b->mem;
    int64_t *ship = m, *take = m + W, *rw = m + 2 * W, *dp = m + 3 * W;
    b->rw_f = m + 4 * W;
    b->dp_f = b->rw_f + (size_t)W * F;
    int *c = (int *)(b->dp_f + (size_t)W * F);
    b->ship_cnt = c, b->ship_dis = c + W, b->take_cnt = c + 2 * W, b->take_dis = c + 3 * W;
    b->rw_cnt = c + 4 * W, b->rw_dis = c + 5 * W, b->dp_cnt = c + 6 * W, b->dp_dis = c + 7 * W;
    const int64_t *S = in->strides;
    for (int q = 0; q < W; q++) {
        for (int64_t k = e->pair_start[me]; k < e->pair_start[me + 1]; k++)
            if (!e->pairs[k].rw)
                ship[q] += S[q * F + e->pairs[k].feature] * e->pairs[k].cols;
        for (int64_t k = e->pair_start[q]; k < e->pair_start[q + 1]; k++)
            if (!e->pairs[k].rw)
                take[q] += S[me * F + e->pairs[k].feature] * e->pairs[k].cols;
        for (int64_t f = 0; f < F; f++) {
            const int64_t d = e->feature_col[f + 1] - e->feature_col[f];
            b->rw_f[q * F + f] = b->dp_f[q * F + f] = -1;
            if (e->rw_col[f] >= 0) {
                b->rw_f[q * F + f] = rw[q];
                rw[q] += S[q * F + f] * d;
            } else if (e->dp_col[f] >= 0) {
                b->dp_f[q * F + f] = dp[q];
                dp[q] += S[q * F + f] * d;
            }
        }
    }
    loom_status st = to_counts(e, ship, W, "pooled rows sent", b->ship_cnt, b->ship_dis);
    if (st == LOOM_OK)
        st = to_counts(e, take, W, "pooled rows received", b->take_cnt, b->take_dis);
    if (st == LOOM_OK)
        st = to_counts(e, rw, W, "row-wise block", b->rw_cnt, b->rw_dis);
    if (st == LOOM_OK)
        st = to_counts(e, dp, W, "data-parallel block", b->dp_cnt, b->dp_dis);
    if (st != LOOM_OK) {
        shard_blocks_free(b);
        return st;
    }
    b->n_ship = (int64_t)b->ship_dis[W - 1] + ship[W - 1];
    b->n_take = (int64_t)b->take_dis[W - 1] + take[W - 1];
    b->n_rw = (int64_t)b->rw_dis[W - 1] + rw[W - 1];
    b->n_dp = (int64_t)b->dp_dis[W - 1] + dp[W - 1];
    return LOOM_OK;
}
