/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_rec.c - case generators of the rec pack's ops (torchrec). The
** rec ops have a cpu kernel only (integer bookkeeping, no
** other backend to compare), so each row names the test that checks them
** against torchrec instead.
*/
#include "conformance.h"

#define METRIC_TEST "tests/rec/metrics/test_metrics.c: cpu only; against torchrec.metrics within 1e-6"
#define TWO_TOWER_TEST                                                                             \
    "tests/rec/two_tower/test_two_tower.c: cpu only (its products are core.linear's, checked there); against " \
    "torchrec's TwoTower within 1e-5"
#define DLRM_TEST                                                                                  \
    "tests/rec/dlrm/test_dlrm.c: cpu only (its products are the toolkit GEMM's, its tables fbgemm.tbe's); " \
    "against torchrec's DLRM and 10 DLRMTrain steps within 1e-5"
#define KJT_TEST "tests/rec/kjt/test_kjt.c: cpu only; every output bit for bit against torchrec goldens"
#define KNN_TEST                                                                                   \
    "tests/rec/knn/test_knn.c: cpu only (FAISS); exact search against a brute force bit for bit, faiss-cpu's " \
    "index files within 1e-5"

#define SHARD_DLRM_TEST                                                                            \
    "tests/rec/shard/dlrm_shard_check.c under mpirun (-np 2 and 4): cpu only (an MPI collective); the sharded "  \
    "DLRM's dense gradients summed through it and its tables gathered by name, against the unsharded DLRM"
#define SHARD_TEST                                                                                 \
    "tests/rec/shard/shard_check.c: cpu only (collective: it runs under mpirun, its lookups are fbgemm.tbe's); " \
    "against the unsharded rec.fused_embedding_bag_collection at -np 2 and 4, bit for bit, then 10 steps within 1e-6 " \
    "(also with fused and fused_uvm_caching shards on one rank: --kernels mixed)"

#define SHARD_EC_TEST                                                                                \
    "tests/rec/shard/ec_shard_check.c: cpu only (collective: it runs under mpirun, its lookups are fbgemm.tbe's); " \
    "against the unsharded rec.embedding_collection at -np 2 and 4, bit for bit, then 10 steps within 1e-6"

const cf_gen cf_rec_gens[] = {
    { "rec.kjt_from_lengths_sync", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_from_offsets_sync", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_permute", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_split", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_concat", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_to_dict", 0, 0, NULL, KJT_TEST },
    { "rec.kjt_dedup", 0, 0, NULL, KJT_TEST },
    { "rec.embedding_bag_collection", 0, 0, NULL,
      "tests/rec/collections/test_ebc.c: cpu only (its pooling is fbgemm.tbe's, checked there); against torchrec's "
      "EmbeddingBagCollection" },
    { "rec.embedding_collection", 0, 0, NULL,
      "tests/rec/collections/test_ebc.c: cpu only (its lookups are fbgemm.tbe's, checked there); against torchrec's "
      "EmbeddingCollection" },
    { "rec.fused_embedding_bag_collection", 0, 0, NULL,
      "tests/rec/fused/test_fused_ebc.c: cpu only (fbgemm.tbe and its training kernels); against torchrec's "
      "FusedEmbeddingBagCollection" },
    { "rec.fused_embedding_bag_collection_backward", 0, 0, NULL,
      "tests/rec/fused/test_fused_ebc.c: cpu only (fbgemm.tbe_backward); 20 steps against torchrec" },
    { "rec.fused_embedding_bag_collection_save", 0, 0, NULL,
      "tests/rec/fused/test_fused_ebc.c: cpu only; the saved state resumes training" },
    { "rec.ne", 0, 0, NULL, METRIC_TEST },
    { "rec.auc", 0, 0, NULL, METRIC_TEST },
    { "rec.calibration", 0, 0, NULL, METRIC_TEST },
    { "rec.ctr", 0, 0, NULL, METRIC_TEST },
    { "rec.mse", 0, 0, NULL, METRIC_TEST },
    { "rec.metrics_update", 0, 0, NULL, METRIC_TEST },
    { "rec.metrics_compute", 0, 0, NULL, METRIC_TEST },
    { "rec.metrics_state", 0, 0, NULL, METRIC_TEST },
    { "rec.metrics_load_state", 0, 0, NULL, METRIC_TEST },
    { "rec.criteo_reader", 0, 0, NULL,
      "tests/rec/criteo/test_criteo.c: cpu only (a file reader); against torchrec.datasets.criteo's parsing" },
    { "rec.two_tower_query_embed", 0, 0, NULL, TWO_TOWER_TEST },
    { "rec.two_tower_candidate_embed", 0, 0, NULL, TWO_TOWER_TEST },
    { "rec.two_tower_score", 0, 0, NULL, TWO_TOWER_TEST },
    { "rec.knn_index_add", 0, 0, NULL, KNN_TEST },
    { "rec.knn_index_search", 0, 0, NULL, KNN_TEST },
    { "rec.knn_index_set_nprobe", 0, 0, NULL, KNN_TEST },
    { "rec.knn_index_save", 0, 0, NULL, KNN_TEST },
    { "rec.knn_index_info", 0, 0, NULL, KNN_TEST },
    { "rec.knn_retrieve", 0, 0, NULL, KNN_TEST },
    { "rec.dlrm", 0, 0, NULL, DLRM_TEST },
    { "rec.dlrm_train_step", 0, 0, NULL, DLRM_TEST },
    { "rec.dlrm_save", 0, 0, NULL, DLRM_TEST },
    { "rec.fused_embedding_bag_collection_weight", 0, 0, NULL, DLRM_TEST },
    { "rec.plan", 0, 0, NULL,
      "tests/rec/planner/test_planner.c: cpu only (integer and double bookkeeping, no tensor math); the plans of "
      "torchrec's EmbeddingShardingPlanner, per-shard estimates within 1e-12" },
    { "rec.sharded_embedding_bag_collection", 0, 0, NULL, SHARD_TEST },
    { "rec.sharded_embedding_bag_collection_backward", 0, 0, NULL, SHARD_TEST },
    { "rec.sharded_embedding_bag_collection_allreduce", 0, 0, NULL, SHARD_DLRM_TEST },
    { "rec.sharded_embedding_bag_collection_weight", 0, 0, NULL, SHARD_DLRM_TEST },
    { "rec.sharded_embedding_bag_collection_prefetch", 0, 0, NULL,
      "examples/rec/prefetch_pipeline under mpirun (-np 2 and 4): cpu only (collective, then fbgemm.tbe_prefetch); "
      "fused_uvm_caching tables trained with the fill of the next batch on a second thread, bit for bit against "
      "the same plan unpipelined and the fused plan, every forward taking the input its prefetch distributed "
      "(the stats' input row), a forward of another batch distributing its own" },
    { "rec.sharded_embedding_bag_collection_stats", 0, 0, NULL,
      "tests/rec/shard/shard_check.c: cpu only (a record of the collection's own calls, no tensor math); the "
      "counts of forwards and backwards, collective seconds within the wall seconds, the forwards' KJT "
      "all-to-alls, reset to zero; its prefetch and reuse counters: examples/rec/prefetch_pipeline --check" },
    { "rec.sharded_embedding_collection", 0, 0, NULL, SHARD_EC_TEST },
    { "rec.sharded_embedding_collection_backward", 0, 0, NULL, SHARD_EC_TEST },
    { "rec.sharded_embedding_collection_weight", 0, 0, NULL, SHARD_EC_TEST },
};
const size_t cf_rec_n_gens = sizeof cf_rec_gens / sizeof cf_rec_gens[0];
