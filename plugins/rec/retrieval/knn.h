/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn.h - FAISS retrieval (Debian's libfaiss-dev through knn_faiss.h): the
** object class rec.knn_index and the op rec.knn_retrieve, the candidate
** generation of torchrec's two-tower retrieval example
** (examples/retrieval/two_tower_train.py: item embeddings in a faiss
** IndexIVFPQ, top-k of the query embeddings).
**
** rec.knn_index is an IndexFlatIP / IndexFlatL2 (index_type flat: exact) or
** an IndexIVFPQ over an IndexFlat coarse quantizer of the same metric
** (index_type ivfpq: nlist lists, m sub-quantizers of nbits bits, nprobe
** lists searched; defaults those of two_tower_train.py: 100, 8, 8, 8). It
** is made from one of:
**   - tensors "embeddings" f32 [N, D] and optionally "ids" i64 [N]: the
**     index is trained on the embeddings (ivfpq) and they are added;
**   - a file "index" (loom_object_options.files): a faiss.write_index file;
**   - a tensor "index" u8 [bytes]: the same bytes in memory
**     (faiss.serialize_index);
**   - nothing but the attribute dim: an empty index, trained on its first
**     add (ivfpq).
** What a file or bytes hold decides the index, its nprobe included; the
** attributes do not apply to it (rec.knn_index_set_nprobe does).
**
** Ids: an index made with ids (a flat one is then a faiss::IndexIDMap)
** needs ids on every add; a flat index made without them numbers its
** vectors 0, 1, ... in order of addition and takes no ids; an ivfpq index
** takes ids or numbers the vectors itself, as faiss does.
**
** Results (rec.knn_index_search, rec.knn_retrieve): ids [Q, k] i64 and
** scores [Q, k] f32, best first: inner products high to low (ip) or squared
** L2 distances low to high (l2), faiss's scores. Equal scores are ordered
** by increasing id. A slot without a neighbour (k over ntotal, or an IVF
** search whose probed lists hold fewer than k vectors) has id -1 and score
** -inf (ip) or +inf (l2), after every found one. A search of an empty index
** is refused.
**
** Threads: every FAISS call runs with OpenMP threads = ctx->n_threads, the
** core's budget for the call. An object serves concurrent searches; add,
** set_nprobe and save take it alone (a read-write lock).
*/
#ifndef LOOM_REC_KNN_H
#define LOOM_REC_KNN_H

#include <pthread.h>
#include <stdint.h>

#include "rec_pack.h"
#include "knn_faiss.h"

#define REC_KNN_INDEX_CLASS "rec.knn_index"
/* the largest k of a search: a bound on the outputs' size */
#define REC_KNN_MAX_K (1 << 16)

#define REC_KNN_INDEX_CLASS_ATTRS(A, op)                                                          \
    A(op, index_type, STRING, LOOM_DEFAULT_STRING("flat"), 0,                                     \
      "flat (IndexFlatIP / IndexFlatL2, exact) or ivfpq (IndexIVFPQ)", )                         \
    A(op, metric, STRING, LOOM_DEFAULT_STRING("ip"), 0,                                           \
      "ip (inner product, faiss.METRIC_INNER_PRODUCT) or l2 (squared L2, faiss.METRIC_L2)", )    \
    A(op, dim, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                                        \
      "the embeddings' D: needed only for an empty index", )                                     \
    A(op, nlist, INT, LOOM_DEFAULT_INT(100), LOOM_ATTR_POSITIVE, "ivfpq: the number of inverted lists", ) \
    A(op, m, INT, LOOM_DEFAULT_INT(8), LOOM_ATTR_POSITIVE, "ivfpq: sub-quantizers (they divide D)", ) \
    A(op, nbits, INT, LOOM_DEFAULT_INT(8), LOOM_ATTR_POSITIVE, "ivfpq: bits per sub-quantizer code (1-16)", ) \
    A(op, nprobe, INT, LOOM_DEFAULT_INT(8), LOOM_ATTR_POSITIVE, "ivfpq: inverted lists searched per query", )
PK_ATTR_ENUM(rec_knn_index_class, REC_KNN_INDEX_CLASS_ATTRS);

/* the attributes of the methods and of rec.knn_retrieve */
#define REC_KNN_SEARCH_ATTRS(A, op)                                                                   \
    A(op, k, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,                    \
      "results per query (k over ntotal leaves empty slots)", )                                  \
    A(op, nprobe, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                     \
      "IVF lists searched for this call (faiss SearchParametersIVF); 0: the index's nprobe", )
PK_ATTR_ENUM(rec_knn_search, REC_KNN_SEARCH_ATTRS);
#define REC_KNN_NPROBE_ATTRS(A, op)                                                                   \
    A(op, nprobe, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,               \
      "inverted lists searched per query from now on", )
PK_ATTR_ENUM(rec_knn_nprobe, REC_KNN_NPROBE_ATTRS);
#define REC_KNN_SAVE_ATTRS(A, op)                                                                     \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the file to write", )
PK_ATTR_ENUM(rec_knn_save, REC_KNN_SAVE_ATTRS);
#define REC_KNN_RETRIEVE_ATTRS(A, op)                                                                 \
    A(op, k, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,                    \
      "results per query (k over N leaves empty slots)", )                                       \
    A(op, metric, STRING, LOOM_DEFAULT_STRING("ip"), 0, "ip (inner product) or l2 (squared L2)", )
PK_ATTR_ENUM(rec_knn_retrieve, REC_KNN_RETRIEVE_ATTRS);

typedef struct rec_knn_index {
    rec_faiss_index *index;
    pthread_rwlock_t lock;
} rec_knn_index;

extern const loom_object_class rec_knn_index_class;

/* The op's name and a reason into a failure of the shim's message. */
loom_status rec_knn_fail(const char *op, const char *err);
/* Put equal scores in increasing id order, and the slots without a
** neighbour (id -1) last with score -inf (ip) or +inf (l2), in each of the n
** rows of k results (knn.h's contract). */
void rec_knn_order(int metric, int64_t n, int64_t k, float *scores, int64_t *ids);

loom_status rec_knn_index_add(loom_call *call);
loom_status rec_knn_index_search(loom_call *call);
loom_status rec_knn_index_set_nprobe(loom_call *call);
loom_status rec_knn_index_save(loom_call *call);
loom_status rec_knn_index_info(loom_call *call);
loom_status rec_knn_retrieve(loom_call *call);

#define REC_KNN_OPS(X)                                                                            \
    X(rec_knn_index_add_schema) X(rec_knn_index_search_schema) X(rec_knn_index_set_nprobe_schema)  \
    X(rec_knn_index_save_schema) X(rec_knn_index_info_schema) X(rec_knn_retrieve_schema)
PK_OPS_DECLARE(rec_knn_ops, REC_KNN_OPS);

#endif /* LOOM_REC_KNN_H */
