/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_dist.c - the input side of the sharded collection (shard.h):
** the call's KJT checked on every rank (and the ranks' verdicts and batch
** sizes exchanged, so one rank's bad input fails every rank at once), the
** KJT all-to-all to the shards' ranks (torchrec's KJTAllToAll: counts,
** then lengths, ids and weights by MPI_Alltoallv), and the batch of the
** data-parallel tables (local, or all-gathered for their backward).
**
** VBE (torchrec's variable batch per feature): a rank's KJT may carry
** stride_per_key_per_rank, fewer bags of a feature than samples (its
** deduplicated ones), and inverse_indices [F, B] from the samples to the
** bags. The ranks all-gather their strides with their verdicts, so every
** rank knows how many bags of each feature every rank sends it, and the
** all-to-all moves only the bags (as torchrec's KJTAllToAll with its
** stride splits). The pooled rows of the bags come back per feature, and
** the sample's rank expands them through inverse_indices (shard_kt_expand;
** torchrec's KeyedTensor after VBE); the backward sums the samples'
** gradients into their bags first (shard_kt_reduce).
**
** What a rank receives from rank q is, per pair j of its own, rank q's
** stride of the pair's feature in lengths and their ids; the TBE wants
** feature-major bags of one batch size, so the received blocks are laid
** out pair-major, then source rank, then bag, each pair padded with empty
** bags to the longest (shard.h). Without VBE that is W * B bags per pair,
** rank q's samples at rows q * B .. q * B + B - 1.
*/
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "shard.h"

void shard_input_free(shard_input *in)
{
    free(in->value_start);
    free(in->stride);
    free(in->len_start);
    free(in->inverse);
    free(in->strides);
    in->value_start = in->stride = in->len_start = in->inverse = in->strides = NULL;
}

void shard_batch_free(shard_batch *b)
{
    free(b->indices);
    free(b->offsets);
    free(b->psw);
    free(b->row0);
    *b = (shard_batch){ 0 };
}

/* An i32/i64 element as int64. */
static int64_t index_at(const loom_tensor *t, int64_t i)
{
    return loom_tensor_dtype_of(t) == LOOM_DTYPE_I32 ? ((const int32_t *)loom_data(t))[i]
                                                      : ((const int64_t *)loom_data(t))[i];
}

static int is_index(const loom_tensor *t)
{
    const loom_dtype d = loom_tensor_dtype_of(t);
    return (d == LOOM_DTYPE_I32 || d == LOOM_DTYPE_I64) && loom_is_contiguous(t);
}

/* The VBE strides and inverse indices: in->stride, in->len_start, in->B
** and in->inverse from the lengths' count nl. */
static loom_status check_vbe(loom_call *call, const rec_sebc *e, int with_grad, int64_t nl, shard_input *in)
{
    const loom_tensor *sp = call->n_inputs > SEBC_IN_SPKPR(with_grad) ? call->inputs[SEBC_IN_SPKPR(with_grad)] : NULL;
    const loom_tensor *iv = call->n_inputs > SEBC_IN_INVERSE(with_grad) ? call->inputs[SEBC_IN_INVERSE(with_grad)]
                                                                         : NULL;
    const int64_t F = e->n_features;
    char b1[96];
    in->stride = malloc((size_t)F * sizeof *in->stride);
    in->len_start = malloc((size_t)(F + 1) * sizeof *in->len_start);
    if (!in->stride || !in->len_start)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    if (sp != NULL) {
        /* torchrec's [K, ranks]: a key's bags on this rank are the sum over its ranks */
        if (!is_index(sp) || sp->ndim != 2 || sp->shape[0] != F || sp->shape[1] < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: 'stride_per_key_per_rank' is %s: it must be a contiguous i32/i64 "
                                 "[F = %lld, ranks >= 1]", e->c.name, pk_describe(pk_host, sp, b1, sizeof b1),
                                 (long long)F);
        const int64_t R = sp->shape[1];
        for (int64_t f = 0; f < F; f++) {
            in->stride[f] = 0;
            for (int64_t r = 0; r < R; r++) {
                const int64_t s = index_at(sp, f * R + r);
                if (s < 0 || s > (INT64_C(1) << 40))
                    return pk_host->fail(LOOM_EINVAL, "%s: 'stride_per_key_per_rank'[%lld][%lld] is %lld (feature "
                                         "%lld): not a batch size", e->c.name, (long long)f, (long long)r,
                                         (long long)s, (long long)f);
                in->stride[f] += s;
            }
        }
    } else {
        if (nl % F != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' has %lld entries, not F * B for the collection's %lld "
                                 "features", e->c.name, (long long)nl, (long long)F);
        for (int64_t f = 0; f < F; f++)
            in->stride[f] = nl / F;
    }
    in->len_start[0] = 0;
    for (int64_t f = 0; f < F; f++)
        in->len_start[f + 1] = in->len_start[f] + in->stride[f];
    if (in->len_start[F] != nl)
        return pk_host->fail(LOOM_EINVAL, "%s: 'stride_per_key_per_rank' sums to %lld bags over the %lld features, "
                             "'lengths' has %lld entries: they must match", e->c.name,
                             (long long)in->len_start[F], (long long)F, (long long)nl);
    if (iv == NULL) {
        for (int64_t f = 1; f < F; f++)
            if (in->stride[f] != in->stride[0])
                return pk_host->fail(LOOM_EINVAL, "%s: feature %lld has %lld samples and feature %lld %lld: a VBE KJT "
                                     "needs 'inverse_indices' to pool to one batch", e->c.name, (long long)0,
                                     (long long)in->stride[0], (long long)f, (long long)in->stride[f]);
        in->B = in->stride[0];
        return LOOM_OK;
    }
    if (!is_index(iv) || iv->ndim != 2 || iv->shape[0] != F)
        return pk_host->fail(LOOM_EINVAL, "%s: 'inverse_indices' is %s: it must be a contiguous i32/i64 [F = %lld, "
                             "B]", e->c.name, pk_describe(pk_host, iv, b1, sizeof b1), (long long)F);
    in->B = iv->shape[1];
    if ((in->inverse = malloc((size_t)(F * in->B > 0 ? F * in->B : 1) * sizeof *in->inverse)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int64_t f = 0; f < F; f++)
        for (int64_t b = 0; b < in->B; b++) {
            const int64_t v = index_at(iv, f * in->B + b);
            if (v < 0 || v >= in->stride[f])
                return pk_host->fail(LOOM_EINVAL, "%s: 'inverse_indices'[%lld][%lld] is %lld: feature %lld has %lld "
                                     "bags on this rank", e->c.name, (long long)f, (long long)b, (long long)v,
                                     (long long)f, (long long)in->stride[f]);
            in->inverse[f * in->B + b] = v;
        }
    return LOOM_OK;
}

/* The local checks; LOOM_OK or the failure (message set). */
loom_status shard_input_check(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in)
{
    const loom_tensor *v = call->inputs[SEBC_IN_VALUES], *l = call->inputs[SEBC_IN_LENGTHS];
    const loom_tensor *w = call->inputs[SEBC_IN_WEIGHTS];
    const int64_t F = e->n_features;
    if (l == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' is required (the KJT's [F * B], F = %lld features)",
                             e->c.name, (long long)F);
    if (loom_tensor_dtype_of(v) != LOOM_DTYPE_I64 || loom_tensor_dtype_of(l) != LOOM_DTYPE_I64 ||
        !loom_is_contiguous(v) || !loom_is_contiguous(l))
        return pk_host->fail(LOOM_EINVAL, "%s: 'values' and 'lengths' must be contiguous i64 (%s, %s)",
                             e->c.name, pk_host->dtype_name(loom_tensor_dtype_of(v)),
                             pk_host->dtype_name(loom_tensor_dtype_of(l)));
    const int64_t nl = loom_numel(l), N = loom_numel(v);
    if (F == 0)
        return pk_host->fail(LOOM_EINVAL, "%s: the collection has no features", e->c.name);
    loom_status st = check_vbe(call, e, with_grad, nl, in);
    if (st != LOOM_OK)
        return st;
    in->n_values = N;
    in->values = N ? loom_data(v) : NULL;
    in->lengths = nl ? loom_data(l) : NULL;
    in->weights = NULL;
    if (e->is_weighted) {
        if (w == NULL || loom_tensor_dtype_of(w) != LOOM_DTYPE_F32 || loom_numel(w) != N || !loom_is_contiguous(w))
            return pk_host->fail(LOOM_EINVAL, "%s: is_weighted: 'weights' must be a contiguous f32 [%lld] (one per "
                                 "value)", e->c.name, (long long)N);
        in->weights = N ? loom_data(w) : NULL;
    }
    if ((in->value_start = malloc((size_t)(nl + 1) * sizeof *in->value_start)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    in->value_start[0] = 0;
    for (int64_t f = 0, i = 0; f < F; f++)
        for (; i < in->len_start[f + 1]; i++) {
            if (in->lengths[i] < 0)
                return pk_host->fail(LOOM_EINVAL, "%s: 'lengths'[%lld] is %lld (feature %lld, bag %lld)",
                                     e->c.name, (long long)i, (long long)in->lengths[i], (long long)f,
                                     (long long)(i - in->len_start[f]));
            in->value_start[i + 1] = in->value_start[i] + in->lengths[i];
            if (in->value_start[i + 1] > N)
                return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' sum past the %lld values", e->c.name,
                                     (long long)N);
        }
    if (in->value_start[nl] != N)
        return pk_host->fail(LOOM_EINVAL, "%s: 'lengths' sum to %lld, 'values' has %lld", e->c.name,
                             (long long)in->value_start[nl], (long long)N);
    const loom_tensor *g = with_grad ? call->inputs[SEBC_IN_GRAD] : NULL;
    const int64_t D = e->feature_col[F];
    char b1[96];
    if (with_grad && (g == NULL || loom_tensor_dtype_of(g) != LOOM_DTYPE_F32 || g->ndim != 2 || g->shape[0] != in->B
                      || g->shape[1] != D || !loom_is_contiguous(g)))
        return pk_host->fail(LOOM_EINVAL, "%s: 'grad' is %s: it must be the gradient of the forward's output, a "
                             "contiguous f32 [B = %lld, sum D = %lld]", e->c.name,
                             g ? pk_describe(pk_host, g, b1, sizeof b1) : "missing", (long long)in->B, (long long)D);
    for (int64_t f = 0; f < F; f++) {
        const int64_t t = e->feature_table[f], E = e->num_embeddings[t];
        for (int64_t i = in->value_start[in->len_start[f]]; i < in->value_start[in->len_start[f + 1]]; i++)
            if (in->values[i] < 0 || in->values[i] >= E)
                return pk_host->fail(LOOM_EINVAL, "%s: 'values'[%lld] = %lld (feature %lld of table '%s') is not a "
                                     "row of its %lld", e->c.name, (long long)i, (long long)in->values[i],
                                     (long long)f, e->table_names[t], (long long)E);
    }
    return LOOM_OK;
}

/* This rank's verdict st (and with it B and the strides) against every rank's. */
loom_status shard_input_agree(const rec_sebc *e, loom_status st, shard_input *in)
{
    rec_sebc *me = (rec_sebc *)e;
    if (e->c.broken) {
        shard_input_free(in);
        return pk_host->fail(LOOM_EIO, "%s: rank %d: an earlier collective failed; the collection is unusable",
                             e->c.name, e->c.rank);
    }
    const int W = e->c.size;
    const int64_t F = e->n_features, n = 3 + F;
    /* every rank's verdict, B and strides per feature (torchrec sends the
    ** strides with the lengths; one all-gather here gives every rank the
    ** whole [W, F] before any data moves), so a refusal on one rank fails
    ** all of them now */
    int64_t *mine = calloc((size_t)n, sizeof *mine), *all = malloc((size_t)W * (size_t)n * sizeof *all);
    if (mine == NULL || all == NULL) {
        free(mine);
        free(all);
        shard_input_free(in);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    mine[0] = st == LOOM_OK ? in->B : -1;
    mine[1] = st;
    mine[2] = st == LOOM_OK ? in->kept_id : 0;
    for (int64_t f = 0; st == LOOM_OK && f < F; f++)
        mine[3 + f] = in->stride[f];
    MPI_Request req;
    int rc = MPI_Iallgather(mine, (int)n, MPI_INT64_T, all, (int)n, MPI_INT64_T, e->c.comm, &req);
    loom_status wst = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Iallgather (batch sizes)")
                                        : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", e->c.name,
                                                        e->c.rank);
    if (st == LOOM_OK && wst != LOOM_OK)
        st = wst;
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        if (all[n * q + 1] != LOOM_OK)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d: rank %d refused its input (its own error says why)",
                               e->c.name, e->c.rank, q);
        else if (all[n * q] != in->B)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d has a batch of %lld samples, rank %d of %lld: every rank "
                               "gives the same B", e->c.name, q, (long long)all[n * q], e->c.rank,
                               (long long)in->B);
    }
    if (st == LOOM_OK && (in->strides = malloc((size_t)W * (size_t)F * sizeof *in->strides)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int q = 0; st == LOOM_OK && q < W; q++)
        memcpy(in->strides + q * F, all + n * q + 3, (size_t)F * sizeof *in->strides);
    /* the kept input is taken only when every rank kept the same one (same
    ** id: the same prefetch call) for its KJT: the batch it holds is then the
    ** one this all-to-all would give */
    in->reuse = st == LOOM_OK && in->kept_id != 0;
    for (int q = 0; in->reuse && q < W; q++)
        in->reuse = all[n * q + 2] == in->kept_id;
    free(mine);
    free(all);
    if (st != LOOM_OK)
        shard_input_free(in);
    return st;
}

loom_status shard_input_read(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in)
{
    *in = (shard_input){ 0 };
    return shard_input_agree(e, shard_input_check(call, e, with_grad, in), in);
}

loom_status shard_input_refuse(const rec_sebc *e, loom_status st)
{
    shard_input in = { 0 };
    if (e->c.broken)
        return st;
    return shard_input_agree(e, st, &in);
}

loom_status shard_batch_assemble(const char *who, int W, int64_t P, const int64_t *sq, const int64_t *lens,
                                 const int64_t *vals, const float *wts, const int64_t *vstart, shard_batch *out)
{
    const int64_t n = vstart[W];
    out->n_indices = n;
    out->row0 = malloc((size_t)(P * (W + 1) > 0 ? P * (W + 1) : 1) * sizeof *out->row0);
    int64_t *seg = malloc((size_t)(W * P > 0 ? W * P : 1) * sizeof *seg);
    int64_t *lseg = malloc((size_t)(W * P > 0 ? W * P : 1) * sizeof *lseg);
    if (!out->row0 || !seg || !lseg) {
        free(seg);
        free(lseg);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", who);
    }
    out->bags = 0;
    for (int64_t j = 0; j < P; j++) {
        int64_t *r0 = out->row0 + j * (W + 1);
        r0[0] = 0;
        for (int q = 0; q < W; q++)
            r0[q + 1] = r0[q] + sq[q * P + j];
        if (r0[W] > out->bags)
            out->bags = r0[W];
    }
    int64_t li = 0;
    for (int q = 0; q < W; q++) {
        int64_t at = vstart[q];
        for (int64_t j = 0; j < P; j++) {
            seg[q * P + j] = at;
            lseg[q * P + j] = li;
            for (int64_t b = 0; b < sq[q * P + j]; b++)
                at += lens[li++];
        }
    }
    const int64_t bags = out->bags;
    out->indices = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->indices);
    out->offsets = malloc((size_t)(P * bags + 1) * sizeof *out->offsets);
    out->psw = wts ? malloc((size_t)(n > 0 ? n : 1) * sizeof *out->psw) : NULL;
    if (!out->indices || !out->offsets || (wts && !out->psw)) {
        free(seg);
        free(lseg);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", who);
    }
    int64_t pos = 0, k = 0;
    out->offsets[0] = 0;
    for (int64_t j = 0; j < P; j++) {
        for (int q = 0; q < W; q++) {
            int64_t len = 0;
            const int64_t *l = lens + lseg[q * P + j];
            for (int64_t b = 0; b < sq[q * P + j]; b++) {
                len += l[b];
                out->offsets[++k] = pos + len;
            }
            if (len) {
                memcpy(out->indices + pos, vals + seg[q * P + j], (size_t)len * sizeof *vals);
                if (wts)
                    memcpy(out->psw + pos, wts + seg[q * P + j], (size_t)len * sizeof *wts);
            }
            pos += len;
        }
        for (int64_t b = out->row0[j * (W + 1) + W]; b < bags; b++)
            out->offsets[++k] = pos;
    }
    free(seg);
    free(lseg);
    return LOOM_OK;
}

void shard_kjt_parts_free(shard_kjt_parts *k)
{
    free(k->slen);
    free(k->sval);
    free(k->swt);
    free(k->lsend);
    free(k->sq);
    *k = (shard_kjt_parts){ 0 };
}

loom_status shard_kjt_pack(const rec_sebc *e, const shard_input *in, shard_kjt_parts *k)
{
    const int W = e->c.size, me = e->c.rank;
    const int64_t F = e->n_features, P = e->pair_start[me + 1] - e->pair_start[me];
    const int weighted = in->weights != NULL;
    const shard_pair *mine = e->pairs + e->pair_start[me];
    *k = (shard_kjt_parts){ 0 };
    k->lsend = calloc((size_t)W * 3, sizeof *k->lsend);
    k->sq = malloc((size_t)(W * P > 0 ? W * P : 1) * sizeof *k->sq);
    if (!k->lsend || !k->sq) {
        shard_kjt_parts_free(k);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    k->vsend = k->lsend + W;
    k->lrecv = k->lsend + 2 * W;
    /* what goes to each rank: its pairs' bags of this rank (their strides), the ids within the shard's rows,
    ** relative to its first row */
    int64_t n_len = 0, n_val = 0;
    for (int r = 0; r < W; r++) {
        for (int64_t j = e->pair_start[r]; j < e->pair_start[r + 1]; j++) {
            const shard_pair *p = &e->pairs[j];
            const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
            for (int64_t i = in->value_start[in->len_start[p->feature]];
                 i < in->value_start[in->len_start[p->feature + 1]]; i++)
                k->vsend[r] += in->values[i] >= lo && in->values[i] < hi;
            k->lsend[r] += in->stride[p->feature];
        }
        n_len += k->lsend[r];
        n_val += k->vsend[r];
    }
    /* rank q sends its strides of this rank's pairs' features (known from the all-gather of the input) */
    for (int q = 0; q < W; q++)
        for (int64_t j = 0; j < P; j++)
            k->lrecv[q] += k->sq[q * P + j] = in->strides[q * F + mine[j].feature];
    k->slen = malloc((size_t)(n_len > 0 ? n_len : 1) * sizeof *k->slen);
    k->sval = malloc((size_t)(n_val > 0 ? n_val : 1) * sizeof *k->sval);
    k->swt = weighted ? malloc((size_t)(n_val > 0 ? n_val : 1) * sizeof *k->swt) : NULL;
    if (!k->slen || !k->sval || (weighted && !k->swt)) {
        shard_kjt_parts_free(k);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    int64_t li = 0, vi = 0;
    for (int r = 0; r < W; r++)
        for (int64_t j = e->pair_start[r]; j < e->pair_start[r + 1]; j++) {
            const shard_pair *p = &e->pairs[j];
            const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
            for (int64_t b = in->len_start[p->feature]; b < in->len_start[p->feature + 1]; b++) {
                int64_t n = 0;
                for (int64_t i = in->value_start[b]; i < in->value_start[b + 1]; i++)
                    if (in->values[i] >= lo && in->values[i] < hi) {
                        if (weighted)
                            k->swt[vi] = in->weights[i];
                        k->sval[vi++] = in->values[i] - lo;
                        n++;
                    }
                k->slen[li++] = n;
            }
        }
    return LOOM_OK;
}

loom_status shard_kjt_all_to_all(const rec_sebc *e, const shard_input *in, shard_batch *out)
{
    rec_sebc *me = (rec_sebc *)e;
    const int W = e->c.size, r0 = e->c.rank;
    const int weighted = in->weights != NULL;
    *out = (shard_batch){ 0 };
    shard_kjt_parts k;
    loom_status st = shard_kjt_pack(e, in, &k);
    if (st != LOOM_OK)
        return st;
    int *cnt = calloc((size_t)W * 8, sizeof *cnt);
    int *lsend = cnt, *lsdis = cnt + W, *lrecv = cnt + 2 * W, *lrdis = cnt + 3 * W;
    int *vsend = cnt + 4 * W, *vsdis = cnt + 5 * W, *vrecv = cnt + 6 * W, *vrdis = cnt + 7 * W;
    int64_t *rlen = NULL, *rval = NULL, *vstart = malloc((size_t)(W + 1) * sizeof *vstart);
    float *rwt = NULL;
    if (!cnt || !vstart)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    int64_t ls = 0, vs = 0, lr = 0;
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        if ((st = shard_count(e->c.name, k.lsend[q], "KJT lengths", &lsend[q])) == LOOM_OK &&
            (st = shard_count(e->c.name, k.vsend[q], "KJT values", &vsend[q])) == LOOM_OK)
            st = shard_count(e->c.name, k.lrecv[q], "KJT lengths", &lrecv[q]);
        if (st == LOOM_OK && (ls > 2147483647 || vs > 2147483647 || lr > 2147483647))
            st = pk_host->fail(LOOM_EINVAL, "%s: the KJT all-to-all exceeds int displacements", e->c.name);
        lsdis[q] = (int)ls;
        vsdis[q] = (int)vs;
        lrdis[q] = (int)lr;
        ls += k.lsend[q];
        vs += k.vsend[q];
        lr += k.lrecv[q];
    }
    /* the counts of ids each rank sends here, then the three all-to-alls */
    MPI_Request req;
    if (st == LOOM_OK) {
        int rc = MPI_Ialltoall(vsend, 1, MPI_INT, vrecv, 1, MPI_INT, e->c.comm, &req);
        st = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Ialltoall (KJT value counts)")
                               : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoall failed", e->c.name, r0);
    }
    int64_t nrv = 0;
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        vrdis[q] = (int)nrv;
        vstart[q] = nrv;
        nrv += vrecv[q];
        if (nrv > 2147483647)
            st = pk_host->fail(LOOM_EINVAL, "%s: the KJT all-to-all exceeds int displacements", e->c.name);
    }
    if (st == LOOM_OK) {
        vstart[W] = nrv;
        rlen = malloc((size_t)(lr > 0 ? lr : 1) * sizeof *rlen);
        rval = malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rval);
        rwt = weighted ? malloc((size_t)(nrv > 0 ? nrv : 1) * sizeof *rwt) : NULL;
        if (!rlen || !rval || (weighted && !rwt))
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    if (st == LOOM_OK) {
        MPI_Request reqs[3];
        int rc = MPI_Ialltoallv(k.slen, lsend, lsdis, MPI_INT64_T, rlen, lrecv, lrdis, MPI_INT64_T, e->c.comm,
                                &reqs[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Ialltoallv(k.sval, vsend, vsdis, MPI_INT64_T, rval, vrecv, vrdis, MPI_INT64_T, e->c.comm,
                                &reqs[1]);
        if (rc == MPI_SUCCESS && weighted)
            rc = MPI_Ialltoallv(k.swt, vsend, vsdis, MPI_FLOAT, rwt, vrecv, vrdis, MPI_FLOAT, e->c.comm, &reqs[2]);
        if (rc != MPI_SUCCESS)
            st = pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Ialltoallv (KJT) failed", e->c.name, r0);
        static const char *const what[3] = { "MPI_Ialltoallv (KJT lengths)", "MPI_Ialltoallv (KJT values)",
                                             "MPI_Ialltoallv (KJT weights)" };
        for (int i = 0; st == LOOM_OK && i < 2 + weighted; i++)
            st = shard_wait(&me->c, &reqs[i], what[i]);
    }
    if (st == LOOM_OK)
        st = shard_batch_assemble(e->c.name, W, e->pair_start[r0 + 1] - e->pair_start[r0], k.sq, rlen, rval, rwt,
                                  vstart, out);
    /* the value counts, the lengths, the ids and the weights this rank sent */
    out->sent_bytes = (int64_t)W * (int64_t)sizeof(int) + (ls + vs) * (int64_t)sizeof(int64_t) +
                      (weighted ? vs * (int64_t)sizeof(float) : 0);
    shard_kjt_parts_free(&k);
    free(cnt);
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
    const int64_t P = e->n_dp_features, F = e->n_features;
    const int W = all_ranks ? e->c.size : 1;
    const int weighted = in->weights != NULL;
    *out = (shard_batch){ 0 };
    /* the local block: each feature's bags (its stride) and their ids, pair-major */
    int64_t n = 0, nlen = 0;
    for (int64_t j = 0; j < P; j++) {
        const int64_t f = e->dp_features[j];
        n += in->value_start[in->len_start[f + 1]] - in->value_start[in->len_start[f]];
        nlen += in->stride[f];
    }
    int64_t *lens = malloc((size_t)(nlen > 0 ? nlen : 1) * sizeof *lens);
    int64_t *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof *vals);
    float *wts = weighted ? malloc((size_t)(n > 0 ? n : 1) * sizeof *wts) : NULL;
    int64_t *glens = NULL, *gvals = NULL, *vstart = malloc((size_t)(e->c.size + 1) * sizeof *vstart);
    int64_t *sq = malloc((size_t)(e->c.size * P > 0 ? e->c.size * P : 1) * sizeof *sq);
    float *gwts = NULL;
    int *counts = calloc((size_t)e->c.size * 4, sizeof *counts);
    loom_status st = lens && vals && (!weighted || wts) && vstart && sq && counts
                         ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    int64_t at = 0, lat = 0;
    for (int64_t j = 0; st == LOOM_OK && j < P; j++) {
        const int64_t f = e->dp_features[j];
        const int64_t v0 = in->value_start[in->len_start[f]], v1 = in->value_start[in->len_start[f + 1]];
        if (in->stride[f])
            memcpy(lens + lat, in->lengths + in->len_start[f], (size_t)in->stride[f] * sizeof *lens);
        lat += in->stride[f];
        if (v1 > v0) {
            memcpy(vals + at, in->values + v0, (size_t)(v1 - v0) * sizeof *vals);
            if (weighted)
                memcpy(wts + at, in->weights + v0, (size_t)(v1 - v0) * sizeof *wts);
        }
        at += v1 - v0;
    }
    for (int q = 0; st == LOOM_OK && q < W; q++)
        for (int64_t j = 0; j < P; j++)
            sq[q * P + j] = all_ranks ? in->strides[q * F + e->dp_features[j]] : in->stride[e->dp_features[j]];
    if (st == LOOM_OK && !all_ranks) {
        vstart[0] = 0;
        vstart[1] = n;
        st = shard_batch_assemble(e->c.name, 1, P, sq, lens, vals, wts, vstart, out);
    } else if (st == LOOM_OK) {
        int nl = 0, nv = 0, *vcnt = counts, *vdis = counts + W, *lcnt = counts + 2 * W, *ldis = counts + 3 * W;
        MPI_Request req;
        if ((st = shard_count(e->c.name, nlen, "data-parallel lengths", &nl)) == LOOM_OK)
            st = shard_count(e->c.name, n, "data-parallel values", &nv);
        if (st == LOOM_OK) {
            int rc = MPI_Iallgather(&nv, 1, MPI_INT, vcnt, 1, MPI_INT, e->c.comm, &req);
            st = rc == MPI_SUCCESS ? shard_wait(&me->c, &req, "MPI_Iallgather (data-parallel value counts)")
                                   : pk_host->fail(LOOM_EIO, "%s: MPI_Iallgather failed", e->c.name);
        }
        int64_t total = 0, ltotal = 0;
        for (int q = 0; st == LOOM_OK && q < W; q++) {
            int64_t lq = 0;
            for (int64_t j = 0; j < P; j++)
                lq += sq[q * P + j];
            vdis[q] = (int)total;
            vstart[q] = total;
            total += vcnt[q];
            lcnt[q] = (int)lq;
            ldis[q] = (int)ltotal;
            ltotal += lq;
            if (total > 2147483647 || ltotal > 2147483647)
                st = pk_host->fail(LOOM_EINVAL, "%s: the data-parallel all-gather exceeds int counts", e->c.name);
        }
        vstart[W] = total;
        if (st == LOOM_OK) {
            glens = malloc((size_t)(ltotal > 0 ? ltotal : 1) * sizeof *glens);
            gvals = malloc((size_t)(total > 0 ? total : 1) * sizeof *gvals);
            gwts = weighted ? malloc((size_t)(total > 0 ? total : 1) * sizeof *gwts) : NULL;
            if (!glens || !gvals || (weighted && !gwts))
                st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        }
        if (st == LOOM_OK) {
            MPI_Request reqs[3];
            int rc = MPI_Iallgatherv(lens, nl, MPI_INT64_T, glens, lcnt, ldis, MPI_INT64_T, e->c.comm, &reqs[0]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Iallgatherv(vals, nv, MPI_INT64_T, gvals, vcnt, vdis, MPI_INT64_T, e->c.comm, &reqs[1]);
            if (rc == MPI_SUCCESS && weighted)
                rc = MPI_Iallgatherv(wts, nv, MPI_FLOAT, gwts, vcnt, vdis, MPI_FLOAT, e->c.comm, &reqs[2]);
            if (rc != MPI_SUCCESS)
                st = pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgatherv (data-parallel KJT) failed",
                                   e->c.name, e->c.rank);
            for (int i = 0; st == LOOM_OK && i < 2 + weighted; i++)
                st = shard_wait(&me->c, &reqs[i], "MPI_Iallgatherv (data-parallel KJT)");
        }
        if (st == LOOM_OK)
            st = shard_batch_assemble(e->c.name, W, P, sq, glens, gvals, gwts, vstart, out);
    }
    free(lens);
    free(vals);
    free(wts);
    free(glens);
    free(gvals);
    free(gwts);
    free(vstart);
    free(sq);
    free(counts);
    if (st != LOOM_OK)
        shard_batch_free(out);
    return st;
}

loom_status shard_kt_layout(const rec_sebc *e, const shard_input *in, int64_t **kt_start)
{
    const int64_t F = e->n_features;
    int64_t *k = malloc((size_t)(F + 1) * sizeof *k);
    if ((*kt_start = k) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    k[0] = 0;
    for (int64_t f = 0; f < F; f++)
        k[f + 1] = k[f] + in->stride[f] * (e->feature_col[f + 1] - e->feature_col[f]);
    return LOOM_OK;
}

/* Without inverse_indices a feature's bag s is sample s, so both are plain copies. */
void shard_kt_expand(const rec_sebc *e, const shard_input *in, const int64_t *kt_start, const float *kt, float *out)
{
    const int64_t F = e->n_features, B = in->B, D = e->feature_col[F];
    for (int64_t f = 0; f < F; f++) {
        const int64_t d = e->feature_col[f + 1] - e->feature_col[f];
        for (int64_t b = 0; b < B && d > 0; b++) {
            const int64_t s = in->inverse ? in->inverse[f * B + b] : b;
            memcpy(out + b * D + e->feature_col[f], kt + kt_start[f] + s * d, (size_t)d * sizeof *out);
        }
    }
}

/* The transpose of the expansion: each bag's gradient is the sum of its
** samples' gradients, added in sample order. */
void shard_kt_reduce(const rec_sebc *e, const shard_input *in, const int64_t *kt_start, const float *grad, float *kt)
{
    const int64_t F = e->n_features, B = in->B, D = e->feature_col[F];
    if (kt_start[F] > 0 && in->inverse)
        memset(kt, 0, (size_t)kt_start[F] * sizeof *kt);
    for (int64_t f = 0; f < F; f++) {
        const int64_t d = e->feature_col[f + 1] - e->feature_col[f];
        for (int64_t b = 0; b < B && d > 0; b++) {
            const float *g = grad + b * D + e->feature_col[f];
            if (in->inverse == NULL) {
                memcpy(kt + kt_start[f] + b * d, g, (size_t)d * sizeof *kt);
                continue;
            }
            float *k = kt + kt_start[f] + in->inverse[f * B + b] * d;
            for (int64_t c = 0; c < d; c++)
                k[c] += g[c];
        }
    }
}
