/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_dist.c - the input side of the sharded collection (shard.h):
** the call's KJT checked on every rank (and the ranks' verdicts and batch
** sizes exchanged, so one rank's bad input fails every rank at once), the
** KJT all-to-all to the shards' ranks (torchrec's KJTAllToAll: counts,
** then lengths, ids and weights by MPI_Alltoallv), and the batch of the
** data-parallel tables (local, or all-gathered for their backward).
**
** What a rank receives from rank q is, per pair j of its own, B lengths
** and their ids; the TBE wants feature-major bags, so the received blocks
** are laid out pair-major, then source rank, then sample: W * B bags per
** pair, rank q's samples at rows q * B .. q * B + B - 1.
*/
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "shard.h"

void shard_input_free(shard_input *in)
{
    free(in->value_start);
    in->value_start = NULL;
}

void shard_batch_free(shard_batch *b)
{
    free(b->indices);
    free(b->offsets);
    free(b->psw);
    *b = (shard_batch){ 0 };
}

/* The local checks; LOOM_OK or the failure (message set). */
loom_status shard_input_check(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in)
{
    const loom_tensor *v = call->inputs[SEBC_IN_VALUES], *l = call->inputs[SEBC_IN_LENGTHS];
    const loom_tensor *w = call->inputs[SEBC_IN_WEIGHTS];
    const int64_t F = e->n_features;
    if (l == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' is required (the KJT's [F * B], F = %lld features)",
                             REC_SEBC_CLASS, (long long)F);
    if (loom_tensor_dtype_of(v) != LOOM_DTYPE_I64 || loom_tensor_dtype_of(l) != LOOM_DTYPE_I64 ||
        !loom_is_contiguous(v) || !loom_is_contiguous(l))
        return pk_host->fail(LOOM_EINVAL, "%s: 'values' and 'lengths' must be contiguous i64 (%s, %s)",
                             REC_SEBC_CLASS, pk_host->dtype_name(loom_tensor_dtype_of(v)),
                             pk_host->dtype_name(loom_tensor_dtype_of(l)));
    const int64_t nl = loom_numel(l), N = loom_numel(v);
    if (F == 0 || nl % F != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' has %lld entries, not F * B for the collection's %lld "
                             "features", REC_SEBC_CLASS, (long long)nl, (long long)F);
    in->B = nl / F;
    in->n_values = N;
    in->values = N ? loom_data(v) : NULL;
    in->lengths = nl ? loom_data(l) : NULL;
    in->weights = NULL;
    if (e->is_weighted) {
        if (w == NULL || loom_tensor_dtype_of(w) != LOOM_DTYPE_F32 || loom_numel(w) != N || !loom_is_contiguous(w))
            return pk_host->fail(LOOM_EINVAL, "%s: is_weighted: 'weights' must be a contiguous f32 [%lld] (one per "
                                 "value)", REC_SEBC_CLASS, (long long)N);
        in->weights = N ? loom_data(w) : NULL;
    }
    if ((in->value_start = malloc((size_t)(nl + 1) * sizeof *in->value_start)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    in->value_start[0] = 0;
    for (int64_t i = 0; i < nl; i++) {
        if (in->lengths[i] < 0)
            return pk_host->fail(LOOM_EINVAL, "%s: 'lengths'[%lld] is %lld (feature %lld, sample %lld)",
                                 REC_SEBC_CLASS, (long long)i, (long long)in->lengths[i], (long long)(i / in->B),
                                 (long long)(i % in->B));
        in->value_start[i + 1] = in->value_start[i] + in->lengths[i];
        if (in->value_start[i + 1] > N)
            return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' sum past the %lld values", REC_SEBC_CLASS,
                                 (long long)N);
    }
    if (in->value_start[nl] != N)
        return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' sum to %lld, 'values' has %lld", REC_SEBC_CLASS,
                             (long long)in->value_start[nl], (long long)N);
    const loom_tensor *g = with_grad ? call->inputs[SEBC_IN_GRAD] : NULL;
    const int64_t D = e->feature_col[F];
    char b1[96];
    if (with_grad && (g == NULL || loom_tensor_dtype_of(g) != LOOM_DTYPE_F32 || g->ndim != 2 || g->shape[0] != in->B
                      || g->shape[1] != D || !loom_is_contiguous(g)))
        return pk_host->fail(LOOM_EINVAL, "%s: 'grad' is %s: it must be the gradient of the forward's output, a "
                             "contiguous f32 [B = %lld, sum D = %lld]", REC_SEBC_CLASS,
                             g ? pk_describe(pk_host, g, b1, sizeof b1) : "missing", (long long)in->B, (long long)D);
    for (int64_t f = 0; f < F; f++) {
        const int64_t t = e->feature_table[f], E = e->num_embeddings[t];
        for (int64_t i = in->value_start[f * in->B]; i < in->value_start[(f + 1) * in->B]; i++)
            if (in->values[i] < 0 || in->values[i] >= E)
                return pk_host->fail(LOOM_EINVAL, "%s: 'values'[%lld] = %lld (feature %lld of table '%s') is not a "
                                     "row of its %lld", REC_SEBC_CLASS, (long long)i, (long long)in->values[i],
                                     (long long)f, e->table_names[t], (long long)E);
    }
    return LOOM_OK;
}

loom_status shard_input_read(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in)
{
    *in = (shard_input){ 0 };
    return shard_input_agree(e, shard_input_check(call, e, with_grad, in), in);
}

loom_status shard_input_agree(const rec_sebc *e, loom_status st, shard_input *in)
{
    rec_sebc *me = (rec_sebc *)e;
    if (e->c.broken) {
        shard_input_free(in);
        return pk_host->fail(LOOM_EIO, "%s: rank %d: an earlier collective failed; the collection is unusable",
                             REC_SEBC_CLASS, e->c.rank);
    }
    /* every rank's verdict and B, so a refusal on one rank fails all of them now */
    int64_t mine[2] = { st == LOOM_OK ? in->B : -1, st }, *all = malloc((size_t)e->c.size * 2 * sizeof *all);
    if (all == NULL) {
        shard_input_free(in);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    }
    MPI_Request req;
    int rc = MPI_Iallgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, e->c.comm, &req);
    loom_status wst = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Iallgather (batch sizes)")
                                        : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", REC_SEBC_CLASS,
                                                        e->c.rank);
    if (st == LOOM_OK && wst != LOOM_OK)
        st = wst;
    for (int q = 0; st == LOOM_OK && q < e->c.size; q++) {
        if (all[2 * q + 1] != LOOM_OK)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d: rank %d refused its input (its own error says why)",
                               REC_SEBC_CLASS, e->c.rank, q);
        else if (all[2 * q] != in->B)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d has a batch of %lld samples, rank %d of %lld: every rank "
                               "gives the same B", REC_SEBC_CLASS, q, (long long)all[2 * q], e->c.rank,
                               (long long)in->B);
    }
    free(all);
    if (st != LOOM_OK)
        shard_input_free(in);
    return st;
}

/* From W blocks (block q: P * B lengths, pair-major, and their ids at
** vals + vstart[q]) to the TBE's batch: pair-major, then q, then sample. */
static loom_status assemble(int W, int64_t P, int64_t B, const int64_t *lens, const int64_t *vals, const float *wts,
                            const int64_t *vstart, shard_batch *out)
{
    const int64_t n = vstart[W];
    out->n_indices = n;
    out->indices = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->indices);
    out->offsets = malloc((size_t)(P * W * B + 1) * sizeof *out->offsets);
    out->psw = wts ? malloc((size_t)(n > 0 ? n : 1) * sizeof *out->psw) : NULL;
    int64_t *seg = malloc((size_t)(W * P > 0 ? W * P : 1) * sizeof *seg);
    if (!out->indices || !out->offsets || (wts && !out->psw) || !seg) {
        free(seg);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    }
    for (int q = 0; q < W; q++) {
        int64_t at = vstart[q];
        for (int64_t j = 0; j < P; j++) {
            seg[q * P + j] = at;
            for (int64_t b = 0; b < B; b++)
                at += lens[(q * P + j) * B + b];
        }
    }
    int64_t pos = 0, k = 0;
    out->offsets[0] = 0;
    for (int64_t j = 0; j < P; j++)
        for (int q = 0; q < W; q++) {
            int64_t len = 0;
            for (int64_t b = 0; b < B; b++) {
                len += lens[(q * P + j) * B + b];
                out->offsets[++k] = pos + len;
            }
            if (len) {
                memcpy(out->indices + pos, vals + seg[q * P + j], (size_t)len * sizeof *vals);
                if (wts)
                    memcpy(out->psw + pos, wts + seg[q * P + j], (size_t)len * sizeof *wts);
            }
            pos += len;
        }
    free(seg);
    return LOOM_OK;
}

loom_status shard_kjt_all_to_all(const rec_sebc *e, const shard_input *in, shard_batch *out)
{
    rec_sebc *me = (rec_sebc *)e;
    const int W = e->c.size, r0 = e->c.rank;
    const int64_t B = in->B;
    const int weighted = in->weights != NULL;
    *out = (shard_batch){ 0 };
    int *cnt = calloc((size_t)W * 8, sizeof *cnt);
    int *lsend = cnt, *lsdis = cnt + W, *lrecv = cnt + 2 * W, *lrdis = cnt + 3 * W;
    int *vsend = cnt + 4 * W, *vsdis = cnt + 5 * W, *vrecv = cnt + 6 * W, *vrdis = cnt + 7 * W;
    int64_t *vcount = calloc((size_t)W, sizeof *vcount);
    int64_t *slen = NULL, *sval = NULL, *rlen = NULL, *rval = NULL, *vstart = NULL;
    float *swt = NULL, *rwt = NULL;
    loom_status st = cnt && vcount ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    /* what goes to each rank: its pairs' ids within the shard's rows, relative to its first row */
    int64_t n_send_len = 0, n_send_val = 0;
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
            for (int64_t i = in->value_start[p->feature * B]; i < in->value_start[(p->feature + 1) * B]; i++)
                vcount[r] += in->values[i] >= lo && in->values[i] < hi;
        }
        const int64_t nl = (e->pair_start[r + 1] - e->pair_start[r]) * B;
        if ((st = shard_count(nl, "KJT lengths", &lsend[r])) == LOOM_OK)
            st = shard_count(vcount[r], "KJT values", &vsend[r]);
        lsdis[r] = (int)n_send_len;
        vsdis[r] = (int)n_send_val;
        n_send_len += nl;
        n_send_val += vcount[r];
        if (st == LOOM_OK && (n_send_len > 2147483647 || n_send_val > 2147483647))
            st = pk_host->fail(LOOM_EINVAL, "%s: the KJT all-to-all exceeds int displacements", REC_SEBC_CLASS);
    }
    if (st == LOOM_OK) {
        slen = malloc((size_t)(n_send_len > 0 ? n_send_len : 1) * sizeof *slen);
        sval = malloc((size_t)(n_send_val > 0 ? n_send_val : 1) * sizeof *sval);
        swt = weighted ? malloc((size_t)(n_send_val > 0 ? n_send_val : 1) * sizeof *swt) : NULL;
        if (!slen || !sval || (weighted && !swt))
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    }
    if (st == LOOM_OK) {
        int64_t li = 0, vi = 0;
        for (int r = 0; r < W; r++)
            for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
                const shard_pair *p = &e->pairs[k];
                const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
                for (int64_t b = 0; b < B; b++) {
                    int64_t n = 0;
                    for (int64_t i = in->value_start[p->feature * B + b]; i < in->value_start[p->feature * B + b + 1];
                         i++)
                        if (in->values[i] >= lo && in->values[i] < hi) {
                            if (weighted)
                                swt[vi] = in->weights[i];
                            sval[vi++] = in->values[i] - lo;
                            n++;
                        }
                    slen[li++] = n;
                }
            }
    }
    /* the counts of ids each rank sends here, then the three all-to-alls */
    MPI_Request req;
    if (st == LOOM_OK) {
        int rc = MPI_Ialltoall(vsend, 1, MPI_INT, vrecv, 1, MPI_INT, e->c.comm, &req);
        st = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Ialltoall (KJT value counts)")
                               : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoall failed", REC_SEBC_CLASS, r0);
    }
    const int64_t P = e->pair_start[r0 + 1] - e->pair_start[r0];
    if (st == LOOM_OK) {
        int64_t nrl = 0, nrv = 0;
        for (int q = 0; q < W; q++) {
            lrecv[q] = (int)(P * B);
            lrdis[q] = (int)nrl;
            vrdis[q] = (int)nrv;
            nrl += P * B;
            nrv += vrecv[q];
        }
        if (nrl > 2147483647 || nrv > 2147483647)
            st = pk_host->fail(LOOM_EINVAL, "%s: the KJT all-to-all exceeds int displacements", REC_SEBC_CLASS);
        rlen = malloc((size_t)(nrl > 0 ? nrl : 1) * sizeof *rlen);
        rval = malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rval);
        rwt = weighted ? malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rwt) : NULL;
        vstart = malloc((size_t)(W + 1) * sizeof *vstart);
        if (st == LOOM_OK && (!rlen || !rval || (weighted && !rwt) || !vstart))
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        for (int q = 0; st == LOOM_OK && q <= W; q++)
            vstart[q] = q < W ? vrdis[q] : nrv;
    }
    if (st == LOOM_OK) {
        MPI_Request reqs[3];
        int rc = MPI_Ialltoallv(slen, lsend, lsdis, MPI_INT64_T, rlen, lrecv, lrdis, MPI_INT64_T, e->c.comm, &reqs[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Ialltoallv(sval, vsend, vsdis, MPI_INT64_T, rval, vrecv, vrdis, MPI_INT64_T, e->c.comm, &reqs[1]);
        if (rc == MPI_SUCCESS && weighted)
            rc = MPI_Ialltoallv(swt, vsend, vsdis, MPI_FLOAT, rwt, vrecv, vrdis, MPI_FLOAT, e->c.comm, &reqs[2]);
        if (rc != MPI_SUCCESS)
            st = pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv (KJT) failed", REC_SEBC_CLASS, r0);
        static const char *const what[3] = { "MPI_Ialltoallv (KJT lengths)", "MPI_Ialltoallv (KJT values)",
                                             "MPI_Ialltoallv (KJT weights)" };
        for (int i = 0; st == LOOM_OK && i < 2 + weighted; i++)
            st = shard_wait(&me->c, &reqs[i], what[i]);
    }
    if (st == LOOM_OK)
        st = assemble(W, P, B, rlen, rval, rwt, vstart, out);
    free(cnt);
    free(vcount);
    free(slen);
    free(sval);
    free(swt);
    free(rlen);
    free(rval);
    free(rwt);
    free(vstart);
    if (st != LOOM_OK)
        shard_batch_free(out);
    return st;
}

loom_status shard_dp_batch(const rec_sebc *e, const shard_input *in, int all_ranks, shard_batch *out)
{
    rec_sebc *me = (rec_sebc *)e;
    const int64_t B = in->B, P = e->n_dp_features;
    const int W = all_ranks ? e->c.size : 1;
    const int weighted = in->weights != NULL;
    *out = (shard_batch){ 0 };
    /* the local block: P * B lengths and their ids, pair-major */
    int64_t n = 0;
    for (int64_t j = 0; j < P; j++) {
        const int64_t f = e->dp_features[j];
        n += in->value_start[(f + 1) * B] - in->value_start[f * B];
    }
    int64_t *lens = malloc((size_t)(P * B > 0 ? P * B : 1) * sizeof *lens);
    int64_t *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof *vals);
    float *wts = weighted ? malloc((size_t)(n > 0 ? n : 1) * sizeof *wts) : NULL;
    int64_t *glens = NULL, *gvals = NULL, *vstart = malloc((size_t)(e->c.size + 1) * sizeof *vstart);
    float *gwts = NULL;
    int *counts = calloc((size_t)e->c.size * 2, sizeof *counts);
    loom_status st = lens && vals && (!weighted || wts) && vstart && counts
                         ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
    int64_t at = 0;
    for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
        const int64_t f = e->dp_features[j], v0 = in->value_start[f * B], v1 = in->value_start[(f + 1) * B];
        memcpy(lens + j * B, in->lengths + f * B, (size_t)B * sizeof *lens);
        if (v1 > v0) {
            memcpy(vals + at, in->values + v0, (size_t)(v1 - v0) * sizeof *vals);
            if (weighted)
                memcpy(wts + at, in->weights + v0, (size_t)(v1 - v0) * sizeof *wts);
        }
        at += v1 - v0;
    }
    if (st == LOOM_OK && !all_ranks) {
        vstart[0] = 0;
        vstart[1] = n;
        st = assemble(1, P, B, lens, vals, wts, vstart, out);
    } else if (st == LOOM_OK) {
        int nl = 0, nv = 0, *vcnt = counts, *vdis = counts + e->c.size;
        MPI_Request req;
        if ((st = shard_count(P * B, "data-parallel lengths", &nl)) == LOOM_OK)
            st = shard_count(n, "data-parallel values", &nv);
        if (st == LOOM_OK) {
            int rc = MPI_Iallgather(&nv, 1, MPI_INT, vcnt, 1, MPI_INT, e->c.comm, &req);
            st = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Iallgather (data-parallel value counts)")
                                   : pk_host->fail(LOOM_EIO, "%s: MPI_Iallgather failed", REC_SEBC_CLASS);
        }
        int64_t total = 0;
        for (int q = 0; st == LOOM_OK && q < W; q++) {
            vdis[q] = (int)total;
            vstart[q] = total;
            total += vcnt[q];
        }
        vstart[W] = total;
        if (st == LOOM_OK && (total > 2147483647 || (int64_t)nl * W > 2147483647))
            st = pk_host->fail(LOOM_EINVAL, "%s: the data-parallel all-gather exceeds int counts", REC_SEBC_CLASS);
        if (st == LOOM_OK) {
            glens = malloc((size_t)(nl * W > 0 ? nl * W : 1) * sizeof *glens);
            gvals = malloc((size_t)(total > 0 ? total : 1) * sizeof *gvals);
            gwts = weighted ? malloc((size_t)(total > 0 ? total : 1) * sizeof *gwts) : NULL;
            if (!glens || !gvals || (weighted && !gwts))
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEBC_CLASS);
        }
        if (st == LOOM_OK) {
            MPI_Request reqs[3];
            int rc = MPI_Iallgather(lens, nl, MPI_INT64_T, glens, nl, MPI_INT64_T, e->c.comm, &reqs[0]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Iallgatherv(vals, nv, MPI_INT64_T, gvals, vcnt, vdis, MPI_INT64_T, e->c.comm, &reqs[1]);
            if (rc == MPI_SUCCESS && weighted)
                rc = MPI_Iallgatherv(wts, nv, MPI_FLOAT, gwts, vcnt, vdis, MPI_FLOAT, e->c.comm, &reqs[2]);
            if (rc != MPI_SUCCESS)
                st = pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgatherv (data-parallel KJT) failed",
                                   REC_SEBC_CLASS, e->c.rank);
            for (int i = 0; st == LOOM_OK && i < 2 + weighted; i++)
                st = shard_wait(&me->c, &reqs[i], "MPI_Iallgatherv (data-parallel KJT)");
        }
        if (st == LOOM_OK)
            st = assemble(W, P, B, glens, gvals, gwts, vstart, out);
    }
    free(lens);
    free(vals);
    free(wts);
    free(glens);
    free(gvals);
    free(gwts);
    free(vstart);
    free(counts);
    if (st != LOOM_OK)
        shard_batch_free(out);
    return st;
}
