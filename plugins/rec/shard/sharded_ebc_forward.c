/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_forward.c - the method rec.sharded_embedding_bag_collection
** (shard.h): this rank's KJT in, this rank's KeyedTensor values out,
** [B, sum D] in the collection's feature order, as the unsharded
** rec.embedding_bag_collection returns them for these B samples.
**
** Table-wise and column-wise pairs come back by one MPI_Alltoallv of
** pooled rows (rank r sends rank q the rows of q's bags, its pairs'
** columns, pair-major: sharded_ebc_blocks.c); row-wise and table-row-wise
** pairs by one MPI_Reduce_scatter of partial sums (rank q's block: its bags
** of every row-wise feature; a rank without a shard of a table contributes
** zeros: adding +0 changes no sum); data-parallel features are looked up
** on the local replica. The rows land in this rank's deduplicated
** KeyedTensor (one row per bag), expanded to the B samples through
** inverse_indices with VBE (shard_kt_expand), else copied. When a
** prefetch distributed this very KJT on every rank, its batch is taken
** instead of running the KJT all-to-all again (sharded_ebc_prefetch.c).
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

loom_status rec_sebc_forward(loom_call *call)
{
    rec_sebc *e = call->object;
    const int W = e->c.size, me = e->c.rank;
    /* the input a prefetch distributed for this KJT, when every rank has it (sharded_ebc_prefetch.c) */
    shard_input in = { 0 };
    loom_status st = shard_input_check(call, e, 0, &in);
    if (st == LOOM_OK)
        in.kept_id = shard_prefetch_match(e, &in);
    if ((st = shard_input_agree(e, st, &in)) != LOOM_OK)
        return st;
    const int64_t B = in.B, F = e->n_features, D = e->feature_col[F];
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    const int64_t *S = in.strides;
    loom_tensor *out = NULL, *y = NULL, *ydp = NULL;
    int64_t oshape[2] = { B, D }, *kts = NULL;
    shard_batch batch = { 0 }, dpb = { 0 };
    shard_blocks bl = { 0 };
    float *kt = NULL, *sblk = NULL, *rblk = NULL, *srw = NULL, *rrw = NULL;
    if ((st = shard_blocks_build(e, &in, &bl)) == LOOM_OK && (st = shard_kt_layout(e, &in, &kts)) == LOOM_OK &&
        (kt = calloc((size_t)(kts[F] > 0 ? kts[F] : 1), sizeof *kt)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, oshape, &out);
    float *o = st == LOOM_OK && B * D > 0 ? loom_data(out) : NULL;
    if (st == LOOM_OK)
        st = in.reuse ? shard_prefetch_take(e, in.kept_id, &batch) : shard_kjt_all_to_all(e, &in, &batch);
    if (st == LOOM_OK && in.reuse) {
        e->stats.input.kjt_reused++;
        e->stats.input.kjt_bytes_saved += (double)batch.sent_bytes;
    } else if (st == LOOM_OK) {
        e->stats.input.kjt_all_to_alls++;
        e->stats.input.kjt_bytes += (double)batch.sent_bytes;
    }
    /* one local TBE, or one per compute kernel (shard_groups.c) */
    float *ygroups = NULL;
    if (st == LOOM_OK && e->tbe && P > 0)
        st = e->n_groups == 1 ? shard_tbe_lookup(call, e, e->tbe, &batch, P * batch.bags, &y)
                              : shard_groups_lookup(call, e, &batch, &ygroups);
    const float *yl = ygroups ? ygroups : y && loom_numel(y) ? loom_data(y) : NULL;
    const int64_t LD = e->local_d[me];

    /* table-wise and column-wise: the pooled rows of each rank's bags back to it, pair-major */
    if (st == LOOM_OK) {
        sblk = malloc((size_t)(bl.n_ship > 0 ? bl.n_ship : 1) * sizeof *sblk);
        rblk = malloc((size_t)(bl.n_take > 0 ? bl.n_take : 1) * sizeof *rblk);
        if (!sblk || !rblk)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        float *at = sblk + bl.ship_dis[q];
        for (int64_t j = 0; j < P; j++) {
            if (mine[j].rw)
                continue;
            const int64_t r0 = batch.row0[j * (W + 1) + q], n = S[q * F + mine[j].feature], c = mine[j].cols;
            for (int64_t s = 0; s < n; s++, at += c)
                memcpy(at, yl + (r0 + s) * LD + mine[j].local_col, (size_t)c * sizeof *at);
        }
    }
    if (st == LOOM_OK) {
        MPI_Request req;
        st = MPI_Ialltoallv(sblk, bl.ship_cnt, bl.ship_dis, MPI_FLOAT, rblk, bl.take_cnt, bl.take_dis, MPI_FLOAT,
                            e->c.comm, &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (pooled embeddings)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", e->c.name, me);
    }
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        const float *at = rblk + bl.take_dis[r];
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            if (p->rw)
                continue;
            const int64_t d = e->feature_col[p->feature + 1] - e->feature_col[p->feature];
            for (int64_t s = 0; s < in.stride[p->feature]; s++, at += p->cols)
                memcpy(kt + kts[p->feature] + s * d + p->col_offset, at, (size_t)p->cols * sizeof *kt);
        }
    }

    /* row-wise and table-row-wise: partial sums, reduce-scattered (rank q's block: its bags of every
    ** row-wise feature) */
    if (st == LOOM_OK && e->rw_d > 0) {
        srw = calloc((size_t)(bl.n_rw > 0 ? bl.n_rw : 1), sizeof *srw);
        rrw = malloc((size_t)(bl.rw_cnt[me] > 0 ? bl.rw_cnt[me] : 1) * sizeof *rrw);
        if (!srw || !rrw)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
            if (!mine[j].rw)
                continue;
            const int64_t f = mine[j].feature, d = e->feature_col[f + 1] - e->feature_col[f];
            for (int q = 0; q < W; q++) {
                float *blk = srw + bl.rw_dis[q] + bl.rw_f[q * F + f] + mine[j].col_offset;
                const int64_t r0 = batch.row0[j * (W + 1) + q];
                for (int64_t s = 0; s < S[q * F + f]; s++)
                    for (int64_t c = 0; c < mine[j].cols; c++)
                        blk[s * d + c] += yl[(r0 + s) * LD + mine[j].local_col + c];
            }
        }
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Ireduce_scatter(srw, rrw, bl.rw_cnt, MPI_FLOAT, MPI_SUM, e->c.comm, &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Ireduce_scatter (row-wise pooled embeddings)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ireduce_scatter failed", e->c.name, me);
        }
        for (int64_t f = 0; st == LOOM_OK && f < F; f++)
            if (e->rw_col[f] >= 0 && kts[f + 1] > kts[f])
                memcpy(kt + kts[f], rrw + bl.rw_f[me * F + f], (size_t)(kts[f + 1] - kts[f]) * sizeof *kt);
    }

    /* data-parallel: the local bags on the local replica */
    if (st == LOOM_OK && e->dp_tbe) {
        if ((st = shard_dp_batch(e, &in, 0, &dpb)) == LOOM_OK)
            st = shard_tbe_lookup(call, e, e->dp_tbe, &dpb, e->n_dp_features * dpb.bags, &ydp);
        const float *yd = st == LOOM_OK && loom_numel(ydp) ? loom_data(ydp) : NULL;
        for (int64_t j = 0; st == LOOM_OK && yd && j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], d = e->feature_col[f + 1] - e->feature_col[f];
            for (int64_t s = 0; s < in.stride[f]; s++)
                memcpy(kt + kts[f] + s * d, yd + s * e->dp_d + e->dp_col[f], (size_t)d * sizeof *kt);
        }
    }
    /* every bag's row to its samples (a copy without VBE) */
    if (st == LOOM_OK && o)
        shard_kt_expand(e, &in, kts, kt, o);
    if (y)
        pk_host->tensor_free(y);
    if (ydp)
        pk_host->tensor_free(ydp);
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    shard_blocks_free(&bl);
    shard_input_free(&in);
    free(kts);
    free(kt);
    free(sblk);
    free(rblk);
    free(srw);
    free(rrw);
    free(ygroups);
    return st;
}
