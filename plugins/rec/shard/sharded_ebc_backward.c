/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_backward.c - the method
** rec.sharded_embedding_bag_collection_backward(KJT, grad) (shard.h): one
** step of the fused optimizer on every rank's shards for the global batch,
** grad being the gradient of this rank's forward output [B, sum D].
**
** The KJT all-to-all runs again (the forward keeps no state between
** calls), then the gradient takes the transposed paths of the forward:
** with VBE the samples' gradients are first summed into their bags
** (shard_kt_reduce, the transpose of the expansion through
** inverse_indices); table-wise and column-wise rows by MPI_Alltoallv to the
** shards' ranks, row-wise rows by MPI_Iallgatherv (every shard of a
** row-wise table gets the gradient of every bag, the transpose of the
** reduce-scatter), and fbgemm.tbe_backward steps the local TBE on the bags
** it looked up. Data-parallel tables all-gather the ids and the gradient
** rows and step every replica on the whole batch (shard.h).
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
    const int64_t B = in.B, F = e->n_features, D = e->feature_col[F];
    const loom_tensor *grad = call->inputs[SEBC_IN_GRAD];   /* checked by shard_input_read */
    const float *gy = B * D > 0 ? loom_data(grad) : NULL;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    const int64_t *S = in.strides;
    shard_batch batch = { 0 }, dpb = { 0 };
    shard_blocks bl = { 0 };
    int64_t *kts = NULL;
    float *gk = NULL, *gl = NULL, *sblk = NULL, *rblk = NULL, *grw = NULL, *agrw = NULL, *gdp = NULL, *agdp = NULL;
    float *gpad = NULL;   /* the data-parallel TBE batch's gradient [bags, dp_d] */
    if ((st = shard_blocks_build(e, &in, &bl)) == LOOM_OK && (st = shard_kt_layout(e, &in, &kts)) == LOOM_OK &&
        (gk = calloc((size_t)(kts[F] > 0 ? kts[F] : 1), sizeof *gk)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    /* the gradient of every bag: the sum of its samples' (a copy without VBE; zero for a bag no sample
    ** maps to, so also when B is 0) */
    if (st == LOOM_OK && gy)
        shard_kt_reduce(e, &in, kts, gy, gk);
    if (st == LOOM_OK)
        st = shard_kjt_all_to_all(e, &in, &batch);
    if (st == LOOM_OK && (gl = calloc((size_t)(batch.bags * LD > 0 ? batch.bags * LD : 1), sizeof *gl)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);

    /* table-wise and column-wise: each rank's bags' gradient rows to the shards' ranks (the forward's
    ** pooled all-to-all transposed) */
    if (st == LOOM_OK) {
        sblk = malloc((size_t)(bl.n_take > 0 ? bl.n_take : 1) * sizeof *sblk);
        rblk = malloc((size_t)(bl.n_ship > 0 ? bl.n_ship : 1) * sizeof *rblk);
        if (!sblk || !rblk)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        float *at = sblk + bl.take_dis[r];
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            if (p->rw)
                continue;
            const int64_t d = e->feature_col[p->feature + 1] - e->feature_col[p->feature];
            for (int64_t s = 0; s < in.stride[p->feature]; s++, at += p->cols)
                memcpy(at, gk + kts[p->feature] + s * d + p->col_offset, (size_t)p->cols * sizeof *at);
        }
    }
    if (st == LOOM_OK) {
        MPI_Request req;
        st = MPI_Ialltoallv(sblk, bl.take_cnt, bl.take_dis, MPI_FLOAT, rblk, bl.ship_cnt, bl.ship_dis, MPI_FLOAT,
                            e->c.comm, &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (embedding gradients)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", e->c.name, me);
    }
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        const float *at = rblk + bl.ship_dis[q];
        for (int64_t j = 0; j < P; j++) {
            if (mine[j].rw)
                continue;
            const int64_t r0 = batch.row0[j * (W + 1) + q], n = S[q * F + mine[j].feature], c = mine[j].cols;
            for (int64_t s = 0; s < n; s++, at += c)
                memcpy(gl + (r0 + s) * LD + mine[j].local_col, at, (size_t)c * sizeof *gl);
        }
    }

    /* row-wise and table-row-wise: every bag's gradient to every shard (all-gathered) */
    if (st == LOOM_OK && e->rw_d > 0) {
        grw = malloc((size_t)(bl.rw_cnt[me] > 0 ? bl.rw_cnt[me] : 1) * sizeof *grw);
        agrw = malloc((size_t)(bl.n_rw > 0 ? bl.n_rw : 1) * sizeof *agrw);
        if (!grw || !agrw)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        for (int64_t f = 0; st == LOOM_OK && f < F; f++)
            if (e->rw_col[f] >= 0 && kts[f + 1] > kts[f])
                memcpy(grw + bl.rw_f[me * F + f], gk + kts[f], (size_t)(kts[f + 1] - kts[f]) * sizeof *grw);
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Iallgatherv(grw, bl.rw_cnt[me], MPI_FLOAT, agrw, bl.rw_cnt, bl.rw_dis, MPI_FLOAT, e->c.comm,
                                 &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Iallgatherv (row-wise gradients)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgatherv failed", e->c.name, me);
        }
        for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
            if (!mine[j].rw)
                continue;
            const int64_t f = mine[j].feature, d = e->feature_col[f + 1] - e->feature_col[f];
            for (int q = 0; q < W; q++) {
                const float *blk = agrw + bl.rw_dis[q] + bl.rw_f[q * F + f] + mine[j].col_offset;
                const int64_t r0 = batch.row0[j * (W + 1) + q];
                for (int64_t s = 0; s < S[q * F + f]; s++)
                    memcpy(gl + (r0 + s) * LD + mine[j].local_col, blk + s * d, (size_t)mine[j].cols * sizeof *gl);
            }
        }
    }
    if (st == LOOM_OK && e->tbe && P > 0 && e->n_groups == 1)
        st = step(call, e, e->tbe, &batch, P * batch.bags, gl, batch.bags, LD);
    /* one step per compute-kernel group, on its slice of the batch and its columns of the gradient */
    for (int g = 0; st == LOOM_OK && e->tbe && P > 0 && e->n_groups == 2 && g < 2; g++) {
        int64_t p0, p1, c0, cols;
        shard_group_range(e, g, &p0, &p1, &c0, &cols);
        shard_batch sub;
        if ((st = shard_group_batch(e, &batch, g, &sub)) != LOOM_OK)
            break;
        float *gg = malloc((size_t)(batch.bags * cols > 0 ? batch.bags * cols : 1) * sizeof *gg);
        if (gg == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        for (int64_t r = 0; gg && r < batch.bags; r++)
            memcpy(gg + r * cols, gl + r * LD + c0, (size_t)cols * sizeof *gg);
        if (st == LOOM_OK)
            st = step(call, e, shard_group_tbe(e, g), &sub, (p1 - p0) * batch.bags, gg, batch.bags, cols);
        free(gg);
        free(sub.offsets);
    }

    /* data-parallel: every rank's bags on every replica */
    if (st == LOOM_OK && e->dp_tbe) {
        const int64_t DD = e->dp_d;
        st = shard_dp_batch(e, &in, 1, &dpb);
        if (st == LOOM_OK) {
            gdp = malloc((size_t)(bl.dp_cnt[me] > 0 ? bl.dp_cnt[me] : 1) * sizeof *gdp);
            agdp = malloc((size_t)(bl.n_dp > 0 ? bl.n_dp : 1) * sizeof *agdp);
            gpad = calloc((size_t)(dpb.bags * DD > 0 ? dpb.bags * DD : 1), sizeof *gpad);
            if (!gdp || !agdp || !gpad)
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        }
        for (int64_t f = 0; st == LOOM_OK && f < F; f++)
            if (e->dp_col[f] >= 0 && kts[f + 1] > kts[f])
                memcpy(gdp + bl.dp_f[me * F + f], gk + kts[f], (size_t)(kts[f + 1] - kts[f]) * sizeof *gdp);
        if (st == LOOM_OK) {
            MPI_Request req;
            st = MPI_Iallgatherv(gdp, bl.dp_cnt[me], MPI_FLOAT, agdp, bl.dp_cnt, bl.dp_dis, MPI_FLOAT, e->c.comm,
                                 &req) == MPI_SUCCESS
                     ? shard_wait(&e->c, &req, "MPI_Iallgatherv (data-parallel gradients)")
                     : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgatherv failed", e->c.name, me);
        }
        for (int64_t j = 0; st == LOOM_OK && j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], d = e->feature_col[f + 1] - e->feature_col[f];
            for (int q = 0; q < W; q++) {
                const float *blk = agdp + bl.dp_dis[q] + bl.dp_f[q * F + f];
                const int64_t r0 = dpb.row0[j * (W + 1) + q];
                for (int64_t s = 0; s < S[q * F + f]; s++)
                    memcpy(gpad + (r0 + s) * DD + e->dp_col[f], blk + s * d, (size_t)d * sizeof *gl);
            }
        }
        if (st == LOOM_OK)
            st = step(call, e, e->dp_tbe, &dpb, e->n_dp_features * dpb.bags, gpad, dpb.bags, DD);
    }
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    shard_blocks_free(&bl);
    shard_input_free(&in);
    free(kts);
    free(gk);
    free(gl);
    free(sblk);
    free(rblk);
    free(grw);
    free(agrw);
    free(gdp);
    free(agdp);
    free(gpad);
    return st;
}
