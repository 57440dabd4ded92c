/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_knn_index.c - feeds: rec.knn_index's reader of faiss index
** files (knn_index_scan.c's bounds, then faiss::read_index and the checks
** of knn_faiss.cpp). The first byte chooses how the bytes arrive (bit 0: a
** file 'index' through fz_file, else a u8 tensor 'index'), k (bits 1-4)
** and nprobe (bits 5-7, 0: the file's); the rest is the index file.
** Asserts: no sanitizer report; a refused file sets a message; an accepted
** one reports its dim and ntotal, searches two queries (every byte of the
** results read), takes three more vectors when it
** numbers them itself, and searches again.
*/
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,rec");
    FZ_CHECK(loom_op_find("rec.knn_index_search") != NULL, "the rec pack did not load with FAISS");
    return 0;
}

static loom_status call(loom_object *o, const char *op, const loom_tensor *const *in, int32_t n_in,
                        const loom_attrs *a, loom_tensor **out, int32_t n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    return loom_run(op, in, n_in, a, out, n_out, &opt);
}

static void search(loom_object *o, const loom_tensor *q, int64_t k, int64_t nprobe)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK && loom_attrs_set_int(a, "k", k) == LOOM_OK, "attrs");
    if (nprobe)
        FZ_CHECK(loom_attrs_set_int(a, "nprobe", nprobe) == LOOM_OK, "attrs");
    loom_tensor *out[2] = { NULL, NULL };
    if (call(o, "rec.knn_index_search", &q, 1, a, out, 2) == LOOM_OK) {
        fz_touch_tensor(out[0]);
        fz_touch_tensor(out[1]);
    } else {
        FZ_CHECK(loom_last_error()[0] != '\0', "a refused search without a message");
    }
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    loom_attrs_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t opt = data[0];
    const int64_t k = 1 + ((opt >> 1) & 15), nprobe = opt >> 5;
    data++;
    size--;
    loom_tensor *bytes = NULL;
    loom_named_tensor named = { "index", NULL };
    loom_named_file file = { "index", NULL };
    loom_object_options o_opt = LOOM_OBJECT_OPTIONS_INIT;
    if (opt & 1) {
        file.path = fz_file(data, size);
        o_opt.n_files = 1;
        o_opt.files = &file;
    } else {
        const int64_t n = (int64_t)size;
        FZ_CHECK(loom_tensor_new(&bytes, LOOM_DTYPE_U8, 1, &n, NULL) == LOOM_OK, "tensor");
        if (size)
            memcpy(loom_data(bytes), data, size);
        named.tensor = bytes;
        o_opt.n_tensors = 1;
        o_opt.tensors = &named;
    }
    loom_object *o = NULL;
    if (loom_object_create_ex(&o, "rec.knn_index", NULL, &o_opt) != LOOM_OK) {
        FZ_CHECK(loom_last_error()[0] != '\0', "a refused index without a message");
        loom_tensor_free(bytes);
        return 0;
    }
    loom_tensor *info[6] = { NULL };
    FZ_CHECK(call(o, "rec.knn_index_info", NULL, 0, NULL, info, 6) == LOOM_OK, "info: %s", loom_last_error());
    const int64_t dim = ((const int64_t *)loom_data(info[1]))[0];
    for (int i = 0; i < 6; i++)
        loom_tensor_free(info[i]);
    FZ_CHECK(dim >= 1 && dim <= (1 << 20), "dim %lld", (long long)dim);
    if (dim <= 4096) {
        const int64_t qs[2] = { 2, dim }, xs[2] = { 3, dim };
        loom_tensor *q = NULL, *x = NULL;
        FZ_CHECK(loom_tensor_new(&q, LOOM_DTYPE_F32, 2, qs, NULL) == LOOM_OK, "tensor");
        FZ_CHECK(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, xs, NULL) == LOOM_OK, "tensor");
        for (int64_t i = 0; i < dim; i++) {
            ((float *)loom_data(q))[i] = (float)(i % 3) - 1.0f;
            ((float *)loom_data(x))[i] = 0.5f;
        }
        search(o, q, k, nprobe);
        const loom_tensor *in[1] = { x };
        if (call(o, "rec.knn_index_add", in, 1, NULL, NULL, 0) == LOOM_OK)
            search(o, q, k, nprobe);
        loom_tensor_free(q);
        loom_tensor_free(x);
    }
    loom_object_free(o);
    loom_tensor_free(bytes);
    return 0;
}
