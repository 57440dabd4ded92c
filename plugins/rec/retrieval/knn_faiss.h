/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_faiss.h - a C interface to the parts of FAISS (Debian's libfaiss-dev,
** C++ only) that rec.knn_index and rec.knn_retrieve use, implemented in
** knn_faiss.cpp.
**
** Contract of every function: it returns 0 on success; on failure it
** returns -1 and writes a one-line message into err (err_size bytes, always
** terminated): every exception FAISS throws (faiss::FaissException,
** std::bad_alloc, any std::exception) is caught there and never crosses
** into C. `threads` is the OpenMP thread count FAISS runs the call with (the
** core's ctx->n_threads); it is set on the calling thread only.
**
** Ids: an index made with ids (with_ids) is a flat index wrapped in
** faiss::IndexIDMap, or an IVF index (which stores ids itself); an index
** made without them numbers its vectors 0, 1, ... in the order they are
** added, as FAISS does.
*/
#ifndef LOOM_REC_KNN_FAISS_H
#define LOOM_REC_KNN_FAISS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rec_faiss_index rec_faiss_index;   /* a faiss::Index, owned */

enum { REC_FAISS_METRIC_IP = 0, REC_FAISS_METRIC_L2 = 1 };

/* What an index is, for the checks of the C side. */
typedef struct rec_faiss_info {
    int64_t dim, ntotal;
    int metric;          /* REC_FAISS_METRIC_*, or -1 for another FAISS metric */
    int is_trained;
    int is_ivf;          /* an IVF index (nprobe applies), possibly inside an IndexIDMap */
    int64_t nlist, nprobe;
    int needs_ids;       /* every add needs ids (an IndexIDMap) */
    int takes_ids;       /* an add may give ids (an IndexIDMap or an IVF index) */
} rec_faiss_info;

/* IndexFlatIP / IndexFlatL2 (nlist 0), or IndexIVFPQ over a flat coarse
** quantizer of the same metric (nlist, m sub-quantizers of nbits bits). */
int rec_faiss_new(int metric, int64_t dim, int64_t nlist, int64_t m, int64_t nbits, int with_ids,
                  rec_faiss_index **out, char *err, size_t err_size);
void rec_faiss_free(rec_faiss_index *index);
int rec_faiss_get_info(const rec_faiss_index *index, rec_faiss_info *info, char *err, size_t err_size);

/* Index::train on n vectors (a no-op for a flat index). */
int rec_faiss_train(rec_faiss_index *index, int64_t n, const float *x, int threads, char *err, size_t err_size);
/* Index::add (ids NULL) or Index::add_with_ids. */
int rec_faiss_add(rec_faiss_index *index, int64_t n, const float *x, const int64_t *ids, int threads, char *err,
                  size_t err_size);
/* Index::search: k results per query in scores [n, k] and ids [n, k], best
** first; nprobe > 0 searches that many lists of an IVF index for this call
** only (faiss::SearchParametersIVF), 0 keeps the index's own. */
int rec_faiss_search(const rec_faiss_index *index, int64_t n, const float *x, int64_t k, int64_t nprobe,
                     float *scores, int64_t *ids, int threads, char *err, size_t err_size);
/* IndexIVF::nprobe of an IVF index. */
int rec_faiss_set_nprobe(rec_faiss_index *index, int64_t nprobe, char *err, size_t err_size);

/* faiss::write_index to a file; faiss::read_index from bytes (the format
** of write_index, whichever FAISS wrote them: a file mapped whole), then
** the checks of knn_faiss.cpp: only IndexFlat (IP, L2), IndexIVFPQ over an
** IndexFlat with its inverted lists in the bytes, and an IndexIDMap of one
** are read, with every size consistent. */
int rec_faiss_write(const rec_faiss_index *index, const char *path, char *err, size_t err_size);
int rec_faiss_read_bytes(const void *data, size_t n, rec_faiss_index **out, char *err, size_t err_size);

/* Exact top-k of n queries among ny vectors y [ny, dim] (faiss's
** knn_inner_product / knn_L2sqr: scores are inner products, or squared L2
** distances), k <= ny. */
int rec_faiss_knn_exact(int metric, int64_t dim, int64_t n, const float *x, int64_t ny, const float *y, int64_t k,
                        float *scores, int64_t *ids, int threads, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_REC_KNN_FAISS_H */
