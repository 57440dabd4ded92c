/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ec_forward.c - the method rec.sharded_embedding_collection
** (shard.h): this rank's KJT in (values, lengths [F * B], in the
** collection's feature order), and out what the unsharded
** rec.embedding_collection returns for these samples: one JaggedTensor per
** feature as jagged rows, values [N, D] (the row of every id, in input
** order), values_offsets [F + 1], lengths [F * B] with lengths_offsets
** [F + 1], and the keys.
**
** The ids go to their shards by the bag collection's KJT all-to-all
** (MPI_Alltoallv of lengths, then ids; row-wise ids bucketised by row
** range), each shard looks them up as bags of one id on its local
** fbgemm.tbe, and the rows come back by one MPI_Alltoallv
** (sharded_ec_dist.c). Data-parallel tables look the local ids up on the
** local replica. Every value is a copied row, so the output is the
** unsharded one bit for bit. Collective: every rank calls it.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* fbgemm.tbe on obj: ids as bags of one (offsets [bags + 1]); a new output [rows, cols]. */
static loom_status lookup(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b,
                          int64_t *offsets, int64_t bags, loom_tensor **y)
{
    int64_t ishape[1] = { b->n_indices }, oshape[1] = { bags + 1 };
    loom_tensor ti = shard_view(b->indices, SHARD_I64, 1, ishape);
    loom_tensor to = shard_view(offsets, SHARD_I64, 1, oshape);
    const loom_tensor *ins[3] = { &ti, &to, NULL };
    *y = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = y, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

/* Output k, i64 [n], from data. */
static loom_status write_i64(loom_call *call, int32_t k, int64_t n, const int64_t *data)
{
    loom_tensor *t;
    int64_t shape[1] = { n };
    loom_status st = pk_host->alloc_output(call, k, LOOM_DTYPE_I64, 1, shape, &t);
    if (st == LOOM_OK && n > 0)
        memcpy(loom_data(t), data, (size_t)n * sizeof *data);
    return st;
}

/* The outputs besides the rows: offsets, lengths, keys. */
static loom_status write_index(loom_call *call, const rec_sebc *e, const shard_input *in)
{
    const int64_t F = e->n_features, B = in->B;
    int64_t *o = malloc((size_t)(F + 1) * sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int64_t f = 0; f <= F; f++)
        o[f] = in->value_start[f * B];
    loom_status st = write_i64(call, SEC_OUT_VALUES_OFFSETS, F + 1, o);
    for (int64_t f = 0; f <= F; f++)
        o[f] = f * B;
    if (st == LOOM_OK)
        st = write_i64(call, SEC_OUT_LENGTHS, F * B, in->lengths);
    if (st == LOOM_OK)
        st = write_i64(call, SEC_OUT_LENGTHS_OFFSETS, F + 1, o);
    free(o);
    loom_tensor *k;
    int64_t shape[1] = { e->keys_offsets[F] };
    if (st == LOOM_OK && (st = pk_host->alloc_output(call, SEC_OUT_KEYS, LOOM_DTYPE_U8, 1, shape, &k)) == LOOM_OK &&
        shape[0] > 0)
        memcpy(loom_data(k), e->keys, (size_t)shape[0]);
    if (st == LOOM_OK)
        st = write_i64(call, SEC_OUT_KEYS_OFFSETS, F + 1, e->keys_offsets);
    return st;
}

loom_status rec_sec_forward(loom_call *call)
{
    rec_sebc *e = call->object;
    const int me = e->c.rank;
    /* the shared input checks read the bag collection's input slots */
    const loom_tensor *kin[4] = { call->inputs[SEC_IN_VALUES], call->inputs[SEC_IN_LENGTHS], NULL, NULL };
    loom_call kc = *call;
    kc.inputs = kin;
    kc.n_inputs = 4;
    shard_input in;
    loom_status st = shard_input_read(&kc, e, 0, &in);
    if (st != LOOM_OK)
        return st;
    const int64_t B = in.B, N = in.n_values, D = e->embedding_dim[0];
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me];
    loom_tensor *out = NULL, *y = NULL, *ydp = NULL;
    int64_t oshape[2] = { N, D };
    shard_batch batch = { 0 }, dpb = { 0 };
    sec_exchange x = { 0 };
    float *sbuf = NULL, *rbuf = NULL;
    int64_t *dp_off = NULL;
    if ((st = pk_host->alloc_output(call, SEC_OUT_VALUES, LOOM_DTYPE_F32, 2, oshape, &out)) == LOOM_OK)
        st = shard_kjt_all_to_all(e, &in, &batch);
    float *o = st == LOOM_OK && N * D > 0 ? loom_data(out) : NULL;
    if (st == LOOM_OK)
        st = sec_exchange_plan(e, &in, &batch, &x);
    if (st == LOOM_OK && e->tbe && P > 0 && x.rows > 0)
        st = lookup(call, e, e->tbe, &batch, x.offsets, P * x.rows, &y);
    if (st == LOOM_OK) {
        sbuf = malloc((size_t)(x.shd_total > 0 ? x.shd_total : 1) * sizeof *sbuf);
        rbuf = malloc((size_t)(x.own_total > 0 ? x.own_total : 1) * sizeof *rbuf);
        if (!sbuf || !rbuf)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    if (st == LOOM_OK) {
        if (y != NULL)
            sec_pack_shard(e, &batch, &x, loom_data(y), sbuf, 1);
        MPI_Request req;
        st = MPI_Ialltoallv(sbuf, x.shd_cnt, x.shd_dis, MPI_FLOAT, rbuf, x.own_cnt, x.own_dis, MPI_FLOAT, e->c.comm,
                            &req) == MPI_SUCCESS
                 ? shard_wait(&e->c, &req, "MPI_Ialltoallv (sequence embeddings)")
                 : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv failed", e->c.name, me);
    }
    if (st == LOOM_OK && o)
        sec_pack_own(e, &in, &x, o, rbuf, 0);

    /* data-parallel: the local ids on the local replica */
    if (st == LOOM_OK && e->dp_tbe) {
        int64_t rows = 0;
        if ((st = shard_dp_batch(e, &in, 0, &dpb)) == LOOM_OK)
            st = sec_single_offsets(&dpb, e->n_dp_features, B, &rows, &dp_off);
        if (st == LOOM_OK && rows > 0)
            st = lookup(call, e, e->dp_tbe, &dpb, dp_off, e->n_dp_features * rows, &ydp);
        for (int64_t j = 0; st == LOOM_OK && rows > 0 && j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], v0 = in.value_start[f * B], n = in.value_start[(f + 1) * B] - v0;
            const float *yd = loom_data(ydp);
            for (int64_t i = 0; i < n; i++)
                memcpy(o + (v0 + i) * D, yd + i * e->dp_d + e->dp_col[f], (size_t)D * sizeof *o);
        }
    }
    if (st == LOOM_OK)
        st = write_index(call, e, &in);
    if (y)
        pk_host->tensor_free(y);
    if (ydp)
        pk_host->tensor_free(ydp);
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    sec_exchange_free(&x);
    shard_input_free(&in);
    free(sbuf);
    free(rbuf);
    free(dp_off);
    return st;
}
