/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_rec_empty.c - every op of the rec pack on inputs without elements:
** no keys, keys with a stride of 0, no values, empty weights, a batch of 0
** and empty bags through an embedding bag collection: torchrec's
** output shapes, no error, no read of the (NULL) data of an empty tensor.
** The walk over the registry fails for any rec op without a case here.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define NONE { 0 }

/* The output block of a KJT: names of NB bytes, K keys, values of dtype VD,
** L lengths of dtype LD, unweighted, not VBE, no inverse indices */
#define KJT_OUT(NB, K, VD, LD, L)                                                                   \
    { T(U8, 1, NB), T(I64, 1, (K) + 1), T(VD, 1, 0), T(LD, 1, L), T(LD, 1, (L) + 1), T(F32, 1, 0),  \
      T(I32, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(I64, 1, K), T(I64, 1, K), T(I64, 1, (K) + 1) }

#define DLRM_KEYS "cat_0,cat_1,cat_2,cat_3,cat_4,cat_5,cat_6,cat_7,cat_8,cat_9,cat_10,cat_11,cat_12,cat_13,cat_14,cat_15,cat_16,cat_17,cat_18,cat_19,cat_20,cat_21,cat_22,cat_23,cat_24,cat_25"

static const oc_case cases[] = {
    { "rec.kjt_from_lengths_sync", "no keys", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=", KJT_OUT(0, 0, I64, I64, 0) },
    { "rec.kjt_from_lengths_sync", "stride 0, weighted", { T(I32, 1, 0), T(I32, 1, 0), T(F32, 1, 0) }, "keys=a,b",
      KJT_OUT(2, 2, I32, I32, 0) },
    { "rec.kjt_from_offsets_sync", "no keys", { T(I64, 1, 0), T(I64, 1, 1) }, "keys=", KJT_OUT(0, 0, I64, I64, 0) },
    { "rec.kjt_from_offsets_sync", "VBE, no samples", { T(I64, 1, 0), T(I64, 1, 1), NONE, T(I64, 2, 1, 2) }, "keys=a",
      { T(U8, 1, 1), T(I64, 1, 2), T(I64, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(F32, 1, 0), T(I32, 2, 1, 2),
        T(I64, 1, 0), T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 2) } },
    { "rec.kjt_permute", "stride 0, a key twice", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=a;indices=0,0",
      KJT_OUT(2, 2, I64, I64, 0) },
    { "rec.kjt_split", "stride 0", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=a,b;segments=1,0,1",
      { T(U8, 1, 2), T(I64, 1, 3), T(I64, 1, 4), T(I64, 1, 0), T(I64, 1, 4), T(F32, 1, 0), T(I64, 1, 0),
        T(I64, 1, 4), T(I64, 1, 2), T(I64, 1, 4), T(I32, 1, 0), T(I64, 1, 0) } },
    { "rec.kjt_concat", "stride 0", { T(I64, 1, 0), T(I64, 1, 0), T(I64, 1, 3) }, "keys=a,b;key_segments=1,1",
      KJT_OUT(2, 2, I64, I64, 0) },
    { "rec.kjt_to_dict", "stride 0, weighted", { T(I64, 1, 0), T(I64, 1, 0), NONE, T(F32, 1, 0) }, "keys=a,b",
      { T(U8, 1, 2), T(I64, 1, 3), T(I64, 1, 0), T(I64, 1, 3), T(F32, 1, 0), T(I64, 1, 0), T(I64, 1, 3),
        T(I64, 1, 2), T(I64, 1, 3) } },
    { "rec.kjt_dedup", "stride 0", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=a,b",
      { T(U8, 1, 2), T(I64, 1, 3), T(I64, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(F32, 1, 0), T(I32, 2, 2, 1),
        T(I64, 2, 2, 0), T(I64, 1, 1), T(I64, 1, 2), T(I64, 1, 2), T(I64, 1, 3) } },
    { "rec.kjt_dedup", "no keys", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=", KJT_OUT(0, 0, I64, I64, 0) },
    /* the collection of tests/data/rec/collections/fp32: user_id [8], item_id and item_cat [4] */
    { "rec.embedding_bag_collection", "B = 0", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=user_id,item_id,item_cat",
      { T(F32, 2, 0, 16), T(U8, 1, 22), T(I64, 1, 4), T(I64, 1, 3), T(I64, 1, 4) }, .object = 1 },
    { "rec.embedding_bag_collection", "empty bags", { T(I32, 1, 0), T(I32, 1, 6) }, "keys=item_cat,user_id,item_id",
      { T(F32, 2, 2, 16), T(U8, 1, 22), T(I64, 1, 4), T(I64, 1, 3), T(I64, 1, 4) }, .zeros = 1, .object = 1 },
    /* the same tables, fused with row-wise Adagrad: f32 bags; a step over empty bags changes nothing */
    { "rec.fused_embedding_bag_collection", "B = 0", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=user_id,item_id,item_cat",
      { T(F32, 2, 0, 16), T(U8, 1, 22), T(I64, 1, 4), T(I64, 1, 3), T(I64, 1, 4) }, .object = 4 },
    { "rec.fused_embedding_bag_collection_backward", "empty bags",
      { T(I32, 1, 0), T(I32, 1, 6), NONE, NONE, NONE, NONE, T(F32, 2, 2, 16) }, "keys=item_cat,user_id,item_id",
      .object = 4 },
    { "rec.fused_embedding_bag_collection_save", "no path", { NONE }, "path=", .expect = LOOM_EINVAL,
      .message = "no path", .object = 4 },
    /* the sequence collection of tests/data/rec/collections/ec: hist, cand (item_t), cat (cats), D = 8 */
    { "rec.embedding_collection", "no ids", { T(I64, 1, 0), T(I64, 1, 6) }, "keys=hist,cand,cat",
      { T(F32, 2, 0, 8), T(I64, 1, 4), T(I64, 1, 6), T(I64, 1, 4), T(U8, 1, 11), T(I64, 1, 4) }, .object = 2 },
    /* the rec.metrics object of setup (2 tasks, ne and auc): a batch of 0, compute before any sample */
    { "rec.metrics_update", "N = 0", { T(F32, 2, 2, 0), T(F32, 2, 2, 0) }, NULL, .object = 3 },
    { "rec.metrics_compute", "no samples", { NONE }, NULL, { T(F64, 2, 2, 2), T(F64, 2, 2, 2) }, .object = 3 },
    { "rec.metrics_state", "no samples", { NONE }, NULL, .object = 3 },
    { "rec.metrics_load_state", "an empty state", { T(F64, 1, 0) }, NULL, .expect = LOOM_EINVAL,
      .message = "not a rec.metrics checkpoint", .object = 3 },
    /* the rec.criteo_reader of setup over an empty file: a batch of 0 rows, the 26 keys cat_0..cat_25 */
    { "rec.criteo_reader", "an empty file", { NONE }, NULL,
      { T(F32, 2, 0, 13), T(F32, 1, 0), T(U8, 1, 146), T(I64, 1, 27), T(I64, 1, 0), T(I32, 1, 0), T(I32, 1, 1),
        T(F32, 1, 0), T(I32, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(I64, 1, 26), T(I64, 1, 26), T(I64, 1, 27) },
      .object = 5 },
    /* the rec.two_tower of setup (tests/data/rec/two_tower: D = 16, layer_sizes 32,8): a batch of 0 */
    { "rec.two_tower_query_embed", "B = 0", { T(I64, 1, 0), T(I64, 1, 0) }, "keys=user_id", { T(F32, 2, 0, 8) },
      .object = 6 },
    { "rec.two_tower_candidate_embed", "empty bags", { T(I64, 1, 0), T(I64, 1, 3) }, "keys=item_id",
      { T(F32, 2, 3, 8) }, .object = 6 },
    { "rec.two_tower_score", "B = 0", { T(F32, 2, 0, 8), T(F32, 2, 0, 8) }, NULL, { T(F32, 1, 0) } },
    /* the rec.dlrm of setup (tests/data/rec/dlrm: 26 tables of D = 4, dense 16,4, over 16,8,1): a batch of 0;
    ** a step over it changes nothing (torch's mean of no losses is nan) */
    { "rec.dlrm", "B = 0", { T(F32, 2, 0, 13), T(I64, 1, 0), T(I32, 1, 0) }, "keys=" DLRM_KEYS,
      { T(F32, 2, 0, 1) }, .object = 7 },
    { "rec.dlrm_train_step", "B = 0", { T(F32, 2, 0, 13), T(I64, 1, 0), T(I32, 1, 0), NONE, NONE, NONE, NONE,
      T(F32, 1, 0) }, "keys=" DLRM_KEYS, { T(F32, 1, 1) }, .object = 7 },
    { "rec.dlrm_save", "no path", { NONE }, "path=", .expect = LOOM_EINVAL, .message = "no path", .object = 7 },
    { "rec.fused_embedding_bag_collection_weight", "no such table", { NONE }, "table=nope", .expect = LOOM_EINVAL,
      .message = "no table 'nope'", .object = 4 },
#ifdef LOOM_REC_HAVE_FAISS
    /* the flat rec.knn_index of setup (object 8): 3 vectors of D = 4 */
    { "rec.knn_index_add", "N = 0", { T(F32, 2, 0, 4) }, NULL, .object = 8 },
    { "rec.knn_index_search", "Q = 0", { T(F32, 2, 0, 4) }, "k=2", { T(I64, 2, 0, 2), T(F32, 2, 0, 2) },
      .object = 8 },
    { "rec.knn_index_set_nprobe", "a flat index", { NONE }, "nprobe=2", .expect = LOOM_EINVAL,
      .message = "not an IVF index", .object = 8 },
    { "rec.knn_index_save", "no path", { NONE }, "path=", .expect = LOOM_EINVAL, .message = "'path' is empty",
      .object = 8 },
    { "rec.knn_index_info", "3 vectors", { NONE }, NULL,
      { T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 1) }, .object = 8 },
    { "rec.knn_retrieve", "Q = 0, N = 0", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, "k=3",
      { T(I64, 2, 0, 3), T(F32, 2, 0, 3) } },
#endif
#ifdef LOOM_REC_HAVE_MPI
    /* the collection above sharded over one rank (MPI singleton): user table-wise, item row-wise */
    { "rec.sharded_embedding_bag_collection", "B = 0", { T(I64, 1, 0), T(I64, 1, 0) }, NULL, { T(F32, 2, 0, 16) },
      .object = 9 },
    { "rec.sharded_embedding_bag_collection_backward", "empty bags",
      { T(I64, 1, 0), T(I64, 1, 6), NONE, T(F32, 2, 2, 16) }, NULL, .object = 9 },
    /* one rank: the sum of nothing over it is nothing */
    { "rec.sharded_embedding_bag_collection_allreduce", "N = 0", { T(F32, 1, 0) }, NULL, { T(F32, 1, 0) },
      .object = 9 },
    { "rec.sharded_embedding_bag_collection_weight", "no such table", { NONE }, "table=nope", .expect = LOOM_EINVAL,
      .message = "no table 'nope'", .object = 9 },
    /* a sharded EmbeddingCollection over one rank: a (fa, fb) table-wise, b (fc) row-wise, D = 8 */
    { "rec.sharded_embedding_collection", "no ids", { T(I64, 1, 0), T(I64, 1, 6) }, NULL,
      { T(F32, 2, 0, 8), T(I64, 1, 4), T(I64, 1, 6), T(I64, 1, 4), T(U8, 1, 6), T(I64, 1, 4) }, .object = 10 },
    { "rec.sharded_embedding_collection_backward", "no ids", { T(I64, 1, 0), T(I64, 1, 6), T(F32, 2, 0, 8) }, NULL,
      .object = 10 },
    { "rec.sharded_embedding_collection_weight", "no such table", { NONE }, "table=nope", .expect = LOOM_EINVAL,
      .message = "no table 'nope'", .object = 10 },
    /* the input checks it shares with the bag collection name this class */
    { "rec.sharded_embedding_collection", "lengths not F * B", { T(I64, 1, 0), T(I64, 1, 5) }, NULL,
      .expect = LOOM_EINVAL, .message = "rec.sharded_embedding_collection: 'lengths' has 5 entries", .object = 10 },
    { "rec.sharded_embedding_collection_backward", "lengths not F * B", { T(I64, 1, 0), T(I64, 1, 5),
      T(F32, 2, 0, 8) }, NULL, .expect = LOOM_EINVAL,
      .message = "rec.sharded_embedding_collection: 'lengths' has 5 entries", .object = 10 },
    /* fused tables: the next batch is distributed, nothing to fill; the counters stay zero */
    { "rec.sharded_embedding_bag_collection_prefetch", "B = 0", { T(I64, 1, 0), T(I64, 1, 0) }, NULL,
      { T(I64, 1, 8) }, .object = 9 },
    /* the time record: [forward, backward, prefetch] x [calls, wall s, collective s, collectives], and the
    ** forwards' input: KJT all-to-alls, prefetched inputs reused, bytes sent, bytes saved */
    { "rec.sharded_embedding_bag_collection_stats", "no inputs", { NONE }, NULL, { T(F64, 2, 4, 4) }, .object = 9 },
#endif
    /* torchrec: a task without samples has no weight: NE's clamped 0/0 ... */
    { "rec.ne", "N = 0, two tasks", { T(F32, 2, 2, 0), T(F32, 2, 2, 0) }, NULL, { T(F64, 1, 2) } },
    { "rec.auc", "N = 0", { T(F32, 1, 0), T(F32, 1, 0), T(F32, 1, 0) }, NULL, { T(F64, 1, 1) } },
    { "rec.calibration", "N = 0", { T(F64, 1, 0), T(F64, 1, 0) }, NULL, { T(F64, 1, 1) }, .zeros = 1 },
    { "rec.ctr", "no tasks", { T(F32, 2, 0, 5), T(F32, 2, 0, 5) }, NULL, { T(F64, 1, 0) } },
    { "rec.mse", "N = 0", { T(F32, 1, 0), T(F32, 1, 0) }, NULL, { T(F64, 1, 1) }, .zeros = 1 },
    /* no config text: nothing to plan */
    { "rec.plan", "empty config", { T(U8, 1, 0) }, NULL, .expect = LOOM_EINVAL, .message = "'config' is empty" },
};

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_bag_collection", "tables", "user,item") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_bag_collection", "num_embeddings", "50,40") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_bag_collection", "embedding_dim", "8,4") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_bag_collection", "feature_names", "user_id,item_id|item_cat") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_bag_collection", "pooling", "sum,mean") != LOOM_OK ||
        loom_object_create(&oc_objects[0], "rec.embedding_bag_collection", a,
                           tu_data_path("rec/collections/fp32.safetensors")) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_collection", "tables", "item_t,cats") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_collection", "num_embeddings", "30,12") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_collection", "embedding_dim", "8,8") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_collection", "feature_names", "hist|cand,cat") != LOOM_OK ||
        loom_attrs_parse(a, "rec.embedding_collection", "data_type", "fp32,fp16") != LOOM_OK ||
        loom_object_create(&oc_objects[1], "rec.embedding_collection", a,
                           tu_data_path("rec/collections/ec.safetensors")) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "tables", "user,item") != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "num_embeddings", "50,40") != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "embedding_dim", "8,4") != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "feature_names", "user_id,item_id|item_cat")
            != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "pooling", "sum,mean") != LOOM_OK ||
        loom_attrs_parse(a, "rec.fused_embedding_bag_collection", "optimizer", "rowwise_adagrad") != LOOM_OK ||
        loom_object_create(&oc_objects[3], "rec.fused_embedding_bag_collection", a,
                           tu_data_path("rec/collections/fp32.safetensors")) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "metrics", "ne,auc") != LOOM_OK ||
        loom_attrs_parse(a, "rec.metrics", "n_tasks", "2") != LOOM_OK ||
        loom_object_create(&oc_objects[2], "rec.metrics", a, NULL) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK ||
        loom_attrs_set_string(a, "path", tu_data_path("rec/criteo/empty.tsv")) != LOOM_OK ||
        loom_object_create(&oc_objects[4], "rec.criteo_reader", a, NULL) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, "rec.two_tower", "tables", "t_user,t_item") != LOOM_OK ||
        loom_attrs_parse(a, "rec.two_tower", "num_embeddings", "50,80") != LOOM_OK ||
        loom_attrs_parse(a, "rec.two_tower", "embedding_dim", "16,16") != LOOM_OK ||
        loom_attrs_parse(a, "rec.two_tower", "feature_names", "user_id,item_id") != LOOM_OK ||
        loom_attrs_parse(a, "rec.two_tower", "layer_sizes", "32,8") != LOOM_OK ||
        loom_object_create(&oc_objects[5], "rec.two_tower", a, tu_data_path("rec/two_tower/model.safetensors"))
            != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_parse(a, "rec.dlrm", "tables", "t0,t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19,t20,t21,t22,t23,t24,t25") != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "num_embeddings", "43,36,34,57,35,30,55,22,37,32,21,48,59,51,32,41,53,32,36,56,27,57,47,37,51,36") != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "embedding_dim", "4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,4") != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "feature_names", DLRM_KEYS) != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "dense_arch_layer_sizes", "16,4") != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "over_arch_layer_sizes", "16,8,1") != LOOM_OK ||
        loom_attrs_parse(a, "rec.dlrm", "dense_optimizer", "adagrad") != LOOM_OK ||
        loom_object_create(&oc_objects[6], "rec.dlrm", a, tu_data_path("rec/dlrm/model.safetensors")) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
#ifdef LOOM_REC_HAVE_FAISS
    static const float embeddings[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
    loom_tensor *x = NULL;
    const int64_t shape[2] = { 3, 4 };
    loom_named_tensor named = { "embeddings", NULL };
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    if (loom_tensor_wrap(&x, (void *)embeddings, LOOM_DTYPE_F32, 2, shape, NULL, NULL) != LOOM_OK)
        return -1;
    named.tensor = x;
    opt.n_tensors = 1;
    opt.tensors = &named;
    loom_status st = loom_object_create_ex(&oc_objects[7], "rec.knn_index", NULL, &opt);
    loom_tensor_free(x);   /* the index keeps its own copy */
    if (st != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        return -1;
    }
#endif
#ifdef LOOM_REC_HAVE_MPI
    static const char plan[] =
        "{\"format\":\"loom.rec.plan/1\",\"world_size\":1,\"tables\":["
        "{\"name\":\"user\",\"num_embeddings\":50,\"embedding_dim\":8,\"sharding_type\":\"table_wise\","
        "\"compute_kernel\":\"fused\",\"ranks\":[0],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[50,8]}]},"
        "{\"name\":\"item\",\"num_embeddings\":40,\"embedding_dim\":4,\"sharding_type\":\"row_wise\","
        "\"compute_kernel\":\"fused\",\"ranks\":[0],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[40,4]}]}]}";
    if (loom_attrs_new(&a) != LOOM_OK ||
        loom_attrs_parse(a, "rec.sharded_embedding_bag_collection", "tables", "user,item") != LOOM_OK ||
        loom_attrs_parse(a, "rec.sharded_embedding_bag_collection", "num_embeddings", "50,40") != LOOM_OK ||
        loom_attrs_parse(a, "rec.sharded_embedding_bag_collection", "embedding_dim", "8,4") != LOOM_OK ||
        loom_attrs_parse(a, "rec.sharded_embedding_bag_collection", "feature_names", "user_id,item_id|item_cat")
            != LOOM_OK ||
        loom_attrs_set_string(a, "plan", plan) != LOOM_OK ||
        loom_object_create(&oc_objects[8], "rec.sharded_embedding_bag_collection", a,
                           tu_data_path("rec/collections/fp32.safetensors")) != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        loom_attrs_free(a);
        return -1;
    }
    loom_attrs_free(a);
    static const char ec_plan[] =
        "{\"format\":\"loom.rec.plan/1\",\"world_size\":1,\"tables\":["
        "{\"name\":\"a\",\"num_embeddings\":20,\"embedding_dim\":8,\"sharding_type\":\"table_wise\","
        "\"compute_kernel\":\"fused\",\"ranks\":[0],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[20,8]}]},"
        "{\"name\":\"b\",\"num_embeddings\":10,\"embedding_dim\":8,\"sharding_type\":\"row_wise\","
        "\"compute_kernel\":\"fused\",\"ranks\":[0],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[10,8]}]}]}";
    static float ec_rows[30 * 8];
    const int64_t ec_shapes[2][2] = { { 20, 8 }, { 10, 8 } };
    loom_tensor *ec_t[2] = { NULL, NULL };
    if (loom_tensor_wrap(&ec_t[0], ec_rows, LOOM_DTYPE_F32, 2, ec_shapes[0], NULL, NULL) != LOOM_OK ||
        loom_tensor_wrap(&ec_t[1], ec_rows + 20 * 8, LOOM_DTYPE_F32, 2, ec_shapes[1], NULL, NULL) != LOOM_OK)
        return -1;
    const loom_named_tensor ec_named[2] = { { "embeddings.a.weight", ec_t[0] }, { "embeddings.b.weight", ec_t[1] } };
    loom_object_options ec_opt = LOOM_OBJECT_OPTIONS_INIT;
    ec_opt.n_tensors = 2;
    ec_opt.tensors = ec_named;
    loom_status ec_st = LOOM_EINVAL;
    if (loom_attrs_new(&a) == LOOM_OK &&
        loom_attrs_parse(a, "rec.sharded_embedding_collection", "tables", "a,b") == LOOM_OK &&
        loom_attrs_parse(a, "rec.sharded_embedding_collection", "num_embeddings", "20,10") == LOOM_OK &&
        loom_attrs_parse(a, "rec.sharded_embedding_collection", "embedding_dim", "8,8") == LOOM_OK &&
        loom_attrs_parse(a, "rec.sharded_embedding_collection", "feature_names", "fa|fb,fc") == LOOM_OK &&
        loom_attrs_set_string(a, "plan", ec_plan) == LOOM_OK)
        ec_st = loom_object_create_ex(&oc_objects[9], "rec.sharded_embedding_collection", a, &ec_opt);
    loom_tensor_free(ec_t[0]);     /* its rows are static: whatever the object keeps of them stays valid */
    loom_tensor_free(ec_t[1]);
    loom_attrs_free(a);
    if (ec_st != LOOM_OK) {
        fprintf(stderr, "rec_empty setup: %s\n", loom_last_error());
        return -1;
    }
#endif
    return 0;
}

static int teardown(void **state)
{
    for (int i = 0; i < 10; i++) {
        loom_object_free(oc_objects[i]);
        oc_objects[i] = NULL;
    }
    return tu_teardown(state);
}

int main(void)
{
    return oc_run_group("rec_empty", "rec.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
