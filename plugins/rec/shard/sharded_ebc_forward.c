/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_forward.c - the method rec.sharded_embedding_bag_collection
** (shard.h): this rank's KJT in, this rank's KeyedTensor values out,
** [B, sum D] in the collection's feature order, as the unsharded
** rec.embedding_bag_collection returns them for these B samples.
**
** Table-wise and column-wise pairs come back by one MPI_Alltoallv of
** pooled blocks (rank r sends rank q the rows of q's samples, its pairs'
** columns); row-wise and table-row-wise pairs by one
** MPI_Reduce_scatter_block of partial sums [W][B][sum D_rw] (a rank
** without a shard of a table contributes zeros: adding +0 changes no sum);
** data-parallel features are looked up on the local replica.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* fbgemm.tbe on obj for batch b of `bags` bags: a new output (free with tensor_free). */
static loom_status lookup(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b, int64_t bags,
                          loom_tensor **y)
{
    int64_t ishape[1] = { b->n_indices }, oshape[1] = { bags + 1 };
    loom_tensor ti = shard_view(b->indices, SHARD_I64, 1, ishape);
    loom_tensor to = shard_view(b->offsets, SHARD_I64, 1, oshape);
    loom_tensor tw = shard_view(b->psw, SHARD_F32, 1, ishape);
    const loom_tensor *ins[3] = { &ti, &to, b->psw ? &tw : NULL };
    *y = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = y, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status rec_sebc_forward(loom_call *call)
{
    rec_sebc *e = call->object;
    const int W = e->c.size, me = e->c.rank;
    shard_input in;
    loom_status st = shard_input_read(call, e, 0, &in);
    if (st != LOOM_OK)
        return st;
    const int64_t B = in.B, D = e->feature_col[e->n_features];
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    loom_tensor *out = NULL, *y = NULL, *ydp = NULL;
    int64_t oshape[2] = { B, D };
    shard_batch batch = { 0 }, dpb = { 0 };
    float *sblk = NULL, *rblk = NULL, *srw = NULL, *rrw = NULL;
    int *cnt = calloc((size_t)W * 4, sizeof *cnt);
    if (cnt == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, oshape, &out);
    float *o = st == LOOM_OK && B * D > 0 ? loom_data(out) : NULL;
    if (o)
        memset(o, 0, (size_t)(B * D) * sizeof *o);
    if (st == LOOM_OK)
        st = shard_kjt_all_to_all(e, &in, &batch);
    if (st == LOOM_OK && e->tbe && P > 0)
        st = lookup(call, e, e->tbe, &batch, P * W * B, &y);
    const float *yl = y && loom_numel(y) ? loom_data(y) : NULL;
    const int64_t LD = e->local_d[me];

    /* table-wise and column-wise: the pooled blocks back to the samples' ranks */
    int *scnt = cnt, *sdis = cnt + W, *rcnt = cnt + 2 * W, *rdis = cnt + 3 * W;
    int64_t nr = 0;
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        if ((st = shard_count(B * e->block_cols[me], "pooled block", &scnt[q])) == LOOM_OK)
            st = shard_count(B * e->block_cols[q], "pooled block", &rcnt[q]);
        sdis[q] = (int)(q * B * e->block_cols[me]);
        rdis[q] = (int)nr;
        nr += B * e->block_cols[q];
    }
    if (st == LOOM_OK && (nr > 2147483647 || (int64_t)W * B * e->block_cols[me] > 2147483647))
        st = pk_host->fail(LOOM_EINVAL, "%s: the pooled all-to-all exceeds int displacements", REC_SEBC_CLASS);
    if (st == LOOM_OK) {
        const int64_t C = e->block_cols[me];
        sblk = malloc((size_t)(W * B * C > 0 ? W * B * C : 1) * sizeof *sblk);
        rblk = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *rblk);
        if (!sblk || !rblk)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
            if (mine[j].rw)
                continue;
            for (int64_t row = 0; row < W * B; row++)
                memcpy(sblk + row * C + mine[j].block_col, yl + row * LD + mine[j].local_col,
                       (size_t)mine[j].cols * sizeof *sblk);
        }
    }
    if (st == LOOM_OK) {
        MPI_Request req;
        st = MPI_Ialltoallv(sblk, scnt, sdis, MPI_FLOAT, rblk, rcnt, rdis, MPI_FLOAT, e->c.comm, &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (pooled embeddings)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", REC_SEBC_CLASS, me);
    }
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        const int64_t C = e->block_cols[r];
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            if (p->rw)
                continue;
            for (int64_t b = 0; b < B; b++)
                memcpy(o + b * D + e->feature_col[p->feature] + p->col_offset, rblk + rdis[r] + b * C + p->block_col,
                       (size_t)p->cols * sizeof *o);
        }
    }

    /* row-wise and table-row-wise: partial sums, reduce-scattered */
    const int64_t R = e->rw_d;
    if (st == LOOM_OK && R > 0) {
        int n = 0;
        st = shard_count(B * R, "row-wise block", &n);
        if (st == LOOM_OK) {
            srw = calloc((size_t)(W * B * R > 0 ? W * B * R : 1), sizeof *srw);
            rrw = malloc((size_t)(B * R > 0 ? B * R : 1) * sizeof *rrw);
            if (!srw || !rrw)
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        }
        for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
            if (!mine[j].rw)
                continue;
            const int64_t col = e->rw_col[mine[j].feature];
            for (int64_t row = 0; row < W * B; row++)
                for (int64_t c = 0; c < mine[j].cols; c++)
                    srw[row * R + col + c] += yl[row * LD + mine[j].local_col + c];
        }
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Ireduce_scatter_block(srw, rrw, n, MPI_FLOAT, MPI_SUM, e->c.comm, &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Ireduce_scatter_block (row-wise pooled embeddings)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ireduce_scatter_block failed", REC_SEBC_CLASS, me);
        }
        for (int64_t f = 0; st == LOOM_OK && f < e->n_features; f++) {
            if (e->rw_col[f] < 0)
                continue;
            const int64_t d = e->feature_col[f + 1] - e->feature_col[f];
            for (int64_t b = 0; b < B; b++)
                memcpy(o + b * D + e->feature_col[f], rrw + b * R + e->rw_col[f], (size_t)d * sizeof *o);
        }
    }

    /* data-parallel: the local batch on the local replica */
    if (st == LOOM_OK && e->dp_tbe) {
        if ((st = shard_dp_batch(e, &in, 0, &dpb)) == LOOM_OK)
            st = lookup(call, e, e->dp_tbe, &dpb, e->n_dp_features * B, &ydp);
        const float *yd = st == LOOM_OK && loom_numel(ydp) ? loom_data(ydp) : NULL;
        for (int64_t j = 0; st == LOOM_OK && yd && j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], d = e->feature_col[f + 1] - e->feature_col[f];
            for (int64_t b = 0; b < B; b++)
                memcpy(o + b * D + e->feature_col[f], yd + b * e->dp_d + e->dp_col[f], (size_t)d * sizeof *o);
        }
    }
    if (y)
        pk_host->tensor_free(y);
    if (ydp)
        pk_host->tensor_free(ydp);
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    shard_input_free(&in);
    free(cnt);
    free(sblk);
    free(rblk);
    free(srw);
    free(rrw);
    return st;
}
