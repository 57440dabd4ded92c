/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_allreduce.c - rec.sharded_embedding_bag_collection_allreduce:
** the sum over every rank of the collection's communicator of one f32
** tensor, the same shape on every rank. A sharded model's data-parallel
** dense modules (rec.dlrm with a plan) reduce their gradients through it
** before their optimizer step, as DistributedDataParallel does.
**
** The sum is taken as the data-parallel tables' gradients are: every
** rank's tensor all-gathered (MPI_Iallgather, waited for with the
** collection's deadline), then added in rank order on each rank. Every
** rank gets the same bits, so the replicas of the dense modules never
** drift apart; a tree or ring MPI_Allreduce may round differently on
** different ranks. Collective: every rank calls it.
*/
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "shard.h"

loom_status rec_sebc_allreduce(loom_call *call)
{
    rec_sebc *e = call->object;
    const loom_tensor *x = call->inputs[0];
    const int W = e->c.size;
    char b1[96];
    if (!loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "%s: 'x' is %s: it must be contiguous", call->schema->name,
                             pk_describe(pk_host, x, b1, sizeof b1));
    if (e->c.broken)
        return pk_host->fail(LOOM_EIO, "%s: rank %d: the communicator failed in an earlier call", call->schema->name,
                             e->c.rank);
    const int64_t n = loom_numel(x);
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &out);
    if (st != LOOM_OK)
        return st;
    /* every rank's count first: a rank with another size is refused on all of them */
    int64_t *counts = malloc(sizeof *counts * (size_t)W);
    float *all = NULL;
    if (!counts)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", call->schema->name);
    MPI_Request req;
    int rc = MPI_Iallgather(&n, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, e->c.comm, &req);
    st = rc == MPI_SUCCESS ? shard_wait(&e->c, &req, "MPI_Iallgather (allreduce sizes)")
                           : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", call->schema->name,
                                           e->c.rank);
    for (int r = 0; r < W && st == LOOM_OK; r++)
        if (counts[r] != n)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d: rank %d reduces %lld floats, this rank %lld: the same "
                               "tensor on every rank", call->schema->name, e->c.rank, r, (long long)counts[r],
                               (long long)n);
    int cn = 0;
    if (st == LOOM_OK)
        st = shard_count(e->c.name, n, "the allreduce's tensor", &cn);
    if (st == LOOM_OK && n > 0 && (all = malloc(sizeof *all * (size_t)(n * W))) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", call->schema->name);
    if (st == LOOM_OK && n > 0) {
        rc = MPI_Iallgather(loom_data(x), cn, MPI_FLOAT, all, cn, MPI_FLOAT, e->c.comm, &req);
        st = rc == MPI_SUCCESS ? shard_wait(&e->c, &req, "MPI_Iallgather (allreduce)")
                               : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", call->schema->name,
                                               e->c.rank);
    }
    if (st == LOOM_OK && n > 0) {
        float *o = loom_data(out);
        memcpy(o, all, sizeof *o * (size_t)n);
        for (int r = 1; r < W; r++)
            for (int64_t i = 0; i < n; i++)
                o[i] += all[(int64_t)r * n + i];
    }
    free(all);
    free(counts);
    return st;
}
