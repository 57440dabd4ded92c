/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_schemas.c - the methods of rec.sharded_embedding_bag_collection
** (shard.h): ShardedEmbeddingBagCollection.forward on this rank's KJT, and
** the backward that steps the fused optimizer.
*/
#include "shard.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

#define IDX (LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
/* VBE, after the other inputs (the backward's after grad) */
#define SEBC_VBE_INPUTS \
    { .name = "stride_per_key_per_rank", .dtypes = IDX, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, \
      .doc = "[F, ranks] VBE: each feature's bags on this rank (summed over ranks), lengths in that order" }, \
    { .name = "inverse_indices", .dtypes = IDX, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, \
      .doc = "[F, B] VBE: sample b of feature f is its bag inverse_indices[f][b]; B is the output's batch" }

#define SEBC_KJT_INPUTS \
    { .name = "values", .dtypes = I64, .ndim = 1, .doc = "[N] this rank's KJT ids, feature-major, in the collection's feature order" }, \
    { .name = "lengths", .dtypes = I64, .ndim = 1, \
      .doc = "[F * B] every feature's B local samples (with VBE: each feature's stride, summed)" }, \
    { .name = "weights", .dtypes = F32, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, \
      .doc = "[N] per-sample weights (used when the collection is_weighted)" }

static const loom_arg_def forward_inputs[] = { SEBC_KJT_INPUTS, SEBC_VBE_INPUTS };

static const loom_arg_def forward_outputs[] = {
    { .name = "values", .dtypes = F32, .ndim = 2,
      .doc = "KeyedTensor values [B, sum D] of this rank's samples, in table then feature order (VBE: "
              "expanded through inverse_indices)" },
};

PK_SCHEMA(rec_sebc_forward_schema, "rec.sharded_embedding_bag_collection", 1,
          "ShardedEmbeddingBagCollection.forward over MPI: this rank's KJT distributed to the shards by "
          "all-to-all, looked up on the local fbgemm.tbe, pooled rows back by all-to-all (table/column-wise) "
          "or reduce-scatter (row-wise); collective: every rank calls it",
          PK_INPUTS(forward_inputs), PK_OUTPUTS(forward_outputs), .object_class = REC_SEBC_CLASS);

static const loom_arg_def backward_inputs[] = {
    SEBC_KJT_INPUTS,
    { .name = "grad", .dtypes = F32, .ndim = 2, .doc = "[B, sum D] the gradient of this rank's forward output" },
    SEBC_VBE_INPUTS,
};

PK_SCHEMA(rec_sebc_backward_schema, "rec.sharded_embedding_bag_collection_backward", 1,
          "one step of the fused optimizer on every rank's shards for the global batch (fbgemm.tbe_backward); "
          "data-parallel replicas step on the all-gathered batch; collective",
          PK_INPUTS(backward_inputs), .object_class = REC_SEBC_CLASS);

static const loom_arg_def allreduce_inputs[] = {
    { .name = "x", .dtypes = F32, .ndim = -1, .doc = "this rank's tensor, the same shape on every rank" },
};
static const loom_arg_def allreduce_outputs[] = {
    { .name = "sum", .dtypes = F32, .ndim = -1, .doc = "the sum over the ranks, added in rank order" },
};

PK_SCHEMA(rec_sebc_allreduce_schema, "rec.sharded_embedding_bag_collection_allreduce", 1,
          "the sum of one f32 tensor over the collection's ranks (the data-parallel dense gradients of a sharded "
          "model), the same bits on every rank; collective",
          PK_INPUTS(allreduce_inputs), PK_OUTPUTS(allreduce_outputs), .object_class = REC_SEBC_CLASS);

static const loom_arg_def weight_outputs[] = {
    { .name = "weight", .dtypes = F32, .ndim = 2, .doc = "[num_embeddings, embedding_dim] the table as trained so far" },
};

#define SEBC_WEIGHT_ATTRS(A, op)                                                                  \
    A(op, table, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the table's name", )
PK_ATTR_TABLE(rec_sebc_weight, SEBC_WEIGHT_ATTRS);

PK_SCHEMA(rec_sebc_weight_schema, "rec.sharded_embedding_bag_collection_weight", 1,
          "a table by name (embedding_bags.<table>.weight, as named_parameters() gives it), its shards gathered "
          "from their ranks; collective unless the table is data-parallel",
          PK_OUTPUTS(weight_outputs), PK_ATTRS(rec_sebc_weight_attrs), .object_class = REC_SEBC_CLASS);

static const loom_arg_def stats_outputs[] = {
    { .name = "stats", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 2,
      .doc = "[4, 4] rows forward, backward, prefetch: columns calls, wall seconds, seconds inside collectives, "
             "collectives; row 3, the forward's input: KJT all-to-alls run, prefetched inputs reused instead, bytes "
             "sent by those all-to-alls, bytes the reuse saved (this rank, since create or the last reset)" },
};

#define SEBC_STATS_ATTRS(A, op)                                                                   \
    A(op, reset, BOOL, LOOM_DEFAULT_BOOL(0), 0, "zero the counters after reading them", )
PK_ATTR_TABLE(rec_sebc_stats, SEBC_STATS_ATTRS);

PK_SCHEMA(rec_sebc_stats_schema, "rec.sharded_embedding_bag_collection_stats", 1,
          "this rank's time in the forward, backward and prefetch methods and, of it, inside their collectives (the all-to-alls, "
          "reduce-scatters and all-gathers, waits for slower peers included); local, not collective",
          PK_OUTPUTS(stats_outputs), PK_ATTRS(rec_sebc_stats_attrs), .object_class = REC_SEBC_CLASS);

PK_OPS_DEFINE(rec_shard_ops, REC_SHARD_OPS);
