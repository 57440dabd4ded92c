/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_nccl.c - the cuda kernel of the method
** rec.sharded_embedding_bag_collection (rec-mpi-cuda.so): the sharded
** collection's forward on GPUs, one rank per GPU, whose collectives are
** NCCL's, as torchrec runs its sharded modules over NCCL process groups.
**
** The object is the one rec-mpi.so creates (shard.h); a call whose tensors
** live on cuda device d runs here. At the first such call every rank
** checks that d is its local rank (one rank per GPU: OpenMPI's
** OMPI_COMM_WORLD_LOCAL_RANK, else the rank within
** MPI_COMM_TYPE_SHARED) and the ranks agree on their verdicts over MPI;
** rank 0 makes the NCCL id (ncclGetUniqueId), MPI_Ibcast hands it to the
** others, and ncclCommInitRankConfig (non-blocking) makes the
** communicator, kept in the object's device_state until it is destroyed.
**
** A call, on the call's stream:
**   1. the KJT's tensors come to the host (small: ids and lengths) and are
**      checked as the cpu kernel checks them (shard_input_read: the verdicts
**      and the VBE strides all-gathered over MPI, the control plane);
**   2. the KJT all-to-all (shard_kjt_pack's buffers) on NCCL: ncclAllGather
**      of every rank's id counts, then one group of ncclSend/ncclRecv per
**      peer (torchrec's all_to_all_single) of lengths, ids and weights;
**   3. the received bags, laid out as the cpu kernel lays them, are looked
**      up by fbgemm.tbe on the device (fbgemm-cuda.so's kernel, through
**      host->op_call with device tensors; it mirrors the shard's tables on
**      the device at its first call);
**   4. table- and column-wise rows back by grouped ncclSend/ncclRecv,
**      row-wise partial sums by ncclReduceScatter (each rank's block padded
**      to the largest, as NCCL reduces equal blocks), data-parallel tables
**      looked up locally; the bag rows land in the deduplicated KeyedTensor
**      and a kernel expands them to the samples (inverse_indices with VBE).
** The layouts are those of the cpu kernel (sharded_ebc_blocks.c), so both
** give the same bits for table- and column-wise tables.
**
** Every wait has the collection's deadline (timeout_s): the stream is
** polled with cudaStreamQuery and the communicator with
** ncclCommGetAsyncError (after each NCCL call too, before any work that
** reads its results is queued: the communicator is non-blocking); past the deadline, or on an asynchronous NCCL
** error, the communicator is aborted (ncclCommAbort) and the collection is
** unusable, the error naming the collective and the rank.
**
** Scope: the forward (inference; a trained table reaches the device when
** fbgemm-cuda mirrors it, at the object's first cuda lookup). The backward
** and the fused optimizer run on the cpu kernel (host tensors).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "nccl_kernels.h"
#include "shard.h"

typedef struct nccl_state {
    int device;
    ncclComm_t comm;
    int broken;            /* a collective failed or timed out: the communicator was aborted */
} nccl_state;

static void nccl_state_free(void *p)
{
    nccl_state *ns = p;
    if (ns == NULL)
        return;
    if (ns->comm != NULL && cudaSetDevice(ns->device) == cudaSuccess) {
        if (ns->broken)
            ncclCommAbort(ns->comm);
        else
            ncclCommDestroy(ns->comm);
    }
    free(ns);
}

static loom_status cuda_fail(cudaError_t c, const char *what, int rank)
{
    return pk_host->fail(LOOM_EDEVICE, "%s (cuda): rank %d: %s: %s (%s)", REC_SEBC_CLASS, rank, what,
                         cudaGetErrorString(c), cudaGetErrorName(c));
}

static loom_status nccl_fail(nccl_state *ns, ncclResult_t r, const char *what, int rank)
{
    if (ns && ns->comm && !ns->broken) {
        ns->broken = 1;
        ncclCommAbort(ns->comm);
        ns->comm = NULL;
    }
    return pk_host->fail(LOOM_EIO, "%s (cuda): rank %d: %s failed: %s (%s)", REC_SEBC_CLASS, rank, what,
                         ncclGetErrorString(r), ns && ns->comm == NULL ? "the NCCL communicator is aborted" : "");
}

/* Until the communicator's pending operations are issued (a non-blocking
** communicator's calls may return ncclInProgress: no NCCL call may follow
** until ncclCommGetAsyncError says ncclSuccess) and, with stream_too, the
** stream's work is done; or the deadline: then the communicator is
** aborted. */
static loom_status nccl_sync(rec_sebc *e, nccl_state *ns, cudaStream_t stream, int stream_too, const char *what)
{
    const double deadline = MPI_Wtime() + e->c.timeout_s;
    long sleep_ns = 2000;
    for (;;) {
        ncclResult_t async = ncclSuccess, r = ncclCommGetAsyncError(ns->comm, &async);
        if (r != ncclSuccess)
            return nccl_fail(ns, r, what, e->c.rank);
        if (async != ncclSuccess && async != ncclInProgress)
            return nccl_fail(ns, async, what, e->c.rank);
        if (!stream_too && async == ncclSuccess)
            return LOOM_OK;
        const cudaError_t c = async == ncclSuccess ? cudaStreamQuery(stream) : cudaErrorNotReady;
        if (c == cudaSuccess && async == ncclSuccess)
            return LOOM_OK;
        if (c != cudaSuccess && c != cudaErrorNotReady) {
            ns->broken = 1;
            return cuda_fail(c, what, e->c.rank);
        }
        if (MPI_Wtime() > deadline) {
            ns->broken = 1;
            ncclCommAbort(ns->comm);
            ns->comm = NULL;
            return pk_host->fail(LOOM_EIO, "%s (cuda): rank %d of %d: %s did not complete within %g s (timeout_s): "
                                 "a peer rank died or stopped taking part; the NCCL communicator is aborted",
                                 REC_SEBC_CLASS, e->c.rank, e->c.size, what, e->c.timeout_s);
        }
        struct timespec ts = { 0, sleep_ns };
        nanosleep(&ts, NULL);
        if (sleep_ns < 1000000)
            sleep_ns *= 2;
    }
}

static loom_status nccl_wait(rec_sebc *e, nccl_state *ns, cudaStream_t stream, const char *what)
{
    return nccl_sync(e, ns, stream, 1, what);
}

/* This process's rank among the ranks of its machine. */
static int local_rank(const rec_sebc *e)
{
    const char *s = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (s != NULL && *s)
        return atoi(s);
    MPI_Comm local;
    int r = -1;
    if (MPI_Comm_split_type(e->c.comm, MPI_COMM_TYPE_SHARED, e->c.rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &r);
        MPI_Comm_free(&local);
    }
    return r;
}

/* The communicator at the first cuda call (collective, see the header). */
static loom_status state_get(rec_sebc *e, int device, nccl_state **out)
{
    nccl_state *ns = e->device_state;
    if (ns != NULL) {
        if (ns->broken || ns->comm == NULL)
            return pk_host->fail(LOOM_EIO, "%s (cuda): rank %d: an earlier NCCL collective failed; the collection "
                                 "is unusable on cuda", REC_SEBC_CLASS, e->c.rank);
        if (ns->device != device)
            return pk_host->fail(LOOM_EINVAL, "%s (cuda): rank %d: this collection runs on cuda:%d (its NCCL "
                                 "communicator), the call's tensors are on cuda:%d", REC_SEBC_CLASS, e->c.rank,
                                 ns->device, device);
        *out = ns;
        return LOOM_OK;
    }
    int n_dev = 0;
    const int lr = local_rank(e);
    loom_status st = LOOM_OK;
    cudaError_t c = cudaGetDeviceCount(&n_dev);
    if (c != cudaSuccess)
        st = cuda_fail(c, "cudaGetDeviceCount", e->c.rank);
    else if (lr < 0 || lr >= n_dev || device != lr)
        st = pk_host->fail(LOOM_EINVAL, "%s (cuda): rank %d is local rank %d of its machine, which has %d GPUs, and "
                           "was called on cuda:%d: one rank per GPU, each on the GPU of its local rank",
                           REC_SEBC_CLASS, e->c.rank, lr, n_dev, device);
    else if ((c = cudaSetDevice(device)) != cudaSuccess)
        st = cuda_fail(c, "cudaSetDevice", e->c.rank);
    /* every rank's verdict before any rank waits on NCCL */
    int mine = st == LOOM_OK ? 0 : 1, *all = malloc((size_t)e->c.size * sizeof *all);
    if (all == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    MPI_Request req;
    loom_status wst = MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, e->c.comm, &req) == MPI_SUCCESS
                          ? shard_wait(&e->c, &req, "MPI_Iallgather (NCCL setup)")
                          : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", REC_SEBC_CLASS, e->c.rank);
    if (st == LOOM_OK)
        st = wst;
    for (int q = 0; st == LOOM_OK && q < e->c.size; q++)
        if (all[q])
            st = pk_host->fail(LOOM_EINVAL, "%s (cuda): rank %d: rank %d cannot take part in the NCCL communicator "
                               "(its own error says why)", REC_SEBC_CLASS, e->c.rank, q);
    free(all);
    if (st != LOOM_OK)
        return st;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = ncclSuccess;
    if (e->c.rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess)
        memset(&id, 0, sizeof id);   /* the zero id tells the others to fail */
    if ((st = MPI_Ibcast(&id, (int)sizeof id, MPI_BYTE, 0, e->c.comm, &req) == MPI_SUCCESS
                  ? shard_wait(&e->c, &req, "MPI_Ibcast (NCCL id)")
                  : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ibcast failed", REC_SEBC_CLASS, e->c.rank)) != LOOM_OK)
        return st;
    static const ncclUniqueId zero;
    if (r != ncclSuccess || memcmp(&id, &zero, sizeof id) == 0)
        return pk_host->fail(LOOM_EIO, "%s (cuda): rank %d: rank 0's ncclGetUniqueId failed%s%s", REC_SEBC_CLASS,
                             e->c.rank, r != ncclSuccess ? ": " : "", r != ncclSuccess ? ncclGetErrorString(r) : "");
    if ((ns = calloc(1, sizeof *ns)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    ns->device = device;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;      /* every wait is bounded (nccl_wait) */
    r = ncclCommInitRankConfig(&ns->comm, e->c.size, id, e->c.rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress) {
        free(ns);
        return nccl_fail(NULL, r, "ncclCommInitRankConfig", e->c.rank);
    }
    e->device_state = ns;
    e->device_state_free = nccl_state_free;
    if ((st = nccl_sync(e, ns, NULL, 0, "ncclCommInitRankConfig")) != LOOM_OK)
        return st;
    *out = ns;
    return LOOM_OK;
}

/* ------------------------------------------------- device buffers of a call */

#define MAX_BUFS 24

typedef struct dev_bufs {
    void *p[MAX_BUFS];
    int n;
} dev_bufs;

static loom_status dev_alloc(dev_bufs *b, size_t bytes, void **out, int rank)
{
    *out = NULL;
    if (b->n == MAX_BUFS)
        return pk_host->fail(LOOM_EINVAL, "%s (cuda): internal: too many device buffers", REC_SEBC_CLASS);
    const cudaError_t c = cudaMalloc(out, bytes > 0 ? bytes : 1);
    if (c != cudaSuccess)
        return cuda_fail(c, "cudaMalloc", rank);
    b->p[b->n++] = *out;
    return LOOM_OK;
}

static void dev_free(dev_bufs *b)
{
    for (int i = 0; i < b->n; i++)
        cudaFree(b->p[i]);
    b->n = 0;
}

/* One all-to-allv as one NCCL group of send/recv pairs (counts and
** displacements in elements of esize bytes). */
static ncclResult_t alltoallv(nccl_state *ns, const void *send, const int64_t *scnt, const int64_t *sdis, void *recv,
                              const int64_t *rcnt, const int64_t *rdis, ncclDataType_t dt, size_t esize, int W,
                              cudaStream_t stream)
{
    for (int q = 0; q < W; q++) {
        ncclResult_t r = ncclSuccess;
        if (scnt[q] > 0)
            r = ncclSend((const char *)send + (size_t)sdis[q] * esize, (size_t)scnt[q], dt, q, ns->comm, stream);
        if ((r == ncclSuccess || r == ncclInProgress) && rcnt[q] > 0)
            r = ncclRecv((char *)recv + (size_t)rdis[q] * esize, (size_t)rcnt[q], dt, q, ns->comm, stream);
        if (r != ncclSuccess && r != ncclInProgress)
            return r;
    }
    return ncclSuccess;
}

static loom_tensor dev_view(void *data, loom_dl_dtype dt, int32_t ndim, int64_t *shape, int device)
{
    loom_tensor t = shard_view(data, dt, ndim, shape);
    t.device = (loom_dl_device){ LOOM_DEVICE_CUDA, device };
    return t;
}

/* fbgemm.tbe (its cuda kernel) on the device batch: a new device output. */
static loom_status lookup(loom_call *call, const rec_sebc *e, loom_object *obj, int device, int64_t *d_idx,
                          int64_t *d_off, float *d_psw, int64_t n_indices, int64_t bags, loom_tensor **y)
{
    int64_t ishape[1] = { n_indices }, oshape[1] = { bags + 1 };
    loom_tensor ti = dev_view(d_idx, SHARD_I64, 1, ishape, device);
    loom_tensor to = dev_view(d_off, SHARD_I64, 1, oshape, device);
    loom_tensor tw = dev_view(d_psw, SHARD_F32, 1, ishape, device);
    const loom_tensor *ins[3] = { &ti, &to, d_psw ? &tw : NULL };
    *y = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = y, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

#define CU(x, what) do { cudaError_t c_ = (x); if (c_ != cudaSuccess) { st = cuda_fail(c_, what, me); goto done; } } while (0)
#define NC(x, what) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess && r_ != ncclInProgress) { \
    st = nccl_fail(ns, r_, what, me); goto done; } } while (0)
#define OK(x) do { if ((st = (x)) != LOOM_OK) goto done; } while (0)
#define DEV(ptr, n) OK(dev_alloc(&db, (size_t)(n) * sizeof *(ptr), (void **)&(ptr), me))
#define H2D(dst, src, n) CU(cudaMemcpyAsync(dst, src, (size_t)(n) * sizeof *(src), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync")
#define D2H(dst, src, n) CU(cudaMemcpyAsync(dst, src, (size_t)(n) * sizeof *(src), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync")

enum { N_IN = 5 };

loom_status rec_sebc_forward_nccl(loom_call *call)
{
    rec_sebc *e = call->object;
    const int W = e->c.size, me = e->c.rank, device = call->ctx->device.device_id;
    cudaStream_t stream = call->ctx->stream;
    const int64_t F = e->n_features, D = e->feature_col[F];
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    nccl_state *ns = NULL;
    dev_bufs db = { .n = 0 };
    shard_input in = { 0 };
    shard_kjt_parts k = { 0 };
    shard_batch batch = { 0 }, dpb = { 0 };
    shard_blocks bl = { 0 };
    loom_tensor host[N_IN], *y = NULL, *ydp = NULL, *out = NULL;
    const loom_tensor *hin[N_IN] = { NULL };
    void *hbuf[N_IN] = { NULL };
    int64_t *all_v = NULL, *vrecv = NULL, *kts = NULL, *rlen = NULL, *rval = NULL;
    float *rwt = NULL;
    loom_status st;
    if (e->c.broken)
        return pk_host->fail(LOOM_EIO, "%s: rank %d: an earlier collective failed; the collection is unusable",
                             REC_SEBC_CLASS, me);
    /* one local TBE per rank here: a plan whose ranks mix compute kernels (two TBEs on a rank,
    ** shard_groups.c) is refused, on every rank alike (every rank reads the same plan) */
    for (int64_t t = 0; t < e->plan->n_tables; t++)
        for (int64_t u = 0; u < t; u++) {
            const rec_plan_table *a = &e->plan->tables[t], *b = &e->plan->tables[u];
            if ((a->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING) == (b->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING))
                continue;
            for (int64_t i = 0; i < a->n_shards; i++)
                for (int64_t j = 0; j < b->n_shards; j++)
                    if (a->shards[i].rank == b->shards[j].rank)
                        return pk_host->fail(LOOM_EINVAL, "%s (cuda): rank %lld holds shards of tables '%s' and '%s' of "
                                             "two compute kernels: the cuda forward runs one TBE per rank",
                                             REC_SEBC_CLASS, (long long)a->shards[i].rank, b->name, a->name);
        }
    if ((st = state_get(e, device, &ns)) != LOOM_OK)
        return st;

    /* 1. the KJT to the host, checked as on cpu (and agreed on over MPI) */
    for (int i = 0; i < N_IN && i < call->n_inputs; i++) {
        const loom_tensor *t = call->inputs[i];
        if (t == NULL)
            continue;
        if (!loom_is_contiguous(t)) {
            st = pk_host->fail(LOOM_EINVAL, "%s (cuda): input %d must be contiguous", REC_SEBC_CLASS, i);
            break;
        }
        const size_t bytes = (size_t)loom_numel(t) * (t->dtype.bits / 8);
        if ((hbuf[i] = malloc(bytes > 0 ? bytes : 1)) == NULL) {
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
            break;
        }
        const cudaError_t c = bytes ? cudaMemcpyAsync(hbuf[i], loom_data(t), bytes, cudaMemcpyDeviceToHost, stream)
                                    : cudaSuccess;
        if (c != cudaSuccess) {
            st = cuda_fail(c, "cudaMemcpyAsync (the KJT to the host)", me);
            break;
        }
        host[i] = *t;
        host[i].data = hbuf[i];
        host[i].byte_offset = 0;
        host[i].device = (loom_dl_device){ LOOM_DEVICE_CPU, 0 };
        hin[i] = &host[i];
    }
    if (st == LOOM_OK) {
        const cudaError_t c = cudaStreamSynchronize(stream);
        if (c != cudaSuccess)
            st = cuda_fail(c, "cudaStreamSynchronize", me);
    }
    if (st != LOOM_OK) {
        /* the others wait in shard_input_read for this rank's verdict: give it */
        shard_input_refuse(e, st);
        for (int i = 0; i < N_IN; i++)
            free(hbuf[i]);
        return st;
    }
    loom_call hc = *call;
    hc.inputs = hin;
    hc.n_inputs = call->n_inputs < N_IN ? call->n_inputs : N_IN;
    OK(shard_input_read(&hc, e, 0, &in));
    const int64_t B = in.B;
    const int64_t *S = in.strides;

    /* 2. the KJT all-to-all on NCCL */
    OK(shard_kjt_pack(e, &in, &k));
    int64_t nsl = 0, nsv = 0, nrl = 0, nrv = 0;
    int64_t *lsd = calloc((size_t)W * 4, sizeof *lsd);
    if ((all_v = lsd) == NULL || (vrecv = malloc((size_t)W * 2 * sizeof *vrecv)) == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        goto done;
    }
    int64_t *vsd = lsd + W, *lrd = lsd + 2 * W, *vrd = lsd + 3 * W, *vstart = vrecv + W;
    for (int q = 0; q < W; q++) {
        lsd[q] = nsl, vsd[q] = nsv, lrd[q] = nrl;
        nsl += k.lsend[q], nsv += k.vsend[q], nrl += k.lrecv[q];
    }
    int64_t *d_cnt = NULL, *h_cnt = malloc((size_t)W * W * sizeof *h_cnt);
    if (h_cnt == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        goto done;
    }
    DEV(d_cnt, (int64_t)W * (W + 1));
    H2D(d_cnt, k.vsend, W);
    NC(ncclAllGather(d_cnt, d_cnt + W, (size_t)W, ncclInt64, ns->comm, stream), "ncclAllGather (KJT value counts)");
    /* a non-blocking communicator may still be enqueuing: what reads its results follows once it has */
    if ((st = nccl_sync(e, ns, stream, 0, "ncclAllGather (KJT value counts)")) != LOOM_OK) {
        free(h_cnt);
        goto done;
    }
    D2H(h_cnt, d_cnt + W, (int64_t)W * W);
    if ((st = nccl_wait(e, ns, stream, "ncclAllGather (KJT value counts)")) != LOOM_OK) {
        free(h_cnt);
        goto done;
    }
    for (int q = 0; q < W; q++) {
        vrecv[q] = h_cnt[q * W + me];
        vrd[q] = vstart[q] = nrv;
        nrv += vrecv[q];
    }
    free(h_cnt);
    int64_t *d_slen, *d_sval, *d_rlen, *d_rval;
    float *d_swt = NULL, *d_rwt = NULL;
    DEV(d_slen, nsl);
    DEV(d_sval, nsv);
    DEV(d_rlen, nrl);
    DEV(d_rval, nrv);
    if (k.swt) {
        DEV(d_swt, nsv);
        DEV(d_rwt, nrv);
    }
    H2D(d_slen, k.slen, nsl);
    H2D(d_sval, k.sval, nsv);
    if (k.swt)
        H2D(d_swt, k.swt, nsv);
    NC(ncclGroupStart(), "ncclGroupStart");
    NC(alltoallv(ns, d_slen, k.lsend, lsd, d_rlen, k.lrecv, lrd, ncclInt64, sizeof(int64_t), W, stream),
       "ncclSend/ncclRecv (KJT lengths)");
    NC(alltoallv(ns, d_sval, k.vsend, vsd, d_rval, vrecv, vrd, ncclInt64, sizeof(int64_t), W, stream),
       "ncclSend/ncclRecv (KJT values)");
    if (k.swt)
        NC(alltoallv(ns, d_swt, k.vsend, vsd, d_rwt, vrecv, vrd, ncclFloat32, sizeof(float), W, stream),
           "ncclSend/ncclRecv (KJT weights)");
    NC(ncclGroupEnd(), "ncclGroupEnd (KJT all-to-all)");
    OK(nccl_sync(e, ns, stream, 0, "ncclSend/ncclRecv (KJT all-to-all)"));
    rlen = malloc((size_t)(nrl > 0 ? nrl : 1) * sizeof *rlen);
    rval = malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rval);
    rwt = k.swt ? malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rwt) : NULL;
    if (!rlen || !rval || (k.swt && !rwt)) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        goto done;
    }
    D2H(rlen, d_rlen, nrl);
    D2H(rval, d_rval, nrv);
    if (k.swt)
        D2H(rwt, d_rwt, nrv);
    OK(nccl_wait(e, ns, stream, "ncclSend/ncclRecv (KJT all-to-all)"));
    vstart[W] = nrv;
    OK(shard_batch_assemble(e->c.name, W, P, k.sq, rlen, rval, rwt, vstart, &batch));

    /* 3. the local lookups on the device */
    int64_t oshape[2] = { B, D };
    OK(pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, oshape, &out));
    OK(shard_blocks_build(e, &in, &bl));
    OK(shard_kt_layout(e, &in, &kts));
    float *d_kt;
    DEV(d_kt, kts[F]);
    CU(cudaMemsetAsync(d_kt, 0, (size_t)(kts[F] > 0 ? kts[F] : 1) * sizeof *d_kt, stream), "cudaMemsetAsync");
    const float *yl = NULL;
    if (e->tbe && P > 0) {
        int64_t *d_idx, *d_off;
        float *d_psw = NULL;
        DEV(d_idx, batch.n_indices);
        DEV(d_off, P * batch.bags + 1);
        H2D(d_idx, batch.indices, batch.n_indices);
        H2D(d_off, batch.offsets, P * batch.bags + 1);
        if (batch.psw) {
            DEV(d_psw, batch.n_indices);
            H2D(d_psw, batch.psw, batch.n_indices);
        }
        OK(lookup(call, e, e->tbe, device, d_idx, d_off, d_psw, batch.n_indices, P * batch.bags, &y));
        yl = loom_numel(y) ? loom_data(y) : NULL;
    }

    /* 4. table- and column-wise rows back, pair-major (sharded_ebc_blocks.c) */
    float *d_sblk, *d_rblk;
    DEV(d_sblk, bl.n_ship);
    DEV(d_rblk, bl.n_take);
    for (int q = 0; q < W; q++) {
        int64_t at = bl.ship_dis[q];
        for (int64_t j = 0; j < P; j++) {
            const int64_t n = S[q * F + mine[j].feature], c = mine[j].cols;
            if (mine[j].rw || n == 0)
                continue;
            const int64_t r0 = batch.row0[j * (W + 1) + q];
            CU(cudaMemcpy2DAsync(d_sblk + at, (size_t)c * sizeof(float), yl + r0 * LD + mine[j].local_col,
                                 (size_t)LD * sizeof(float), (size_t)c * sizeof(float), (size_t)n,
                                 cudaMemcpyDeviceToDevice, stream), "cudaMemcpy2DAsync (pooled rows)");
            at += n * c;
        }
    }
    {
        int64_t *cnt = malloc((size_t)W * 4 * sizeof *cnt);
        if (cnt == NULL) {
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
            goto done;
        }
        for (int q = 0; q < W; q++) {
            cnt[q] = bl.ship_cnt[q], cnt[W + q] = bl.ship_dis[q];
            cnt[2 * W + q] = bl.take_cnt[q], cnt[3 * W + q] = bl.take_dis[q];
        }
        ncclResult_t r = ncclGroupStart();
        if (r == ncclSuccess)
            r = alltoallv(ns, d_sblk, cnt, cnt + W, d_rblk, cnt + 2 * W, cnt + 3 * W, ncclFloat32, sizeof(float), W,
                          stream);
        if (r == ncclSuccess || r == ncclInProgress)
            r = ncclGroupEnd();
        free(cnt);
        NC(r, "ncclSend/ncclRecv (pooled embeddings)");
        OK(nccl_sync(e, ns, stream, 0, "ncclSend/ncclRecv (pooled embeddings)"));
    }
    for (int r = 0; r < W; r++) {
        int64_t at = bl.take_dis[r];
        for (int64_t j = e->pair_start[r]; j < e->pair_start[r + 1]; j++) {
            const shard_pair *p = &e->pairs[j];
            const int64_t d = e->feature_col[p->feature + 1] - e->feature_col[p->feature], n = in.stride[p->feature];
            if (p->rw || n == 0)
                continue;
            CU(cudaMemcpy2DAsync(d_kt + kts[p->feature] + p->col_offset, (size_t)d * sizeof(float), d_rblk + at,
                                 (size_t)p->cols * sizeof(float), (size_t)p->cols * sizeof(float), (size_t)n,
                                 cudaMemcpyDeviceToDevice, stream), "cudaMemcpy2DAsync (pooled rows)");
            at += n * p->cols;
        }
    }
    /* row-wise: partial sums reduce-scattered, every rank's block padded to the largest */
    if (e->rw_d > 0) {
        int64_t M = 0;
        for (int q = 0; q < W; q++)
            M = bl.rw_cnt[q] > M ? bl.rw_cnt[q] : M;
        float *d_srw, *d_rrw;
        DEV(d_srw, W * M);
        DEV(d_rrw, M);
        CU(cudaMemsetAsync(d_srw, 0, (size_t)(W * M > 0 ? W * M : 1) * sizeof(float), stream), "cudaMemsetAsync");
        for (int64_t j = 0; j < P; j++) {
            if (!mine[j].rw)
                continue;
            const int64_t f = mine[j].feature, d = e->feature_col[f + 1] - e->feature_col[f];
            for (int q = 0; q < W; q++)
                CU(rec_nccl_accumulate(stream, d_srw + q * M + bl.rw_f[q * F + f] + mine[j].col_offset, d,
                                       yl + batch.row0[j * (W + 1) + q] * LD + mine[j].local_col, LD, S[q * F + f],
                                       mine[j].cols), "the row-wise partial sums kernel");
        }
        if (M > 0)
            NC(ncclReduceScatter(d_srw, d_rrw, (size_t)M, ncclFloat32, ncclSum, ns->comm, stream),
               "ncclReduceScatter (row-wise pooled embeddings)");
        OK(nccl_sync(e, ns, stream, 0, "ncclReduceScatter (row-wise pooled embeddings)"));
        for (int64_t f = 0; f < F; f++)
            if (e->rw_col[f] >= 0 && kts[f + 1] > kts[f])
                CU(cudaMemcpyAsync(d_kt + kts[f], d_rrw + bl.rw_f[me * F + f],
                                   (size_t)(kts[f + 1] - kts[f]) * sizeof(float), cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpyAsync (row-wise rows)");
    }
    /* data-parallel: the local bags on the local replica */
    if (e->dp_tbe) {
        OK(shard_dp_batch(e, &in, 0, &dpb));
        int64_t *d_idx, *d_off;
        float *d_psw = NULL;
        const int64_t nb = e->n_dp_features * dpb.bags;
        DEV(d_idx, dpb.n_indices);
        DEV(d_off, nb + 1);
        H2D(d_idx, dpb.indices, dpb.n_indices);
        H2D(d_off, dpb.offsets, nb + 1);
        if (dpb.psw) {
            DEV(d_psw, dpb.n_indices);
            H2D(d_psw, dpb.psw, dpb.n_indices);
        }
        OK(lookup(call, e, e->dp_tbe, device, d_idx, d_off, d_psw, dpb.n_indices, nb, &ydp));
        const float *yd = loom_numel(ydp) ? loom_data(ydp) : NULL;
        for (int64_t j = 0; j < e->n_dp_features; j++) {
            const int64_t f = e->dp_features[j], d = e->feature_col[f + 1] - e->feature_col[f];
            if (in.stride[f] > 0 && d > 0)
                CU(cudaMemcpy2DAsync(d_kt + kts[f], (size_t)d * sizeof(float), yd + e->dp_col[f],
                                     (size_t)e->dp_d * sizeof(float), (size_t)d * sizeof(float), (size_t)in.stride[f],
                                     cudaMemcpyDeviceToDevice, stream), "cudaMemcpy2DAsync (data-parallel rows)");
        }
    }
    /* every bag's row to its samples */
    int64_t *d_inv = NULL;
    if (in.inverse) {
        DEV(d_inv, F * B);
        H2D(d_inv, in.inverse, F * B);
    }
    float *o = B * D > 0 ? loom_data(out) : NULL;
    for (int64_t f = 0; o && f < F; f++)
        CU(rec_nccl_expand(stream, o, D, e->feature_col[f], d_kt + kts[f], e->feature_col[f + 1] - e->feature_col[f],
                           d_inv ? d_inv + f * B : NULL, B), "the expansion kernel");
    st = nccl_wait(e, ns, stream, "the pooled embeddings' collectives (ncclSend/ncclRecv, ncclReduceScatter)");

done:
    if (st != LOOM_OK && ns && !ns->broken)
        cudaStreamSynchronize(stream);   /* nothing queued may outlive the buffers freed below */
    dev_free(&db);
    if (y)
        pk_host->tensor_free(y);
    if (ydp)
        pk_host->tensor_free(ydp);
    for (int i = 0; i < N_IN; i++)
        free(hbuf[i]);
    shard_kjt_parts_free(&k);
    shard_batch_free(&batch);
    shard_batch_free(&dpb);
    shard_blocks_free(&bl);
    shard_input_free(&in);
    free(all_v);
    free(vrecv);
    free(kts);
    free(rlen);
    free(rval);
    free(rwt);
    return st;
}
