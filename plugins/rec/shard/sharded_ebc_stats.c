/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_stats.c - how much of the sharded collection's step is
** communication: the forward and backward methods are registered through
** the wrappers here, which record each call's wall time (MPI_Wtime, entry
** to return) and, of it, the time spent completing collectives (the
** communicator's shard_wait clock: from the wait's first MPI_Test until the
** collective is done), per method, on this rank. The method
** rec.sharded_embedding_bag_collection_stats returns the record as f64
** [4, 4] and with reset=true zeroes it: rows forward, backward and
** prefetch (rec.sharded_embedding_bag_collection_prefetch, every stage),
** columns calls, wall_s, comm_s, collectives; row 3 the forward's input:
** the KJT all-to-alls the forwards ran, the forwards that took the input a
** prefetch had distributed instead (sharded_ebc_prefetch.c), the bytes
** this rank sent in the forwards' KJT all-to-alls, and the bytes the
** reuse did not send again.
**
** What comm_s holds: the all-to-alls, reduce-scatters and all-gathers of
** the method, and the input agreement (the batch-size all-gather), waits
** for slower peers included: a rank that finishes its lookups first waits
** inside the next collective, as in torchrec's all-to-all timings. Posting
** a non-blocking collective (microseconds) is outside it. The cost: two
** clock reads per collective and two per call. Local: no rank talks to
** another to read its record.
*/
#include "shard.h"

static loom_status timed(loom_call *call, loom_status (*method)(loom_call *), rec_sebc_method_stats *m)
{
    rec_sebc *e = call->object;
    const double t0 = MPI_Wtime(), c0 = e->c.wait_s;
    const int64_t n0 = e->c.n_waits;
    const loom_status st = method(call);
    m->calls++;
    m->wall_s += MPI_Wtime() - t0;
    m->comm_s += e->c.wait_s - c0;
    m->collectives += e->c.n_waits - n0;
    return st;
}

loom_status rec_sebc_forward_timed(loom_call *call)
{
    return timed(call, rec_sebc_forward, &((rec_sebc *)call->object)->stats.forward);
}

loom_status rec_sebc_backward_timed(loom_call *call)
{
    return timed(call, rec_sebc_backward, &((rec_sebc *)call->object)->stats.backward);
}

loom_status rec_sebc_prefetch_timed(loom_call *call, loom_status (*prefetch)(loom_call *))
{
    return timed(call, prefetch, &((rec_sebc *)call->object)->stats.prefetch);
}

loom_status rec_sebc_stats_read(loom_call *call)
{
    rec_sebc *e = call->object;
    const int64_t shape[2] = { 4, 4 };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    double *o = loom_data(out);
    const rec_sebc_method_stats *m[3] = { &e->stats.forward, &e->stats.backward, &e->stats.prefetch };
    for (int i = 0; i < 3; i++) {
        o[4 * i + 0] = (double)m[i]->calls;
        o[4 * i + 1] = m[i]->wall_s;
        o[4 * i + 2] = m[i]->comm_s;
        o[4 * i + 3] = (double)m[i]->collectives;
    }
    const rec_sebc_input_stats *in = &e->stats.input;
    o[12] = (double)in->kjt_all_to_alls;
    o[13] = (double)in->kjt_reused;
    o[14] = in->kjt_bytes;
    o[15] = in->kjt_bytes_saved;
    if (call->attrs[0].u.b)
        e->stats = (rec_sebc_stats){ 0 };
    return LOOM_OK;
}
