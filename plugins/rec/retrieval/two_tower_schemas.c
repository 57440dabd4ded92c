/* SPDX-License-Identifier: BSD-3-Clause */
/*
** two_tower_schemas.c - the methods of rec.two_tower and the score op
** (two_tower.h). The embed methods take the KJT of docs/rec-kjt.md with the
** tower's features, as rec.embedding_bag_collection does.
*/
#include "two_tower.h"
#include "../kjt/kjt.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

static const loom_arg_def embed_inputs[] = { REC_EBC_INPUT_DEFS };

static const loom_arg_def embed_outputs[] = {
    { .name = "embedding", .dtypes = F32, .ndim = 2, .doc = "[B, layer_sizes[-1]] the tower's MLP output" },
};

#define TT_EMBED_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_TABLE(rec_two_tower_embed, TT_EMBED_ATTRS);

PK_SCHEMA(rec_two_tower_query_schema, "rec.two_tower_query_embed", 1,
          "TwoTower's query tower: the query table's pooled features (EmbeddingBagCollection) through query_proj "
          "(MLP)",
          PK_INPUTS(embed_inputs), PK_OUTPUTS(embed_outputs), PK_ATTRS(rec_two_tower_embed_attrs),
          .object_class = REC_TWO_TOWER_CLASS);

PK_SCHEMA(rec_two_tower_candidate_schema, "rec.two_tower_candidate_embed", 1,
          "TwoTower's candidate tower: the candidate table's pooled features through candidate_proj (MLP)",
          PK_INPUTS(embed_inputs), PK_OUTPUTS(embed_outputs), PK_ATTRS(rec_two_tower_embed_attrs),
          .object_class = REC_TWO_TOWER_CLASS);

static const loom_arg_def score_inputs[] = {
    { .name = "query", .dtypes = F32, .ndim = 2, .doc = "[B, D] query embeddings" },
    { .name = "candidate", .dtypes = F32, .ndim = 2, .doc = "[B, D] candidate embeddings" },
};
static const loom_arg_def score_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = 1, .doc = "[B] the logits, (query * candidate).sum(dim=1)" },
};

PK_SCHEMA(rec_two_tower_score_schema, "rec.two_tower_score", 1,
          "TwoTowerTrainTask's logits: the row-wise dot product of query and candidate embeddings",
          PK_INPUTS(score_inputs), PK_OUTPUTS(score_outputs));

PK_OPS_DEFINE(rec_retrieval_ops, REC_RETRIEVAL_OPS);

static const loom_object_class *const retrieval_classes[] = { &rec_two_tower_class };

static const loom_kernel_desc rec_retrieval_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_two_tower_query_schema, "cpu:ebc+linear", REC_ID_MASK | REC_WEIGHT_MASK,
                  rec_two_tower_query_embed),
    PK_KERNEL_CPU(rec_two_tower_candidate_schema, "cpu:ebc+linear", REC_ID_MASK | REC_WEIGHT_MASK,
                  rec_two_tower_candidate_embed),
    PK_KERNEL_CPU(rec_two_tower_score_schema, "cpu", F32, rec_two_tower_score),
};

const pk_module rec_retrieval_cpu = {
    .name = "retrieval", .ops = rec_retrieval_ops, .n_ops = PK_COUNT(rec_retrieval_ops),
    .classes = retrieval_classes, .n_classes = PK_COUNT(retrieval_classes),
    .kernels = rec_retrieval_cpu_kernels, .n_kernels = PK_COUNT(rec_retrieval_cpu_kernels),
};
