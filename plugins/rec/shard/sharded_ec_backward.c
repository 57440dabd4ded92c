/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ec_backward.c - the method
** rec.sharded_embedding_collection_backward(KJT, grad) (shard.h): one step
** of the fused optimizer on every rank's shards for the global batch, grad
** being the gradient of this rank's forward values [N, D] (one row per id).
**
** The KJT all-to-all runs again (the forward keeps no state between
** calls); the gradient rows take the forward's row exchange backwards
** (MPI_Alltoallv, sharded_ec_dist.c: each id's row gradient to its shard;
** a column-wise table's to every column shard, its columns each), and
** fbgemm.tbe_backward steps the local TBE on them as bags of one id, so a
** row's step is on the sum of the gradients of all its ids in the global
** batch, summed in the order of the global batch (feature, rank, sample,
** position). Data-parallel tables all-gather the batch's ids and gradient
** rows, in rank order, and every replica takes the same step (shard.h).
**
** The gradient's shape is checked with the KJT before the ranks exchange
** their verdicts, so a wrong one on one rank is refused on every rank.
*/
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "shard.h"

/* fbgemm.tbe_backward on obj: grad [rows, cols] of ids as bags of one (offsets [bags + 1]). */
static loom_status step(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b, int64_t *offsets,
                        int64_t bags, float *grad, int64_t rows, int64_t cols)
{
    int64_t gshape[2] = { rows, cols }, ishape[1] = { b->n_indices }, oshape[1] = { bags + 1 };
    loom_tensor tg = shard_view(grad, SHARD_F32, 2, gshape);
    loom_tensor ti = shard_view(b->indices, SHARD_I64, 1, ishape);
    loom_tensor to = shard_view(offsets, SHARD_I64, 1, oshape);
    const loom_tensor *ins[4] = { &tg, &ti, &to, NULL };
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->backward_op, .n_inputs = 4, .inputs = ins, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

/* Data-parallel tables: every rank's ids and gradient rows, and the replica's step on all of them. */
static loom_status dp_step(loom_call *call, const rec_sebc *e, const shard_input *in, const float *gy)
{
    const int W = e->c.size;
    const int64_t B = in->B, D = e->embedding_dim[0], J = e->n_dp_features, DD = e->dp_d;
    shard_batch dpb = { 0 };
    int64_t rows = 0, *off = NULL, n_local = 0;
    float *gdp = NULL, *agdp = NULL, *g = NULL;
    int *cnt = calloc((size_t)W * 2, sizeof *cnt), *dis = cnt ? cnt + W : NULL;
    loom_status st = cnt ? shard_dp_batch(e, in, 1, &dpb) : pk_host->fail(LOOM_ENOMEM, "%s: out of memory",
                                                                          e->c.name);
    /* rank q's block: its ids' gradient rows, dp feature by feature */
    int64_t total = 0;
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        int64_t n = 0;
        for (int64_t j = 0; j < J; j++)
            n += dpb.offsets[j * W * B + (q + 1) * B] - dpb.offsets[j * W * B + q * B];
        if ((st = shard_count(e->c.name, n * D, "data-parallel gradient rows", &cnt[q])) == LOOM_OK)
            st = shard_count(e->c.name, total, "data-parallel gradient rows", &dis[q]);
        total += n * D;
        if (q == e->c.rank)
            n_local = n;
    }
    if (st == LOOM_OK && total > 2147483647)
        st = pk_host->fail(LOOM_EINVAL, "%s: the data-parallel all-gather exceeds int displacements", e->c.name);
    if (st == LOOM_OK) {
        gdp = malloc((size_t)(n_local * D > 0 ? n_local * D : 1) * sizeof *gdp);
        agdp = malloc((size_t)(total > 0 ? total : 1) * sizeof *agdp);
        if (!gdp || !agdp)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    int64_t at = 0;
    for (int64_t j = 0; st == LOOM_OK && j < J; j++) {
        const int64_t f = e->dp_features[j], v0 = in->value_start[f * B], n = in->value_start[(f + 1) * B] - v0;
        if (n > 0)
            memcpy(gdp + at * D, gy + v0 * D, (size_t)(n * D) * sizeof *gdp);
        at += n;
    }
    if (st == LOOM_OK) {
        MPI_Request req;
        st = MPI_Iallgatherv(gdp, cnt[e->c.rank], MPI_FLOAT, agdp, cnt, dis, MPI_FLOAT, e->c.comm, &req) == MPI_SUCCESS
                 ? shard_wait((shard_comm *)&e->c, &req, "MPI_Iallgatherv (data-parallel gradients)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgatherv failed", e->c.name, e->c.rank);
    }
    if (st == LOOM_OK)
        st = sec_single_offsets(&dpb, J, W * B, &rows, &off);
    if (st == LOOM_OK && rows > 0 && (g = calloc((size_t)(rows * DD), sizeof *g)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int q = 0; st == LOOM_OK && rows > 0 && q < W; q++) {
        const float *src = agdp + dis[q];
        for (int64_t j = 0; j < J; j++) {
            const int64_t base = j * W * B, col = e->dp_col[e->dp_features[j]];
            for (int64_t i = dpb.offsets[base + q * B] - dpb.offsets[base];
                 i < dpb.offsets[base + (q + 1) * B] - dpb.offsets[base]; i++, src += D)
                memcpy(g + i * DD + col, src, (size_t)D * sizeof *g);
        }
    }
    if (st == LOOM_OK && rows > 0)
        st = step(call, e, e->dp_tbe, &dpb, off, J * rows, g, rows, DD);
    shard_batch_free(&dpb);
    free(cnt);
    free(off);
    free(gdp);
    free(agdp);
    free(g);
    return st;
}

loom_status rec_sec_backward(loom_call *call)
{
    rec_sebc *e = call->object;
    const int me = e->c.rank;
    const loom_tensor *kin[4] = { call->inputs[SEC_IN_VALUES], call->inputs[SEC_IN_LENGTHS], NULL, NULL };
    loom_call kc = *call;
    kc.inputs = kin;
    kc.n_inputs = 4;
    shard_input in = { 0 };
    loom_status st = shard_input_check(&kc, e, 0, &in);
    const loom_tensor *grad = call->inputs[SEC_IN_GRAD];
    const int64_t D = e->embedding_dim[0];
    char b1[96];
    if (st == LOOM_OK && (grad == NULL || loom_tensor_dtype_of(grad) != LOOM_DTYPE_F32 || grad->ndim != 2 ||
                          grad->shape[0] != in.n_values || grad->shape[1] != D || !loom_is_contiguous(grad)))
        st = pk_host->fail(LOOM_EINVAL, "%s: 'grad' is %s: it must be the gradient of the forward's values, a "
                           "contiguous f32 [N = %lld ids, D = %lld]", e->c.name,
                           grad ? pk_describe(pk_host, grad, b1, sizeof b1) : "missing", (long long)in.n_values,
                           (long long)D);
    if ((st = shard_input_agree(e, st, &in)) != LOOM_OK)
        return st;
    const float *gy = in.n_values * D > 0 ? loom_data(grad) : NULL;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me];
    shard_batch batch = { 0 };
    sec_exchange x = { 0 };
    float *sbuf = NULL, *rbuf = NULL, *gl = NULL;
    if ((st = shard_kjt_all_to_all(e, &in, &batch)) == LOOM_OK)
        st = sec_exchange_plan(e, &in, &batch, &x);
    if (st == LOOM_OK) {
        sbuf = malloc((size_t)(x.own_total > 0 ? x.own_total : 1) * sizeof *sbuf);
        rbuf = malloc((size_t)(x.shd_total > 0 ? x.shd_total : 1) * sizeof *rbuf);
        gl = calloc((size_t)(x.rows * LD > 0 ? x.rows * LD : 1), sizeof *gl);
        if (!sbuf || !rbuf || !gl)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    if (st == LOOM_OK) {
        if (gy)
            sec_pack_own(e, &in, &x, (float *)gy, sbuf, 1);
        MPI_Request req;
        st = MPI_Ialltoallv(sbuf, x.own_cnt, x.own_dis, MPI_FLOAT, rbuf, x.shd_cnt, x.shd_dis, MPI_FLOAT, e->c.comm,
                            &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (sequence embedding gradients)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", e->c.name, me);
    }
    if (st == LOOM_OK && e->tbe && P > 0 && x.rows > 0) {
        sec_pack_shard(e, &batch, &x, gl, rbuf, 0);
        st = step(call, e, e->tbe, &batch, x.offsets, P * x.rows, gl, x.rows, LD);
    }
    if (st == LOOM_OK && e->dp_tbe)
        st = dp_step(call, e, &in, gy);
    shard_batch_free(&batch);
    sec_exchange_free(&x);
    shard_input_free(&in);
    free(sbuf);
    free(rbuf);
    free(gl);
    return st;
}
