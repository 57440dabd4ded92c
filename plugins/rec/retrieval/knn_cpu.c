/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_cpu.c - the methods of rec.knn_index and the op rec.knn_retrieve
** (knn.h): the checks, the object's lock, and the order of results; the
** search itself is faiss's (knn_faiss.h), on ctx->n_threads OpenMP threads.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "knn.h"
#include "knn_blas.h"

#define W REC_KNN_INDEX_CLASS

loom_status rec_knn_fail(const char *op, const char *err)
{
    return pk_host->fail(LOOM_EINVAL, "%s: %s", op, err);
}

/* a is better placed than b: the better score, then the smaller id; no
** neighbour (-1) after every neighbour */
static int before(int metric, float sa, int64_t ia, float sb, int64_t ib)
{
    if ((ia < 0) != (ib < 0))
        return ib < 0;
    if (ia < 0)
        return 0;
    if (sa != sb)
        return metric == REC_FAISS_METRIC_L2 ? sa < sb : sa > sb;
    return ia < ib;
}

void rec_knn_order(int metric, int64_t n, int64_t k, float *scores, int64_t *ids)
{
    const float none = metric == REC_FAISS_METRIC_L2 ? INFINITY : -INFINITY;
    for (int64_t r = 0; r < n; r++) {
        float *s = scores + r * k;
        int64_t *id = ids + r * k;
        /* insertion sort: faiss gives the row sorted by score already, so
        ** only runs of equal scores (and the empty slots) move */
        for (int64_t i = 1; i < k; i++) {
            const float sv = s[i];
            const int64_t iv = id[i];
            int64_t j = i;
            while (j > 0 && before(metric, sv, iv, s[j - 1], id[j - 1])) {
                s[j] = s[j - 1];
                id[j] = id[j - 1];
                j--;
            }
            s[j] = sv;
            id[j] = iv;
        }
        for (int64_t i = 0; i < k; i++)
            if (id[i] < 0) {
                id[i] = -1;
                s[i] = none;
            }
    }
}

static rec_knn_index *state_of(loom_call *call)
{
    rec_knn_index *s = call->object;
    if (s == NULL)
        pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", call->schema->name, W);
    return s;
}

static loom_status info_of(loom_call *call, const rec_knn_index *s, rec_faiss_info *info)
{
    char err[640];
    if (rec_faiss_get_info(s->index, info, err, sizeof err) != 0)
        return rec_knn_fail(call->schema->name, err);
    return LOOM_OK;
}

/* 'name' is f32 [rows, dim], compact. */
static loom_status check_rows(const loom_tensor *t, const char *name, int64_t dim)
{
    char b[96];
    if (t->shape[1] != dim)
        return pk_host->fail(LOOM_EINVAL, "'%s' is %s: the index holds vectors of dim %lld", name,
                             pk_describe(pk_host, t, b, sizeof b), (long long)dim);
    if (loom_numel(t) > 0 && !loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major)", name,
                             pk_describe(pk_host, t, b, sizeof b));
    return LOOM_OK;
}

/* ids [Q, k] and scores [Q, k], after checking that Q * k fits. */
static loom_status alloc_results(loom_call *call, int64_t Q, int64_t k, int64_t **ids, float **scores)
{
    if (k > REC_KNN_MAX_K)
        return pk_host->fail(LOOM_EINVAL, "k %lld is over %d", (long long)k, REC_KNN_MAX_K);
    if (Q > INT64_MAX / 8 / k)
        return pk_host->fail(LOOM_EINVAL, "%lld queries of k %lld: the results overflow", (long long)Q, (long long)k);
    const int64_t shape[2] = { Q, k };
    loom_tensor *ti, *ts;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 2, shape, &ti);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 2, shape, &ts);
    if (st != LOOM_OK)
        return st;
    *ids = Q ? loom_data(ti) : NULL;
    *scores = Q ? loom_data(ts) : NULL;
    return LOOM_OK;
}

loom_status rec_knn_index_add(loom_call *call)
{
    rec_knn_index *s = state_of(call);
    if (!s)
        return LOOM_EINVAL;
    const loom_tensor *x = call->inputs[0], *ids = call->n_inputs > 1 ? call->inputs[1] : NULL;
    char err[640], b[96], bi[96];
    pthread_rwlock_wrlock(&s->lock);
    rec_faiss_info info;
    loom_status st = info_of(call, s, &info);
    if (st == LOOM_OK)
        st = check_rows(x, "embeddings", info.dim);
    const int64_t N = x->shape[0];
    if (st == LOOM_OK && ids && (ids->shape[0] != N || (N > 0 && !loom_is_contiguous(ids))))
        st = pk_host->fail(LOOM_EINVAL, "'ids' is %s: it needs one compact i64 per row of 'embeddings' %s",
                           pk_describe(pk_host, ids, bi, sizeof bi), pk_describe(pk_host, x, b, sizeof b));
    if (st == LOOM_OK && ids && !info.takes_ids)
        st = pk_host->fail(LOOM_EINVAL, "'ids': this index was made without ids: it numbers its vectors in order "
                           "of addition and takes none");
    if (st == LOOM_OK && !ids && info.needs_ids)
        st = pk_host->fail(LOOM_EINVAL, "'ids' is missing: this index was made with ids and needs them on every "
                           "add");
    if (st == LOOM_OK && !info.is_trained && N > 0 && N < info.nlist)
        st = pk_host->fail(LOOM_EINVAL, "'embeddings' %s: the index is not trained yet and is trained on this "
                           "batch: it needs at least nlist (%lld) rows", pk_describe(pk_host, x, b, sizeof b),
                           (long long)info.nlist);
    if (st == LOOM_OK && N > 0) {
        const float *xd = loom_data(x);
        rec_knn_blas_use(call->ctx);
        if (rec_faiss_train(s->index, N, xd, call->ctx->n_threads, err, sizeof err) != 0 ||
            rec_faiss_add(s->index, N, xd, ids ? loom_data(ids) : NULL, call->ctx->n_threads, err, sizeof err) != 0)
            st = rec_knn_fail(call->schema->name, err);
        rec_knn_blas_use(NULL);
    }
    pthread_rwlock_unlock(&s->lock);
    return st;
}

loom_status rec_knn_index_search(loom_call *call)
{
    rec_knn_index *s = state_of(call);
    if (!s)
        return LOOM_EINVAL;
    const loom_tensor *q = call->inputs[0];
    const int64_t k = call->attrs[PK_ATTR(rec_knn_search, k)].u.i;
    const int64_t nprobe = call->attrs[PK_ATTR(rec_knn_search, nprobe)].u.i;
    char err[640];
    pthread_rwlock_rdlock(&s->lock);
    rec_faiss_info info;
    loom_status st = info_of(call, s, &info);
    if (st == LOOM_OK)
        st = check_rows(q, "queries", info.dim);
    if (st == LOOM_OK && info.ntotal == 0)
        st = pk_host->fail(LOOM_EINVAL, "the index is empty%s: add embeddings (rec.knn_index_add) before searching",
                           info.is_trained ? "" : " and not trained");
    if (st == LOOM_OK && nprobe > 0 && !info.is_ivf)
        st = pk_host->fail(LOOM_EINVAL, "nprobe %lld: the index is not an IVF index", (long long)nprobe);
    int64_t *ids = NULL;
    float *scores = NULL;
    if (st == LOOM_OK)
        st = alloc_results(call, q->shape[0], k, &ids, &scores);
    if (st == LOOM_OK && q->shape[0] > 0) {
        rec_knn_blas_use(call->ctx);
        const int rc = rec_faiss_search(s->index, q->shape[0], loom_data(q), k, nprobe, scores, ids,
                                        call->ctx->n_threads, err, sizeof err);
        rec_knn_blas_use(NULL);
        if (rc != 0)
            st = rec_knn_fail(call->schema->name, err);
        else
            rec_knn_order(info.metric, q->shape[0], k, scores, ids);
    }
    pthread_rwlock_unlock(&s->lock);
    return st;
}

loom_status rec_knn_index_set_nprobe(loom_call *call)
{
    rec_knn_index *s = state_of(call);
    if (!s)
        return LOOM_EINVAL;
    const int64_t nprobe = call->attrs[PK_ATTR(rec_knn_nprobe, nprobe)].u.i;
    char err[640];
    pthread_rwlock_wrlock(&s->lock);
    rec_faiss_info info;
    loom_status st = info_of(call, s, &info);
    if (st == LOOM_OK && !info.is_ivf)
        st = pk_host->fail(LOOM_EINVAL, "nprobe %lld: the index is not an IVF index", (long long)nprobe);
    if (st == LOOM_OK && rec_faiss_set_nprobe(s->index, nprobe, err, sizeof err) != 0)
        st = rec_knn_fail(call->schema->name, err);
    pthread_rwlock_unlock(&s->lock);
    return st;
}

loom_status rec_knn_index_save(loom_call *call)
{
    rec_knn_index *s = state_of(call);
    if (!s)
        return LOOM_EINVAL;
    const char *path = call->attrs[PK_ATTR(rec_knn_save, path)].u.s;
    char err[640];
    if (!path[0])
        return pk_host->fail(LOOM_EINVAL, "'path' is empty");
    pthread_rwlock_rdlock(&s->lock);
    loom_status st = LOOM_OK;
    if (rec_faiss_write(s->index, path, err, sizeof err) != 0)
        st = pk_host->fail(LOOM_EINVAL, "path '%s': %s", path, err);
    pthread_rwlock_unlock(&s->lock);
    return st;
}

loom_status rec_knn_index_info(loom_call *call)
{
    rec_knn_index *s = state_of(call);
    if (!s)
        return LOOM_EINVAL;
    pthread_rwlock_rdlock(&s->lock);
    rec_faiss_info info;
    loom_status st = info_of(call, s, &info);
    pthread_rwlock_unlock(&s->lock);
    const int64_t values[6] = { info.ntotal, info.dim, info.is_trained, info.metric, info.nlist, info.nprobe };
    const int64_t one = 1;
    for (int i = 0; i < 6 && st == LOOM_OK; i++) {
        loom_tensor *t;
        if ((st = pk_host->alloc_output(call, i, LOOM_DTYPE_I64, 1, &one, &t)) == LOOM_OK)
            *(int64_t *)loom_data(t) = values[i];
    }
    return st;
}

loom_status rec_knn_retrieve(loom_call *call)
{
    const loom_tensor *q = call->inputs[0], *items = call->inputs[1];
    const int64_t k = call->attrs[PK_ATTR(rec_knn_retrieve, k)].u.i;
    const int metric = strcmp(call->attrs[PK_ATTR(rec_knn_retrieve, metric)].u.s, "l2") == 0 ? REC_FAISS_METRIC_L2
                                                                                              : REC_FAISS_METRIC_IP;
    char err[640], b[96], bq[96];
    const int64_t N = items->shape[0], D = items->shape[1], Q = q->shape[0];
    if (q->shape[1] != D)
        return pk_host->fail(LOOM_EINVAL, "'queries' is %s and 'items' %s: they need one D",
                             pk_describe(pk_host, q, bq, sizeof bq), pk_describe(pk_host, items, b, sizeof b));
    loom_status st = check_rows(items, "items", D);
    if (st == LOOM_OK)
        st = check_rows(q, "queries", D);
    int64_t *ids = NULL;
    float *scores = NULL;
    if (st == LOOM_OK)
        st = alloc_results(call, Q, k, &ids, &scores);
    if (st != LOOM_OK || Q == 0)
        return st;
    /* faiss's exact search takes k <= N: the slots past N are empty */
    const int64_t kk = k < N ? k : N;
    if (kk == 0) {   /* no items: every slot is empty */
        for (int64_t i = 0; i < Q * k; i++)
            ids[i] = -1;
        rec_knn_order(metric, Q, k, scores, ids);
        return LOOM_OK;
    }
    if (kk == k) {
        rec_knn_blas_use(call->ctx);
        const int rc = rec_faiss_knn_exact(metric, D, Q, loom_data(q), N, loom_data(items), k, scores, ids,
                                           call->ctx->n_threads, err, sizeof err);
        rec_knn_blas_use(NULL);
        if (rc != 0)
            return rec_knn_fail(call->schema->name, err);
    } else {
        /* k over N: search kk into the scratch, then widen each row to k */
        float *ks = pk_host->scratch(call->ctx, (size_t)(Q * kk) * sizeof *ks);
        int64_t *ki = pk_host->scratch(call->ctx, (size_t)(Q * kk) * sizeof *ki);
        if (!ks || !ki)
            return LOOM_ENOMEM;
        rec_knn_blas_use(call->ctx);
        const int rc = rec_faiss_knn_exact(metric, D, Q, loom_data(q), N, loom_data(items), kk, ks, ki,
                                           call->ctx->n_threads, err, sizeof err);
        rec_knn_blas_use(NULL);
        if (rc != 0)
            return rec_knn_fail(call->schema->name, err);
        for (int64_t r = 0; r < Q; r++)
            for (int64_t i = 0; i < k; i++) {
                ids[r * k + i] = i < kk ? ki[r * kk + i] : -1;
                scores[r * k + i] = i < kk ? ks[r * kk + i] : 0.0f;
            }
    }
    rec_knn_order(metric, Q, k, scores, ids);
    return LOOM_OK;
}
