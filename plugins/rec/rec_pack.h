/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rec_pack.h - what the files of the `rec` op pack (rec.so, cpu only)
** share. Everything has hidden visibility: a pack exports only
** loom_plugin_entry.
**
** Modules, each in its own folder with a meson.build that appends to
** rec_cpu_src:
**   kjt/  TorchRec's KeyedJaggedTensor operations (from_lengths_sync,
**         from_offsets_sync, permute, split, concat, to_dict) and the
**         deduplication of samples into a VBE KJT with inverse_indices;
**         how a KJT crosses the ABI is docs/rec-kjt.md
**   collections/  rec.embedding_bag_collection: TorchRec's EmbeddingBagCollection
**         as an object over fbgemm.tbe objects (host->object_create) called
**         through host->op_call
**   metrics/  rec.ne, rec.auc, rec.calibration, rec.ctr, rec.mse: TorchRec's
**         RecMetrics formulas on one batch
**   criteo/  rec.criteo_reader: the Criteo Kaggle/Terabyte TSV in batches
**         (dense, labels and a KJT), as torchrec.datasets.criteo parses it
**   retrieval/  rec.two_tower: torchrec's TwoTower (two towers of an
**         embedding_bag_collection and core.linear layers); with FAISS,
**         rec.knn_index and rec.knn_retrieve (module knn, knn.h)
**   dlrm/  rec.dlrm: torchrec's DLRM over a fused_embedding_bag_collection,
**         its forward and DLRMTrain's training step
**   planner/  rec.plan: torchrec's EmbeddingShardingPlanner (planner.h): a
**         config JSON in, the plan (loom.rec.plan/1) and its stats out
**
** Invariant: pk_host (pack.h) is set by the pack's init before any kernel
** runs and stays valid until the core shuts down.
*/
#ifndef LOOM_REC_PACK_H
#define LOOM_REC_PACK_H

#include "describe.h"
#include "loom/plugin.h"
#include "pack.h"

/* The modules of the pack, in registration order (cpu_pack.c). */
extern const pk_module rec_kjt_cpu;
extern const pk_module rec_collections_cpu;
extern const pk_module rec_metrics_cpu;
extern const pk_module rec_criteo_cpu;
extern const pk_module rec_retrieval_cpu;
extern const pk_module rec_dlrm_cpu;
extern const pk_module rec_planner_cpu;
extern const pk_module rec_knn_cpu;   /* with LOOM_REC_HAVE_FAISS */

#endif /* LOOM_REC_PACK_H */
