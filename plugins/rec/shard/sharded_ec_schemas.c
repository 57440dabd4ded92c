/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ec_schemas.c - the methods of rec.sharded_embedding_collection
** (shard.h), ShardedEmbeddingCollection.forward on this rank's KJT, the
** backward that steps the fused optimizer and a table by name, and the
** module of rec-mpi.so that registers them with the class.
*/
#include "shard.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

#define SEC_KJT_INPUTS \
    { .name = "values", .dtypes = I64, .ndim = 1, .doc = "[N] this rank's KJT ids, feature-major, in the collection's feature order" }, \
    { .name = "lengths", .dtypes = I64, .ndim = 1, .doc = "[F * B] every feature's B local samples" }

static const loom_arg_def forward_inputs[] = { SEC_KJT_INPUTS };

/* rec.embedding_collection's outputs, for this rank's samples */
static const loom_arg_def forward_outputs[] = {
    { .name = "values", .dtypes = F32, .flags = LOOM_ARG_JAGGED, .ndim = 2,
      .doc = "[N, D]: row f holds JaggedTensor f's values (the row of each of its ids), in table then feature order" },
    { .name = "values_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
    { .name = "lengths", .dtypes = I64, .flags = LOOM_ARG_JAGGED, .ndim = 1, .doc = "row f: JaggedTensor f's lengths" },
    { .name = "lengths_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
    { .name = "keys", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "the dict's keys (embedding names)" },
    { .name = "keys_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "[F+1]" },
};

PK_SCHEMA(rec_sec_forward_schema, "rec.sharded_embedding_collection", 1,
          "ShardedEmbeddingCollection.forward over MPI: this rank's KJT distributed to the shards by all-to-all, "
          "each id's row looked up on its shard's fbgemm.tbe and sent back by all-to-all in input order; one "
          "JaggedTensor per feature, as rec.embedding_collection; collective: every rank calls it",
          PK_INPUTS(forward_inputs), PK_OUTPUTS(forward_outputs), .object_class = REC_SEC_CLASS);

static const loom_arg_def backward_inputs[] = {
    SEC_KJT_INPUTS,
    { .name = "grad", .dtypes = F32, .ndim = 2, .doc = "[N, D] the gradient of this rank's forward values" },
};

PK_SCHEMA(rec_sec_backward_schema, "rec.sharded_embedding_collection_backward", 1,
          "one step of the fused optimizer on every rank's shards for the global batch (fbgemm.tbe_backward, "
          "each id a bag of its own); data-parallel replicas step on the all-gathered batch; collective",
          PK_INPUTS(backward_inputs), .object_class = REC_SEC_CLASS);

static const loom_arg_def weight_outputs[] = {
    { .name = "weight", .dtypes = F32, .ndim = 2, .doc = "[num_embeddings, embedding_dim] the table as trained so far" },
};

#define SEC_WEIGHT_ATTRS(A, op)                                                                   \
    A(op, table, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the table's name", )
PK_ATTR_TABLE(rec_sec_weight, SEC_WEIGHT_ATTRS);

PK_SCHEMA(rec_sec_weight_schema, "rec.sharded_embedding_collection_weight", 1,
          "a table by name (embeddings.<table>.weight, as named_parameters() gives it), its shards gathered from "
          "their ranks; collective unless the table is data-parallel",
          PK_OUTPUTS(weight_outputs), PK_ATTRS(rec_sec_weight_attrs), .object_class = REC_SEC_CLASS);

PK_OPS_DEFINE(rec_sec_ops, REC_SEC_OPS);

static const loom_object_class *const sec_classes[] = { &rec_sec_class };

/* the weight kernel is the bag collection's: both objects are a rec_sebc */
static const loom_kernel_desc rec_sec_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_sec_forward_schema, "cpu:mpi+fbgemm.tbe", 0, rec_sec_forward),
    PK_KERNEL_CPU(rec_sec_backward_schema, "cpu:mpi+fbgemm.tbe_backward", 0, rec_sec_backward),
    PK_KERNEL_CPU(rec_sec_weight_schema, "cpu:mpi+fbgemm.tbe_state", 0, rec_sebc_weight),
};

const pk_module rec_shard_ec_cpu = {
    .name = "shard_ec", .ops = rec_sec_ops, .n_ops = PK_COUNT(rec_sec_ops),
    .classes = sec_classes, .n_classes = PK_COUNT(sec_classes),
    .kernels = rec_sec_cpu_kernels, .n_kernels = PK_COUNT(rec_sec_cpu_kernels),
};
