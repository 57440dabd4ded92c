/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_weight.c - rec.sharded_embedding_bag_collection_weight: one
** table of the sharded collection by name, whole, as it stands after
** training: what torchrec's named_parameters() / state_dict() give for
** embedding_bags.<table>.weight of a sharded module (there a
** ShardedTensor; here its shards gathered). The same attribute and output
** as rec.fused_embedding_bag_collection_weight, so a model that saves
** through one (rec.dlrm_save) saves through the other.
**
** A data-parallel table is read from this rank's replica (every replica
** holds the same bits). A sharded one: each rank reads its shards from its
** fbgemm.tbe (fbgemm.tbe_state), places them in a table-sized buffer, the
** buffers are all-gathered (MPI_Iallgather, with the collection's
** deadline), and each shard is taken from its owner's buffer. Collective
** for a sharded table: every rank calls it with the same table.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* Local table k of obj (fbgemm.tbe_state 'weight'): a new tensor. */
static loom_status tbe_table(loom_call *call, loom_object *obj, int64_t k, loom_tensor **w)
{
    const loom_op *state = pk_host->op_find("fbgemm.tbe_state");
    if (!state)
        return pk_host->fail(LOOM_ENOENT, "%s: fbgemm.tbe_state is not loaded", call->schema->name);
    const loom_named_attr attrs[2] = {
        { "name", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 6, .u.s = "weight" } },
        { "table", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u.i = k } },
    };
    *w = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = state, .n_outputs = 1, .outputs = w, .n_attrs = 2,
                        .attrs = attrs, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status rec_sebc_weight(loom_call *call)
{
    rec_sebc *e = call->object;
    const char *name = call->attrs[0].u.s;
    const rec_plan *p = e->plan;
    const int me = e->c.rank, W = e->c.size;
    int64_t t = -1;
    for (int64_t i = 0; i < e->n_tables && t < 0; i++)
        if (strcmp(e->table_names[i], name) == 0)
            t = i;
    if (t < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: the collection has no table '%s'", call->schema->name, name);
    const int64_t E = e->num_embeddings[t], D = e->embedding_dim[t];
    const int64_t shape[2] = { E, D };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    float *o = E * D > 0 ? loom_data(out) : NULL;
    /* this rank's local table index of its first shard of t in its kernel's TBE (each numbers the
    ** rank's shards of its kernel in table order: shard_groups.c), or t's index among the
    ** data-parallel tables */
    const int cached = p->tables[t].compute_kernel == REC_KERNEL_FUSED_UVM_CACHING;
    int64_t k = 0;
    for (int64_t u = 0; u < t; u++) {
        if (p->tables[t].sharding_type == REC_SHARD_DATA_PARALLEL)
            k += p->tables[u].sharding_type == REC_SHARD_DATA_PARALLEL;
        else if ((p->tables[u].compute_kernel == REC_KERNEL_FUSED_UVM_CACHING) == cached)
            for (int64_t s = 0; s < p->tables[u].n_shards; s++)
                k += p->tables[u].shards[s].rank == me;
    }
    loom_object *tbe = e->n_groups == 2 && cached ? e->tbe_cached : e->tbe;
    if (p->tables[t].sharding_type == REC_SHARD_DATA_PARALLEL) {
        loom_tensor *w = NULL;
        st = tbe_table(call, e->dp_tbe, k, &w);
        if (st == LOOM_OK && o)
            memcpy(o, loom_data(w), sizeof *o * (size_t)(E * D));
        if (w)
            pk_host->tensor_free(w);
        return st;
    }
    if (e->c.broken)
        return pk_host->fail(LOOM_EIO, "%s: rank %d: the communicator failed in an earlier call", call->schema->name,
                             me);
    int n = 0;
    if ((st = shard_count(e->c.name, E * D, "the table", &n)) != LOOM_OK)
        return st;
    float *mine = calloc((size_t)(E * D > 0 ? E * D : 1), sizeof *mine);
    float *all = malloc(sizeof *all * (size_t)(E * D > 0 ? E * D * W : 1));
    if (!mine || !all) {
        /* no buffers to take part with: the peers' gather fails them at its deadline, naming this rank */
        free(mine);
        free(all);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for table '%s'", call->schema->name, name);
    }
    for (int64_t s = 0; s < p->tables[t].n_shards && st == LOOM_OK; s++) {
        const rec_plan_shard *sh = &p->tables[t].shards[s];
        if (sh->rank != me)
            continue;
        loom_tensor *w = NULL;
        st = tbe_table(call, tbe, k++, &w);
        if (st == LOOM_OK) {
            const float *src = loom_data(w);
            for (int64_t i = 0; i < sh->rows; i++)
                memcpy(mine + (sh->row_offset + i) * D + sh->col_offset, src + i * sh->cols,
                       sizeof *mine * (size_t)sh->cols);
        }
        if (w)
            pk_host->tensor_free(w);
    }
    /* every rank takes part in the gather, even one whose read failed: its peers must not wait in vain */
    MPI_Request req;
    int rc = MPI_Iallgather(mine, n, MPI_FLOAT, all, n, MPI_FLOAT, e->c.comm, &req);
    loom_status gst = rc == MPI_SUCCESS ? shard_wait(&e->c, &req, "MPI_Iallgather (table shards)")
                                        : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed",
                                                        call->schema->name, me);
    if (st == LOOM_OK)
        st = gst;
    for (int64_t s = 0; s < p->tables[t].n_shards && st == LOOM_OK; s++) {
        const rec_plan_shard *sh = &p->tables[t].shards[s];
        const float *src = all + sh->rank * E * D;
        for (int64_t i = 0; i < sh->rows; i++)
            memcpy(o + (sh->row_offset + i) * D + sh->col_offset, src + (sh->row_offset + i) * D + sh->col_offset,
                   sizeof *o * (size_t)sh->cols);
    }
    free(mine);
    free(all);
    return st;
}
