/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_comm.c - the sharded collections' MPI communicator and the bounded
** wait of every collective (shard.h).
**
** A rank that dies, or stops calling, leaves the others' collectives
** pending forever: MPI has no timeout of its own. So every collective here
** is the non-blocking form (MPI_Ialltoallv, MPI_Ireduce_scatter_block,
** ...), completed by shard_wait: MPI_Test until done, back to back for the
** first 200 us, then sleeping between tests (a few microseconds, growing
** to a millisecond, so waiting ranks leave the cores to the ones still
** computing), and an error naming the
** collective, this rank and the deadline once timeout_s has passed. The
** communicator carries MPI_ERRORS_RETURN, so a broken connection to a dead
** peer is an error returned too, not an abort. After either, the
** communicator is marked broken and every later call is refused (a timed
** out collective cannot be cancelled).
**
** When a process exits without MPI_Finalize, OpenMPI's launcher also ends
** the job's other processes (with a message naming the rank that exited);
** both paths end every rank with a non-zero status, neither hangs.
*/
#include <stdio.h>
#include <time.h>

#include "shard.h"

/* How long shard_wait polls without sleeping. */
#define SPIN_S 200e-6

/* 1 when this pack called MPI_Init_thread (then it finalises at unload). */
static int pack_initialised_mpi;

void shard_mpi_fini(void)
{
    int init = 0, fin = 0;
    if (!pack_initialised_mpi)
        return;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Finalize();
    pack_initialised_mpi = 0;
}

static loom_status mpi_fail(const char *who, int rc, const char *what, int rank)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return pk_host->fail(LOOM_EIO, "%s: rank %d: %s failed: %s", who, rank, what, msg);
}

loom_status shard_comm_open(shard_comm *c, const char *name, double timeout_s)
{
    int init = 0, fin = 0;
    c->name = name;
    c->comm = MPI_COMM_NULL;
    c->timeout_s = timeout_s;
    c->broken = 0;
    c->wait_s = 0.0;
    c->n_waits = 0;
    MPI_Finalized(&fin);
    if (fin)
        return pk_host->fail(LOOM_EINVAL, "%s: MPI is finalised already in this process", c->name);
    MPI_Initialized(&init);
    if (!init) {
        /* the core's pool may call in from a worker thread, never from two at once */
        int provided = 0;
        const int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c->name, rc, "MPI_Init_thread", -1);
        pack_initialised_mpi = 1;
    }
    int world_rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Request req;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &c->comm, &req);
    if (rc != MPI_SUCCESS)
        return mpi_fail(c->name, rc, "MPI_Comm_idup", world_rank);
    c->rank = world_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    loom_status st = shard_wait(c, &req, "MPI_Comm_idup (setup)");
    if (st != LOOM_OK)
        return st;
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    return LOOM_OK;
}

void shard_comm_close(shard_comm *c)
{
    int fin = 0;
    MPI_Finalized(&fin);
    /* a broken communicator has a collective pending: it is left to MPI's exit */
    if (c->comm != MPI_COMM_NULL && !fin && !c->broken)
        MPI_Comm_free(&c->comm);
    c->comm = MPI_COMM_NULL;
}

loom_status shard_wait(shard_comm *c, MPI_Request *req, const char *what)
{
    const double start = MPI_Wtime(), deadline = start + c->timeout_s;
    long sleep_ns = 2000;
    for (;;) {
        int done = 0;
        const int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            c->broken = 1;
            return mpi_fail(c->name, rc, what, c->rank);
        }
        if (done) {
            /* the stats' clock: the wait, from its first test to completion */
            c->wait_s += MPI_Wtime() - start;
            c->n_waits++;
            return LOOM_OK;
        }
        if (MPI_Wtime() > deadline) {
            c->broken = 1;
            return pk_host->fail(LOOM_EIO, "%s: rank %d of %d: %s did not complete within %g s (timeout_s): a "
                                 "peer rank died or stopped taking part; the communicator is unusable now",
                                 c->name, c->rank, c->size, what, c->timeout_s);
        }
        /* the first SPIN_S: test again at once. OpenMPI's non-blocking collectives
        ** advance a round per test, so even a collective whose peers are all there
        ** takes several tests; a sleep between them costs a scheduler wake-up each
        ** (milliseconds on a loaded machine: 70% of a 1-rank forward's wall time
        ** was such sleeps, tools/bench/rec_dist) */
        if (MPI_Wtime() - start < SPIN_S)
            continue;
        struct timespec ts = { 0, sleep_ns };
        nanosleep(&ts, NULL);
        if (sleep_ns < 1000000)
            sleep_ns *= 2;
    }
}

loom_status shard_count(const char *who, int64_t n, const char *what, int *out)
{
    if (n < 0 || n > 2147483647)
        return pk_host->fail(LOOM_EINVAL, "%s: %s: %lld elements exceed what one MPI message counts (int)",
                             who, what, (long long)n);
    *out = (int)n;
    return LOOM_OK;
}
