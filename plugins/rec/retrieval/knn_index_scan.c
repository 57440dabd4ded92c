/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_index_scan.c - a walk over the bytes of a faiss index file before
** faiss parses them (knn_index_scan.h). faiss's reader trusts the counts a
** file carries: it resizes a vector to a count it has just read and only
** then reads the elements, it divides by a sub-quantizer count that may be
** 0 and shifts by a bit count that may be 64, so a short file that lies
** could make it allocate terabytes or trap. This walk follows the layout of
** faiss/impl/index_read.cpp for the classes rec.knn_index reads and
** refuses, with the offset, any count whose elements do not fit in the
** bytes left, any size faiss would divide or shift by badly, any bool that
** is not 0 or 1, every inconsistency faiss would throw on halfway (its
** reader then leaks what it allocated), and any other class; faiss then
** reads only what passed.
**
** The layout (little-endian, as faiss writes it on x86-64):
**   index header  i32 d, i64 ntotal, i64 dummy x2, u8 is_trained,
**                 i32 metric_type (+ f32 metric_arg when metric_type > 1)
**   vector<T>     u64 count, count * sizeof(T) bytes ("xb" vectors of a
**                 flat index count floats of 4 bytes)
**   IxFI IxF2 IxFl  header, xb vector of the codes
**   IxMp          header, an index, vector<i64> id_map
**   IwPQ          header, u64 nlist, u64 nprobe, the coarse index (flat),
**                 direct map (u8 type, vector<i64>, with type 2 a
**                 vector<i64 pair>), u8 by_residual, u64 code_size,
**                 product quantizer (u64 d, u64 M, u64 nbits,
**                 vector<f32> centroids), inverted lists
**   ilar          u64 nlist, u64 code_size, u32 "full" + vector<u64> sizes
**                 or "sprs" + vector<u64> (list, size) pairs, then per
**                 non-empty list its codes and its i64 ids
*/
#include <stdio.h>
#include <string.h>

#include "knn_index_scan.h"

typedef struct scan {
    const unsigned char *p;
    size_t n, at;
    char *err;
    size_t err_size;
} scan;

#define FOURCC(s) ((uint32_t)(s)[0] | (uint32_t)(s)[1] << 8 | (uint32_t)(s)[2] << 16 | (uint32_t)(s)[3] << 24)

static int refuse(scan *s, const char *what)
{
    snprintf(s->err, s->err_size, "at byte %zu of %zu: %s", s->at, s->n, what);
    return -1;
}

static int take(scan *s, void *out, size_t bytes, const char *what)
{
    if (s->n - s->at < bytes) {
        char m[160];
        snprintf(m, sizeof m, "the file ends inside %s", what);
        return refuse(s, m);
    }
    if (out)
        memcpy(out, s->p + s->at, bytes);
    s->at += bytes;
    return 0;
}

/* A vector of count elements of elem bytes: the count, then the elements. */
static int vector_of(scan *s, size_t elem, uint64_t *count_out, const char *what)
{
    uint64_t count;
    if (take(s, &count, 8, what) != 0)
        return -1;
    if (count > (s->n - s->at) / elem) {
        char m[200];
        snprintf(m, sizeof m, "%s claims %llu elements of %zu bytes, more than the %zu bytes left", what,
                 (unsigned long long)count, elem, s->n - s->at);
        return refuse(s, m);
    }
    if (count_out)
        *count_out = count;
    return take(s, NULL, (size_t)count * elem, what);
}

static int header(scan *s, int32_t *d_out, int64_t *ntotal_out)
{
    int32_t d, metric;
    int64_t ntotal;
    unsigned char is_trained;
    if (take(s, &d, 4, "the index header") != 0 || take(s, &ntotal, 8, "the index header") != 0 ||
        take(s, NULL, 16, "the index header") != 0 || take(s, &is_trained, 1, "the index header") != 0 ||
        take(s, &metric, 4, "the index header") != 0)
        return -1;
    if (is_trained > 1)
        return refuse(s, "the index's is_trained is not a bool (0 or 1)");
    if (d < 1 || d > (1 << 20))
        return refuse(s, "the index's dim is not 1 to 2^20");
    if (ntotal < 0)
        return refuse(s, "the index's ntotal is negative");
    if (metric != 0 && metric != 1)
        return refuse(s, "the index's metric is not METRIC_INNER_PRODUCT (0) or METRIC_L2 (1)");
    *d_out = d;
    if (ntotal_out)
        *ntotal_out = ntotal;
    return 0;
}

static int flat(scan *s)
{
    int32_t d;
    int64_t ntotal;
    uint64_t count;
    if (header(s, &d, &ntotal) != 0 || vector_of(s, 4, &count, "the flat index's codes") != 0)
        return -1;
    /* faiss throws on this after it has allocated the index, and leaks it */
    if (count / (uint64_t)d != (uint64_t)ntotal || count % (uint64_t)d != 0)
        return refuse(s, "the flat index's codes are not ntotal vectors of its dim");
    return 0;
}

static int inverted_lists(scan *s, uint64_t ivf_nlist, uint64_t ivf_code_size)
{
    uint32_t h, type;
    uint64_t nlist, code_size, count;
    if (take(s, &h, 4, "the inverted lists' type") != 0)
        return -1;
    if (h != FOURCC("ilar"))
        return refuse(s, "the inverted lists are not in the file (only ArrayInvertedLists, 'ilar', are read)");
    if (take(s, &nlist, 8, "the inverted lists") != 0 || take(s, &code_size, 8, "the inverted lists") != 0 ||
        take(s, &type, 4, "the inverted lists") != 0)
        return -1;
    if (nlist != ivf_nlist)
        return refuse(s, "the inverted lists' nlist differs from the index's");
    if (code_size != ivf_code_size)
        return refuse(s, "the inverted lists' code size differs from the index's");
    /* the list sizes: the bytes of each list's codes and ids must be left */
    const size_t sizes_at = s->at;
    if (type == FOURCC("full")) {
        if (vector_of(s, 8, &count, "the list sizes") != 0)
            return -1;
        if (count != nlist)
            return refuse(s, "the list sizes are not one per list");
    } else if (type == FOURCC("sprs")) {
        if (vector_of(s, 8, &count, "the list sizes") != 0)
            return -1;
        if (count % 2 != 0)
            return refuse(s, "the sparse list sizes are not (list, size) pairs");
    } else {
        return refuse(s, "the list sizes are neither 'full' nor 'sprs'");
    }
    const unsigned char *sizes = s->p + sizes_at + 8;
    uint64_t need = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v, list_size;
        memcpy(&v, sizes + 8 * i, 8);
        if (type == FOURCC("sprs")) {
            if (i % 2 == 0) {
                if (v >= nlist)
                    return refuse(s, "a sparse list size names a list past nlist");
                continue;
            }
        }
        list_size = v;
        const uint64_t per = code_size + 8, left = s->n - s->at;
        if (list_size > left / per || need > left - list_size * per)
            return refuse(s, "the inverted lists claim more codes and ids than the bytes left");
        need += list_size * per;
    }
    return take(s, NULL, (size_t)need, "the inverted lists' codes and ids");
}

static int ivfpq(scan *s)
{
    int32_t d, coarse_d;
    uint64_t nlist, nprobe, code_size, pd, M, nbits, count;
    uint32_t h;
    unsigned char dm_type, by_residual;
    if (header(s, &d, NULL) != 0 || take(s, &nlist, 8, "the IVF header") != 0 ||
        take(s, &nprobe, 8, "the IVF header") != 0)
        return -1;
    if (nlist < 1 || nlist > (1u << 24))
        return refuse(s, "the IVF index's nlist is not 1 to 2^24");
    if (take(s, &h, 4, "the coarse quantizer's type") != 0)
        return -1;
    if (h != FOURCC("IxFI") && h != FOURCC("IxF2") && h != FOURCC("IxFl"))
        return refuse(s, "the coarse quantizer is not an IndexFlat");
    const size_t coarse_at = s->at;
    if (flat(s) != 0)
        return -1;
    memcpy(&coarse_d, s->p + coarse_at, 4);
    if (coarse_d != d)
        return refuse(s, "the coarse quantizer's dim differs from the index's");
    if (take(s, &dm_type, 1, "the direct map") != 0 || vector_of(s, 8, NULL, "the direct map") != 0)
        return -1;
    if (dm_type > 2)
        return refuse(s, "the direct map's type is not 0, 1 or 2");
    if (dm_type == 2 && vector_of(s, 16, NULL, "the direct map's hash table") != 0)
        return -1;
    if (take(s, &by_residual, 1, "the IVFPQ fields") != 0 || take(s, &code_size, 8, "the IVFPQ fields") != 0 ||
        take(s, &pd, 8, "the product quantizer") != 0 || take(s, &M, 8, "the product quantizer") != 0 ||
        take(s, &nbits, 8, "the product quantizer") != 0)
        return -1;
    if (by_residual > 1)
        return refuse(s, "the IVFPQ's by_residual is not a bool (0 or 1)");
    if (pd != (uint64_t)d)
        return refuse(s, "the product quantizer's dim differs from the index's");
    if (M < 1 || pd % M != 0)
        return refuse(s, "the product quantizer's sub-quantizer count does not divide the dim");
    if (nbits < 1 || nbits > 16)
        return refuse(s, "the product quantizer's bits per code are not 1 to 16");
    if (code_size != (M * nbits + 7) / 8)
        return refuse(s, "the IVFPQ code size does not match its product quantizer");
    /* faiss sizes the centroids d * 2^nbits before it reads them */
    if ((pd << nbits) > (s->n - s->at) / 4)
        return refuse(s, "the product quantizer's centroids do not fit in the bytes left");
    if (vector_of(s, 4, &count, "the product quantizer's centroids") != 0)
        return -1;
    if (count != pd << nbits)
        return refuse(s, "the product quantizer's centroids are not dim * 2^nbits values");
    return inverted_lists(s, nlist, code_size);
}

int rec_knn_index_scan(const void *data, size_t n, char *err, size_t err_size)
{
    scan s = { data, n, 0, err, err_size };
    uint32_t h;
    if (take(&s, &h, 4, "the index type") != 0)
        return -1;
    if (h == FOURCC("IxMp")) {
        int32_t d;
        if (header(&s, &d, NULL) != 0 || take(&s, &h, 4, "the type of the index under the IndexIDMap") != 0)
            return -1;
        if (h == FOURCC("IxMp"))
            return refuse(&s, "an IndexIDMap of an IndexIDMap");
        int rc = h == FOURCC("IwPQ") ? ivfpq(&s)
                 : h == FOURCC("IxFI") || h == FOURCC("IxF2") || h == FOURCC("IxFl") ? flat(&s)
                                                                                     : refuse(&s, "the index under "
                                                                                              "the IndexIDMap is not "
                                                                                              "IndexFlat or IndexIVFPQ");
        return rc != 0 ? -1 : vector_of(&s, 8, NULL, "the IndexIDMap's ids");
    }
    if (h == FOURCC("IwPQ"))
        return ivfpq(&s);
    if (h == FOURCC("IxFI") || h == FOURCC("IxF2") || h == FOURCC("IxFl"))
        return flat(&s);
    return refuse(&s, "not an index rec.knn_index reads (faiss's IndexFlatIP 'IxFI', IndexFlatL2 'IxF2', IndexFlat "
                      "'IxFl', IndexIVFPQ 'IwPQ', IndexIDMap 'IxMp' of one)");
}
