// SPDX-License-Identifier: BSD-3-Clause
//
// knn_faiss.cpp - the C interface of knn_faiss.h over FAISS's C++ API. Every
// entry point runs its FAISS calls inside one try block: a FAISS error
// (faiss::FaissException), an allocation failure or any other exception
// becomes -1 and a message, so that no exception crosses into C.
//
// An index read from bytes or a file is checked before it is used: FAISS
// trusts the sizes and counts its files carry, so a lying file could make a
// later search read out of bounds. Only the classes rec.knn_index makes are
// read (IndexFlat of IP or L2, IndexIVFPQ over an IndexFlat quantizer with
// ArrayInvertedLists, each possibly inside an IndexIDMap), and every size
// they carry is checked against the others.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <typeinfo>
#include <vector>

#include <omp.h>

#include <faiss/IVFlib.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/utils/distances.h>

#include "knn_faiss.h"

struct rec_faiss_index {
    faiss::Index *index;
};

namespace {

void set_error(char *err, size_t size, const char *what)
{
    if (err && size)
        std::snprintf(err, size, "%s", what);
}

// Run fn, turning every exception into -1 and its message.
template <typename F> int guarded(char *err, size_t size, const char *what, F fn)
{
    try {
        fn();
        return 0;
    } catch (const faiss::FaissException &e) {
        char b[600];
        std::snprintf(b, sizeof b, "%s: faiss: %s", what, e.msg.c_str());
        set_error(err, size, b);
    } catch (const std::bad_alloc &) {
        char b[200];
        std::snprintf(b, sizeof b, "%s: out of memory", what);
        set_error(err, size, b);
    } catch (const std::exception &e) {
        char b[600];
        std::snprintf(b, sizeof b, "%s: %s", what, e.what());
        set_error(err, size, b);
    } catch (...) {
        char b[200];
        std::snprintf(b, sizeof b, "%s: an unknown error", what);
        set_error(err, size, b);
    }
    return -1;
}

struct check_error : std::exception {
    char msg[300];
    explicit check_error(const char *m) { std::snprintf(msg, sizeof msg, "%s", m); }
    const char *what() const noexcept override { return msg; }
};

[[noreturn]] void refuse(const char *fmt, long long a = 0, long long b = 0)
{
    char m[300];
    std::snprintf(m, sizeof m, fmt, a, b);
    throw check_error(m);
}

faiss::MetricType faiss_metric(int metric)
{
    return metric == REC_FAISS_METRIC_L2 ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
}

// The index under an IndexIDMap, or the index itself.
const faiss::Index *inner(const faiss::Index *index)
{
    if (const auto *m = dynamic_cast<const faiss::IndexIDMap *>(index))
        return m->index;
    return index;
}

void check_flat(const faiss::IndexFlat *f)
{
    if (f->code_size != sizeof(float) * (size_t)f->d)
        refuse("an IndexFlat of dim %lld has a code size of %lld bytes", f->d, (long long)f->code_size);
    if (f->codes.size() != f->code_size * (size_t)f->ntotal)
        refuse("an IndexFlat of %lld vectors holds %lld bytes of codes", f->ntotal, (long long)f->codes.size());
}

void check_ivfpq(const faiss::IndexIVFPQ *q)
{
    const auto *coarse = dynamic_cast<const faiss::IndexFlat *>(q->quantizer);
    if (!coarse || typeid(*q->quantizer) == typeid(faiss::IndexFlat1D))
        refuse("an IndexIVFPQ's coarse quantizer is not an IndexFlat");
    check_flat(coarse);
    if (coarse->d != q->d || coarse->ntotal != (faiss::Index::idx_t)q->nlist)
        refuse("an IndexIVFPQ of nlist %lld has a coarse quantizer of %lld centroids", (long long)q->nlist,
               coarse->ntotal);
    if (coarse->metric_type != faiss::METRIC_L2 && coarse->metric_type != faiss::METRIC_INNER_PRODUCT)
        refuse("an IndexIVFPQ's coarse quantizer has metric %lld", (long long)coarse->metric_type);
    const faiss::ProductQuantizer &pq = q->pq;
    if (pq.d != (size_t)q->d || pq.M == 0 || pq.d % pq.M != 0 || pq.dsub != pq.d / pq.M)
        refuse("an IndexIVFPQ of dim %lld has a product quantizer of %lld sub-quantizers that does not divide it",
               q->d, (long long)pq.M);
    if (pq.nbits == 0 || pq.nbits > 16 || pq.ksub != (size_t)1 << pq.nbits)
        refuse("an IndexIVFPQ's product quantizer has %lld bits per code", (long long)pq.nbits);
    if (pq.centroids.size() != pq.M * pq.ksub * pq.dsub)
        refuse("an IndexIVFPQ's product quantizer holds %lld centroid values for %lld sub-quantizers",
               (long long)pq.centroids.size(), (long long)pq.M);
    if (pq.code_size != (pq.M * pq.nbits + 7) / 8 || q->code_size != pq.code_size)
        refuse("an IndexIVFPQ has a code size of %lld bytes for %lld sub-quantizers", (long long)q->code_size,
               (long long)pq.M);
    const auto *lists = dynamic_cast<const faiss::ArrayInvertedLists *>(q->invlists);
    if (!lists)
        refuse("an IndexIVFPQ's inverted lists are not in the file (only ArrayInvertedLists are read)");
    if (lists->nlist != q->nlist || lists->code_size != q->code_size || lists->codes.size() != q->nlist ||
        lists->ids.size() != q->nlist)
        refuse("an IndexIVFPQ of nlist %lld has %lld inverted lists", (long long)q->nlist, (long long)lists->nlist);
    size_t total = 0;
    for (size_t l = 0; l < q->nlist; l++) {
        if (lists->codes[l].size() != lists->ids[l].size() * q->code_size)
            refuse("inverted list %lld holds %lld ids and codes of another count", (long long)l,
                   (long long)lists->ids[l].size());
        total += lists->ids[l].size();
    }
    if (total != (size_t)q->ntotal)
        refuse("an IndexIVFPQ of %lld vectors has %lld in its inverted lists", q->ntotal, (long long)total);
    if (q->polysemous_ht != 0 && (q->polysemous_ht < 0 || q->polysemous_ht > (int)(pq.M * pq.nbits)))
        refuse("an IndexIVFPQ's polysemous threshold %lld is out of range", q->polysemous_ht);
}

// Refuse what rec.knn_index does not read, and any inconsistent size.
void check_index(const faiss::Index *index)
{
    if (index->d <= 0 || index->d > (1 << 20))
        refuse("the index has dim %lld (1 to 2^20)", index->d);
    if (index->ntotal < 0)
        refuse("the index holds %lld vectors", index->ntotal);
    if (index->metric_type != faiss::METRIC_L2 && index->metric_type != faiss::METRIC_INNER_PRODUCT)
        refuse("the index has FAISS metric %lld: rec.knn_index reads METRIC_INNER_PRODUCT (0) and METRIC_L2 (1)",
               (long long)index->metric_type);
    const faiss::Index *in = index;
    if (const auto *m = dynamic_cast<const faiss::IndexIDMap *>(index)) {
        if (!m->index || typeid(*m) != typeid(faiss::IndexIDMap))
            refuse("the index is an IndexIDMap of another kind");
        in = m->index;
        if (in->d != index->d || in->ntotal != index->ntotal || m->id_map.size() != (size_t)index->ntotal ||
            in->metric_type != index->metric_type)
            refuse("an IndexIDMap of %lld vectors maps %lld ids", index->ntotal, (long long)m->id_map.size());
        if (dynamic_cast<const faiss::IndexIDMap *>(in))
            refuse("the index is an IndexIDMap of an IndexIDMap");
    }
    if (const auto *f = dynamic_cast<const faiss::IndexFlat *>(in)) {
        if (typeid(*in) != typeid(faiss::IndexFlat) && typeid(*in) != typeid(faiss::IndexFlatIP) &&
            typeid(*in) != typeid(faiss::IndexFlatL2))
            refuse("the index is an IndexFlat variant that rec.knn_index does not read");
        check_flat(f);
    } else if (const auto *q = dynamic_cast<const faiss::IndexIVFPQ *>(in)) {
        if (typeid(*in) != typeid(faiss::IndexIVFPQ))
            refuse("the index is an IndexIVFPQ variant that rec.knn_index does not read");
        check_ivfpq(q);
    } else {
        refuse("the index is not one rec.knn_index reads (IndexFlatIP, IndexFlatL2, IndexIVFPQ, or an IndexIDMap "
               "of one)");
    }
}

// Parse with FAISS, then check the result.
faiss::Index *read_checked(faiss::IOReader *reader)
{
    faiss::Index *index = faiss::read_index(reader, faiss::IO_FLAG_SKIP_PRECOMPUTE_TABLE);
    try {
        check_index(index);
    } catch (...) {
        delete index;
        throw;
    }
    return index;
}

void finish_read(faiss::Index *index)
{
    // the precomputed table of an L2 IndexIVFPQ, skipped while reading
    if (auto *q = dynamic_cast<faiss::IndexIVFPQ *>(const_cast<faiss::Index *>(inner(index))))
        q->precompute_table();
}

// A reader over borrowed bytes (VectorIOReader would copy them).
struct bytes_reader : faiss::IOReader {
    const unsigned char *data;
    size_t size, pos = 0;
    bytes_reader(const void *d, size_t n) : data(static_cast<const unsigned char *>(d)), size(n) { name = "bytes"; }
    size_t operator()(void *ptr, size_t item, size_t n) override
    {
        if (item == 0 || n == 0 || pos >= size)   // faiss reads empty vectors into data() == nullptr
            return 0;
        size_t items = (size - pos) / item;
        if (items > n)
            items = n;
        std::memcpy(ptr, data + pos, items * item);
        pos += items * item;
        return items;
    }
};

void set_threads(int threads)
{
    omp_set_num_threads(threads > 0 ? threads : 1);
}

} // namespace

extern "C" {

int rec_faiss_new(int metric, int64_t dim, int64_t nlist, int64_t m, int64_t nbits, int with_ids,
                  rec_faiss_index **out, char *err, size_t err_size)
{
    *out = nullptr;
    return guarded(err, err_size, "making the index", [&] {
        const faiss::MetricType mt = faiss_metric(metric);
        faiss::Index *index;
        if (nlist == 0) {
            faiss::Index *flat = new faiss::IndexFlat(dim, mt);
            if (with_ids) {
                auto *map = new faiss::IndexIDMap(flat);
                map->own_fields = true;
                index = map;
            } else {
                index = flat;
            }
        } else {
            faiss::IndexFlat *coarse = new faiss::IndexFlat(dim, mt);
            auto *q = new faiss::IndexIVFPQ(coarse, dim, nlist, m, nbits, mt);
            q->own_fields = true;
            index = q;
        }
        *out = new rec_faiss_index{ index };
    });
}

void rec_faiss_free(rec_faiss_index *index)
{
    if (index) {
        delete index->index;
        delete index;
    }
}

int rec_faiss_get_info(const rec_faiss_index *h, rec_faiss_info *info, char *err, size_t err_size)
{
    return guarded(err, err_size, "reading the index", [&] {
        const faiss::Index *index = h->index;
        *info = rec_faiss_info{};
        info->dim = index->d;
        info->ntotal = index->ntotal;
        info->metric = index->metric_type == faiss::METRIC_INNER_PRODUCT ? REC_FAISS_METRIC_IP
                       : index->metric_type == faiss::METRIC_L2          ? REC_FAISS_METRIC_L2
                                                                         : -1;
        info->is_trained = index->is_trained;
        const faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(index);
        info->is_ivf = ivf != nullptr;
        info->nlist = ivf ? (int64_t)ivf->nlist : 0;
        info->nprobe = ivf ? (int64_t)ivf->nprobe : 0;
        info->needs_ids = dynamic_cast<const faiss::IndexIDMap *>(index) != nullptr;
        info->takes_ids = info->needs_ids || info->is_ivf;
    });
}

int rec_faiss_train(rec_faiss_index *h, int64_t n, const float *x, int threads, char *err, size_t err_size)
{
    return guarded(err, err_size, "training the index", [&] {
        set_threads(threads);
        if (!h->index->is_trained)
            h->index->train(n, x);
    });
}

int rec_faiss_add(rec_faiss_index *h, int64_t n, const float *x, const int64_t *ids, int threads, char *err,
                  size_t err_size)
{
    return guarded(err, err_size, "adding to the index", [&] {
        set_threads(threads);
        if (ids)
            h->index->add_with_ids(n, x, ids);
        else
            h->index->add(n, x);
    });
}

int rec_faiss_search(const rec_faiss_index *h, int64_t n, const float *x, int64_t k, int64_t nprobe,
                     float *scores, int64_t *ids, int threads, char *err, size_t err_size)
{
    return guarded(err, err_size, "searching the index", [&] {
        set_threads(threads);
        faiss::SearchParametersIVF params;
        const faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(h->index);
        if (nprobe > 0 && ivf) {
            params.nprobe = (size_t)nprobe;
            params.max_codes = ivf->max_codes;
            // an IndexIDMap forwards its parameters to the index under it
            h->index->search(n, x, k, scores, ids, &params);
        } else {
            h->index->search(n, x, k, scores, ids);
        }
    });
}

int rec_faiss_set_nprobe(rec_faiss_index *h, int64_t nprobe, char *err, size_t err_size)
{
    return guarded(err, err_size, "setting nprobe", [&] {
        faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(h->index);
        if (!ivf)
            refuse("the index is not an IVF index: nprobe does not apply");
        ivf->nprobe = (size_t)nprobe;
    });
}

int rec_faiss_write(const rec_faiss_index *h, const char *path, char *err, size_t err_size)
{
    return guarded(err, err_size, "writing the index", [&] { faiss::write_index(h->index, path); });
}

int rec_faiss_read_bytes(const void *data, size_t n, rec_faiss_index **out, char *err, size_t err_size)
{
    *out = nullptr;
    return guarded(err, err_size, "reading the index", [&] {
        bytes_reader reader(data, n);
        faiss::Index *index = read_checked(&reader);
        try {
            finish_read(index);
            *out = new rec_faiss_index{ index };
        } catch (...) {
            delete index;
            throw;
        }
    });
}

int rec_faiss_knn_exact(int metric, int64_t dim, int64_t n, const float *x, int64_t ny, const float *y, int64_t k,
                        float *scores, int64_t *ids, int threads, char *err, size_t err_size)
{
    return guarded(err, err_size, "exact search", [&] {
        set_threads(threads);
        if (metric == REC_FAISS_METRIC_L2)
            faiss::knn_L2sqr(x, y, dim, n, ny, k, scores, ids);
        else
            faiss::knn_inner_product(x, y, dim, n, ny, k, scores, ids);
    });
}

} // extern "C"
