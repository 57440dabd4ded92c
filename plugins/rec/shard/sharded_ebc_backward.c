/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_backward.c - the method
** rec.sharded_embedding_bag_collection_backward(KJT, grad) (shard.h): one
** step of the fused optimizer on every rank's shards for the global batch,
** grad being the gradient of this rank's forward output [B, sum D].
**
** The KJT all-to-all runs again (the forward keeps no state between
** calls), then the gradient takes the transposed paths of the forward:
** table-wise and column-wise blocks by MPI_Alltoallv to the shards' ranks,
** row-wise columns by MPI_Allgather (every shard of a row-wise table gets
** the gradient of every sample, the transpose of the reduce-scatter), and
** fbgemm.tbe_backward steps the local TBE on the W * B samples it looked
** up. Data-parallel tables all-gather the ids and the gradient columns
** and step every replica on the whole batch (shard.h).
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* fbgemm.tbe_backward on obj: grad [bags / features, cols] with the batch b. */
static loom_status step(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b, int64_t bags,
                        float *grad, int64_t rows, int64_t cols)
{
    int64_t gshape[2] = { rows, cols }, ishape[1] = { b->n_indices }, oshape[1] = { bags + 1 };
    loom_tensor tg = shard_view(grad, SHARD_F32, 2, gshape);
    loom_tensor ti = shard_view(b->indices, SHARD_I64, 1, ishape);
    loom_tensor to = shard_view(b->offsets, SHARD_I64, 1, oshape);
    loom_tensor tw = shard_view(b->psw, SHARD_F32, 1, ishape);
    const loom_tensor *ins[4] = { &tg, &ti, &to, b->psw ? &tw : NULL };
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->backward_op, .n_inputs = 4, .inputs = ins, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status rec_sebc_backward(loom_call *call)
{
    rec_sebc *e = call->object;
    const int W = e->c.size, me = e->c.rank;
    shard_input in;
    loom_status st = shard_input_read(call, e, 1, &in);
    if (st != LOOM_OK)
        return st;
    const int64_t B = in.B, D = e->feature_col[e->n_features];
    const loom_tensor *grad = call->inputs[SEBC_IN_GRAD];   /* checked by shard_input_read */
    const float *gy = B * D > 0 ? loom_data(grad) : NULL;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    shard_batch batch = { 0 }, dpb = { 0 };
    float *gl = NULL, *sblk = NULL, *rblk = NULL, *grw = NULL, *agrw = NULL, *gdp = NULL, *agdp = NULL;
    int *cnt = calloc((size_t)W * 4, sizeof *cnt);
    if (cnt == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    if (st == LOOM_OK)
        st = shard_kjt_all_to_all(e, &in, &batch);
    if (st == LOOM_OK && (gl = calloc((size_t)(W * B * LD > 0 ? W * B * LD : 1), sizeof *gl)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);

    /* table-wise and column-wise: each rank's block of the gradient to the shards' ranks */
    int *scnt = cnt, *sdis = cnt + W, *rcnt = cnt + 2 * W, *rdis = cnt + 3 * W;
    int64_t ns = 0;
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        if ((st = shard_count(B * e->block_cols[r], "gradient block", &scnt[r])) == LOOM_OK)
            st = shard_count(B * e->block_cols[me], "gradient block", &rcnt[r]);
        sdis[r] = (int)ns;
        rdis[r] = (int)(r * B * e->block_cols[me]);
        ns += B * e->block_cols[r];
    }
    const int64_t C = e->block_cols[me];
    if (st == LOOM_OK && (ns > 2147483647 || (int64_t)W * B * C > 2147483647))
        st = pk_host->fail(LOOM_EINVAL, "%s: the gradient all-to-all exceeds int displacements", REC_SEBC_CLASS);
    if (st == LOOM_OK) {
        sblk = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *sblk);
        rblk = malloc((size_t)(W * B * C > 0 ? W * B * C : 1) * sizeof *rblk);
        if (!sblk || !rblk)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    }
    for (int r = 0; st == LOOM_OK && r < W; r++)
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            if (p->rw)
                continue;
            for (int64_t b = 0; b < B; b++)
                memcpy(sblk + sdis[r] + b * e->block_cols[r] + p->block_col,
                       gy + b * D + e->feature_col[p->feature] + p->col_offset, (size_t)p->cols * sizeof *sblk);
        }
    if (st == LOOM_OK) {
        MPI_Request req;
        st = MPI_Ialltoallv(sblk, scnt, sdis, MPI_FLOAT, rblk, rcnt, rdis, MPI_FLOAT, e->c.comm, &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (embedding gradients)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", REC_SEBC_CLASS, me);
    }
    for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
        if (mine[j].rw)
            continue;
        for (int64_t row = 0; row < W * B; row++)
            memcpy(gl + row * LD + mine[j].local_col, rblk + row * C + mine[j].block_col,
                   (size_t)mine[j].cols * sizeof *gl);
    }

    /* row-wise and table-row-wise: every sample's gradient to every shard */
    const int64_t R = e->rw_d;
    if (st == LOOM_OK && R > 0) {
        int n = 0;
        st = shard_count(B * R, "row-wise gradient", &n);
        if (st == LOOM_OK) {
            grw = malloc((size_t)(B * R > 0 ? B * R : 1) * sizeof *grw);
            agrw = malloc((size_t)(W * B * R > 0 ? W * B * R : 1) * sizeof *agrw);
            if (!grw || !agrw)
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        }
        for (int64_t f = 0; st == LOOM_OK && f < e->n_features; f++) {
            if (e->rw_col[f] < 0)
                continue;
            const int64_t d = e->feature_col[f + 1] - e->feature_col[f];
            for (int64_t b = 0; b < B; b++)
                memcpy(grw + b * R + e->rw_col[f], gy + b * D + e->feature_col[f], (size_t)d * sizeof *grw);
        }
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Iallgather(grw, n, MPI_FLOAT, agrw, n, MPI_FLOAT, e->c.comm, &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Iallgather (row-wise gradients)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", REC_SEBC_CLASS, me);
        }
        for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
            if (!mine[j].rw)
                continue;
            const int64_t col = e->rw_col[mine[j].feature];
            for (int64_t row = 0; row < W * B; row++)
                memcpy(gl + row * LD + mine[j].local_col, agrw + row * R + col, (size_t)mine[j].cols * sizeof *gl);
        }
    }
    if (st == LOOM_OK && e->tbe && P > 0)
        st = step(call, e, e->tbe, &batch, P * W * B, gl, W * B, LD);

    /* data-parallel: the whole batch on every replica */
    if (st == LOOM_OK && e->dp_tbe) {
        const int64_t DD = e->dp_d;
        int n = 0;
        st = shard_dp_batch(e, &in, 1, &dpb);
        if (st == LOOM_OK)
            st = shard_count(B * DD, "data-parallel gradient", &n);
        if (st == LOOM_OK) {
            gdp = malloc((size_t)(B * DD > 0 ? B * DD : 1) * sizeof *gdp);
            agdp = malloc((size_t)(W * B * DD > 0 ? W * B * DD : 1) * sizeof *agdp);
            if (!gdp || !agdp)
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        }
        for (int64_t j = 0; st == LOOM_OK && j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], d = e->feature_col[f + 1] - e->feature_col[f];
            for (int64_t b = 0; b < B; b++)
                memcpy(gdp + b * DD + e->dp_col[f], gy + b * D + e->feature_col[f], (size_t)d * sizeof *gdp);
        }
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Iallgather(gdp, n, MPI_FLOAT, agdp, n, MPI_FLOAT, e->c.comm, &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Iallgather (data-parallel gradients)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", REC_SEBC_CLASS, me);
        }
        if (st == LOOM_OK)
            st = step(call, e, e->dp_tbe, &dpb, e->n_dp_features * W * B, agdp, W * B, DD);
    }
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    shard_input_free(&in);
    free(cnt);
    free(gl);
    free(sblk);
    free(rblk);
    free(grw);
    free(agrw);
    free(gdp);
    free(agdp);
    return st;
}
