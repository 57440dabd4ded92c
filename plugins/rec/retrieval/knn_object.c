/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_object.c - create and destroy of rec.knn_index (knn.h): a new faiss
** index from the class attributes, trained on and filled with the
** "embeddings" tensor, or a faiss index read from the "index" file or
** tensor. Every argument is checked here before faiss sees it (faiss
** aborts a few of its own checks with an exception the shim turns into a
** message, but a clear one names the argument).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knn.h"
#include "knn_index_scan.h"
#include "knn_blas.h"

#define W REC_KNN_INDEX_CLASS
#define A_(name) args->attrs[PK_ATTR(rec_knn_index_class, name)]

static void knn_index_destroy(void *state)
{
    rec_knn_index *s = state;
    if (!s)
        return;
    rec_faiss_free(s->index);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

static const char *file_of(const loom_object_args *args, const char *name)
{
    for (int32_t i = 0; i < args->n_files && args->files != NULL; i++)
        if (args->files[i].name != NULL && strcmp(args->files[i].name, name) == 0)
            return args->files[i].path;
    return NULL;
}

static const loom_tensor *tensor_of(const loom_object_args *args, const char *name)
{
    const loom_tensor *t = NULL;
    if (args->weights && pk_host->safetensors_get(args->weights, name, &t) != LOOM_OK)
        t = NULL;
    return t;
}

/* Every tensor of the weights is one this class reads. */
static loom_status check_tensor_names(const loom_object_args *args)
{
    if (!args->weights)
        return LOOM_OK;
    const int64_t n = pk_host->safetensors_count(args->weights);
    for (int64_t i = 0; i < n; i++) {
        const char *name = pk_host->safetensors_name(args->weights, i);
        if (strcmp(name, "embeddings") != 0 && strcmp(name, "ids") != 0 && strcmp(name, "index") != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: tensor '%s' is not one it reads (embeddings, ids, index)", W,
                                 name);
    }
    return LOOM_OK;
}

/* An index read from a file or bytes: faiss's format, checked by the shim. */
static loom_status read_index(const loom_object_args *args, const char *path, const loom_tensor *bytes,
                              rec_faiss_index **out)
{
    char err[640], b[96];
    if (path && bytes)
        return pk_host->fail(LOOM_EINVAL, "%s: both a file 'index' and a tensor 'index': give one", W);
    if (tensor_of(args, "embeddings") || tensor_of(args, "ids"))
        return pk_host->fail(LOOM_EINVAL, "%s: an index read from %s takes no 'embeddings' or 'ids' at create: "
                             "add them with rec.knn_index_add", W, path ? "a file" : "bytes");
    int rc;
    if (bytes) {
        if (loom_tensor_dtype_of(bytes) != LOOM_DTYPE_U8 || bytes->ndim != 1)
            return pk_host->fail(LOOM_EINVAL, "%s: tensor 'index' is %s, expected u8[bytes] (faiss.serialize_index)",
                                 W, pk_describe(pk_host, bytes, b, sizeof b));
        const size_t n = (size_t)bytes->shape[0];
        rc = rec_knn_index_scan(loom_data(bytes), n, err, sizeof err);
        if (rc == 0)
            rc = rec_faiss_read_bytes(loom_data(bytes), n, out, err, sizeof err);
        if (rc != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: tensor 'index' (%lld bytes): %s", W, (long long)bytes->shape[0],
                                 err);
        return LOOM_OK;
    }
    const void *data = NULL;
    size_t n = 0;
    if (pk_host->map_file(path, &data, &n) != LOOM_OK)
        return pk_host->fail(LOOM_EINVAL, "%s: file 'index' %s cannot be read", W, path);
    rc = rec_knn_index_scan(data, n, err, sizeof err);
    if (rc == 0)
        rc = rec_faiss_read_bytes(data, n, out, err, sizeof err);
    pk_host->unmap_file(data, n);
    if (rc != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: file 'index' %s (%zu bytes): %s", W, path, n, err);
    return LOOM_OK;
}

/* A new index from the attributes, filled with the embeddings when given. */
static loom_status new_index(const loom_object_args *args, rec_faiss_index **out)
{
    char err[640], b[96], bi[96];
    const loom_tensor *x = tensor_of(args, "embeddings"), *ids = tensor_of(args, "ids");
    const int ivfpq = strcmp(A_(index_type).u.s, "ivfpq") == 0;
    const int metric = strcmp(A_(metric).u.s, "l2") == 0 ? REC_FAISS_METRIC_L2 : REC_FAISS_METRIC_IP;
    int64_t dim = A_(dim).is_set ? A_(dim).u.i : 0, N = 0;
    if (ids && !x)
        return pk_host->fail(LOOM_EINVAL, "%s: tensor 'ids' without 'embeddings'", W);
    if (x) {
        if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || x->ndim != 2 || x->shape[1] < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: tensor 'embeddings' is %s, expected f32[N, D] with D >= 1", W,
                                 pk_describe(pk_host, x, b, sizeof b));
        if (A_(dim).is_set && dim != x->shape[1])
            return pk_host->fail(LOOM_EINVAL, "%s: tensor 'embeddings' is %s but dim is %lld", W,
                                 pk_describe(pk_host, x, b, sizeof b), (long long)dim);
        dim = x->shape[1];
        N = x->shape[0];
        if (ids && (loom_tensor_dtype_of(ids) != LOOM_DTYPE_I64 || ids->ndim != 1 || ids->shape[0] != N))
            return pk_host->fail(LOOM_EINVAL, "%s: tensor 'ids' is %s, expected i64[%lld] (one per row of "
                                 "'embeddings' %s)", W, pk_describe(pk_host, ids, bi, sizeof bi), (long long)N,
                                 pk_describe(pk_host, x, b, sizeof b));
    } else if (!A_(dim).is_set) {
        return pk_host->fail(LOOM_EINVAL, "%s needs one of: tensor 'embeddings' f32[N, D] (with 'ids' i64[N] "
                             "optionally), file or tensor 'index' (a faiss index), or dim (an empty index)", W);
    }
    if (dim > (1 << 20))
        return pk_host->fail(LOOM_EINVAL, "%s: dim %lld is over 2^20", W, (long long)dim);
    const int64_t nlist = A_(nlist).u.i, m = A_(m).u.i, nbits = A_(nbits).u.i;
    if (ivfpq) {
        if (dim % m != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: m %lld does not divide the embeddings' D %lld (IndexIVFPQ "
                                 "splits each vector into m sub-vectors)", W, (long long)m, (long long)dim);
        if (nbits > 16)
            return pk_host->fail(LOOM_EINVAL, "%s: nbits %lld: 1 to 16 bits per code", W, (long long)nbits);
        if (nlist > (1 << 24))
            return pk_host->fail(LOOM_EINVAL, "%s: nlist %lld is over 2^24", W, (long long)nlist);
        if (x && (N < nlist || N < ((int64_t)1 << nbits)))
            return pk_host->fail(LOOM_EINVAL, "%s: ivfpq is trained on 'embeddings' %s: it needs at least nlist "
                                 "(%lld) and 2^nbits (%lld) rows", W, pk_describe(pk_host, x, b, sizeof b),
                                 (long long)nlist, (long long)1 << nbits);
    }
    if (rec_faiss_new(metric, dim, ivfpq ? nlist : 0, m, nbits, !ivfpq && ids != NULL, out, err, sizeof err) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: %s", W, err);
    if (ivfpq && rec_faiss_set_nprobe(*out, A_(nprobe).u.i, err, sizeof err) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: %s", W, err);
    if (!x || N == 0)
        return LOOM_OK;
    const float *xd = loom_data(x);
    const int threads = args->ctx ? args->ctx->n_threads : 1;
    rec_knn_blas_use(args->ctx);
    const int rc = rec_faiss_train(*out, N, xd, threads, err, sizeof err) != 0 ||
                   rec_faiss_add(*out, N, xd, ids ? loom_data(ids) : NULL, threads, err, sizeof err) != 0;
    rec_knn_blas_use(NULL);
    if (rc)
        return pk_host->fail(LOOM_EINVAL, "%s: tensor 'embeddings' %s: %s", W, pk_describe(pk_host, x, b, sizeof b),
                             err);
    return LOOM_OK;
}

static loom_status knn_index_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    loom_status st = check_tensor_names(args);
    if (st != LOOM_OK)
        return st;
    const char *path = file_of(args, "index");
    const loom_tensor *bytes = tensor_of(args, "index");
    rec_faiss_index *index = NULL;
    st = path || bytes ? read_index(args, path, bytes, &index) : new_index(args, &index);
    if (st != LOOM_OK) {
        rec_faiss_free(index);
        return st;
    }
    rec_knn_index *s = calloc(1, sizeof *s);
    if (!s || pthread_rwlock_init(&s->lock, NULL) != 0) {
        free(s);
        rec_faiss_free(index);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    }
    s->index = index;
    *state_out = s;
    return LOOM_OK;
}

PK_ATTR_TABLE(rec_knn_index_class, REC_KNN_INDEX_CLASS_ATTRS);

static const char *const index_types[] = { "flat", "ivfpq", NULL };
static const char *const metrics[] = { "ip", "l2", NULL };
static const loom_attr_choices knn_index_choices[] = {
    { PK_ATTR(rec_knn_index_class, index_type), index_types },
    { PK_ATTR(rec_knn_index_class, metric), metrics },
};

const loom_object_class rec_knn_index_class = {
    .struct_size = sizeof(loom_object_class),
    .name = W,
    .doc = "a FAISS index of item embeddings: IndexFlatIP / IndexFlatL2 (exact) or IndexIVFPQ, from tensors "
           "'embeddings' f32[N, D] (+ 'ids' i64[N]), a faiss.write_index file 'index' or its bytes (tensor "
           "'index' u8); methods rec.knn_index_add, _search, _set_nprobe, _save, _info",
    PK_ATTRS(rec_knn_index_class_attrs),
    .create = knn_index_create,
    .destroy = knn_index_destroy,
    PK_CHOICES(knn_index_choices),
};
