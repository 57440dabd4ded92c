/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of rec.so: the ops of every module of the rec
** pack with their cpu kernels (rec_pack.h). The embedding collections find
** fbgemm.tbe when one is created (not at load), so the KJT ops load without
** the fbgemm pack.
*/
#include "rec_pack.h"

/* knn (rec.knn_index, rec.knn_retrieve) when FAISS is built in (plugins/meson.build) */
#ifdef LOOM_REC_HAVE_FAISS
#define REC_KNN_CPU , &rec_knn_cpu
#else
#define REC_KNN_CPU
#endif

PK_PACK_DEFINE("rec", "0.1.0", "torchrec: KeyedJaggedTensor operations with VBE, EmbeddingBagCollection over fbgemm.tbe, RecMetrics, the Criteo TSV reader, TwoTower, DLRM, the sharding planner, FAISS retrieval (cpu)",
               NULL, NULL, &rec_kjt_cpu, &rec_collections_cpu, &rec_metrics_cpu, &rec_criteo_cpu, &rec_retrieval_cpu,
               &rec_dlrm_cpu, &rec_planner_cpu REC_KNN_CPU)
