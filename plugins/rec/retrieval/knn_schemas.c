/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_schemas.c - the methods of rec.knn_index, the op rec.knn_retrieve and
** the module rec_knn_cpu (knn.h).
*/
#include "knn.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def add_inputs[] = {
    { .name = "embeddings", .dtypes = F32, .ndim = 2, .doc = "[N, D] the vectors to add" },
    { .name = "ids", .dtypes = I64, .ndim = 1, .flags = LOOM_ARG_OPTIONAL,
      .doc = "[N] their ids: needed by an index made with ids, refused by a flat one made without" },
};
PK_SCHEMA(rec_knn_index_add_schema, "rec.knn_index_add", 1,
          "add vectors to the index (faiss Index.add / add_with_ids); an untrained ivfpq index is trained on them "
          "first",
          PK_INPUTS(add_inputs), .object_class = REC_KNN_INDEX_CLASS);

static const loom_arg_def search_inputs[] = {
    { .name = "queries", .dtypes = F32, .ndim = 2, .doc = "[Q, D] query embeddings" },
};
static const loom_arg_def result_outputs[] = {
    { .name = "ids", .dtypes = I64, .ndim = 2,
      .doc = "[Q, k] the ids of the k best, best first; equal scores by increasing id; -1 where none" },
    { .name = "scores", .dtypes = F32, .ndim = 2,
      .doc = "[Q, k] their inner products (ip) or squared L2 distances (l2); -inf (ip) / +inf (l2) where none" },
};
PK_ATTR_TABLE(rec_knn_search, REC_KNN_SEARCH_ATTRS);
PK_SCHEMA(rec_knn_index_search_schema, "rec.knn_index_search", 1,
          "top-k of each query in the index (faiss Index.search): the candidates of two-tower retrieval",
          PK_INPUTS(search_inputs), PK_OUTPUTS(result_outputs), PK_ATTRS(rec_knn_search_attrs),
          .object_class = REC_KNN_INDEX_CLASS);

PK_ATTR_TABLE(rec_knn_nprobe, REC_KNN_NPROBE_ATTRS);
PK_SCHEMA(rec_knn_index_set_nprobe_schema, "rec.knn_index_set_nprobe", 1,
          "set an IVF index's nprobe (faiss IndexIVF.nprobe)", PK_ATTRS(rec_knn_nprobe_attrs),
          .object_class = REC_KNN_INDEX_CLASS);

PK_ATTR_TABLE(rec_knn_save, REC_KNN_SAVE_ATTRS);
PK_SCHEMA(rec_knn_index_save_schema, "rec.knn_index_save", 1,
          "write the index with faiss.write_index: faiss.read_index and rec.knn_index (file 'index') read it",
          PK_ATTRS(rec_knn_save_attrs), .object_class = REC_KNN_INDEX_CLASS);

static const loom_arg_def info_outputs[] = {
    { .name = "ntotal", .dtypes = I64, .ndim = 1, .doc = "[1] vectors in the index" },
    { .name = "dim", .dtypes = I64, .ndim = 1, .doc = "[1] their D" },
    { .name = "is_trained", .dtypes = I64, .ndim = 1, .doc = "[1] 1 once trained (a flat index always is)" },
    { .name = "metric", .dtypes = I64, .ndim = 1, .doc = "[1] 0 inner product, 1 L2 (faiss MetricType)" },
    { .name = "nlist", .dtypes = I64, .ndim = 1, .doc = "[1] inverted lists (0: not an IVF index)" },
    { .name = "nprobe", .dtypes = I64, .ndim = 1, .doc = "[1] lists searched per query (0: not an IVF index)" },
};
PK_SCHEMA(rec_knn_index_info_schema, "rec.knn_index_info", 1, "what the index is: ntotal, dim, metric, nlist, nprobe",
          PK_OUTPUTS(info_outputs), .object_class = REC_KNN_INDEX_CLASS);

static const loom_arg_def retrieve_inputs[] = {
    { .name = "queries", .dtypes = F32, .ndim = 2, .doc = "[Q, D] query embeddings" },
    { .name = "items", .dtypes = F32, .ndim = 2, .doc = "[N, D] item embeddings" },
};
PK_ATTR_TABLE(rec_knn_retrieve, REC_KNN_RETRIEVE_ATTRS);
static const char *const metrics[] = { "ip", "l2", NULL };
static const loom_attr_choices retrieve_choices[] = { { PK_ATTR(rec_knn_retrieve, metric), metrics } };
PK_SCHEMA(rec_knn_retrieve_schema, "rec.knn_retrieve", 1,
          "exact top-k of each query among the items (faiss knn_inner_product / knn_L2sqr), no index kept; over an "
          "index, rec.knn_index_search",
          PK_INPUTS(retrieve_inputs), PK_OUTPUTS(result_outputs), PK_ATTRS(rec_knn_retrieve_attrs),
          PK_CHOICES(retrieve_choices));

PK_OPS_DEFINE(rec_knn_ops, REC_KNN_OPS);

static const loom_object_class *const knn_classes[] = { &rec_knn_index_class };

static const loom_kernel_desc rec_knn_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_knn_index_add_schema, "cpu:faiss", F32 | I64, rec_knn_index_add),
    PK_KERNEL_CPU(rec_knn_index_search_schema, "cpu:faiss", F32, rec_knn_index_search),
    PK_KERNEL_CPU(rec_knn_index_set_nprobe_schema, "cpu:faiss", 0, rec_knn_index_set_nprobe),
    PK_KERNEL_CPU(rec_knn_index_save_schema, "cpu:faiss", 0, rec_knn_index_save),
    PK_KERNEL_CPU(rec_knn_index_info_schema, "cpu:faiss", 0, rec_knn_index_info),
    PK_KERNEL_CPU(rec_knn_retrieve_schema, "cpu:faiss", F32, rec_knn_retrieve),
};

const pk_module rec_knn_cpu = {
    .name = "knn", .ops = rec_knn_ops, .n_ops = PK_COUNT(rec_knn_ops),
    .classes = knn_classes, .n_classes = PK_COUNT(knn_classes),
    .kernels = rec_knn_cpu_kernels, .n_kernels = PK_COUNT(rec_knn_cpu_kernels),
};
