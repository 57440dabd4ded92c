/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_schemas.c - the methods of rec.dlrm (dlrm.h) and the table read of
** rec.fused_embedding_bag_collection they save through. The methods take
** the dense features, then the KJT of docs/rec-kjt.md (the sparse
** features, as the collection's forward), then the labels.
*/
#include "dlrm.h"
#include "../kjt/kjt.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

static const loom_arg_def forward_inputs[] = {
    { .name = "dense", .dtypes = F32, .ndim = 2, .doc = "[B, dense_in_features] the dense features" },
    REC_EBC_INPUT_DEFS,
};
static const loom_arg_def forward_outputs[] = {
    { .name = "logits", .dtypes = F32, .ndim = 2, .doc = "[B, over_arch_layer_sizes[-1]] DLRM's output" },
};

static const loom_arg_def train_inputs[] = {
    { .name = "dense", .dtypes = F32, .ndim = 2, .doc = "[B, dense_in_features] the dense features" },
    REC_EBC_INPUT_DEFS,
    { .name = "labels", .dtypes = F32, .ndim = 1, .doc = "[B] the click labels (0 or 1)" },
};
static const loom_arg_def train_outputs[] = {
    { .name = "loss", .dtypes = F32, .ndim = 1, .doc = "[1] BCEWithLogitsLoss (mean) before the step" },
};

#define DLRM_METHOD_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_TABLE(rec_dlrm_method, DLRM_METHOD_ATTRS);

PK_SCHEMA(rec_dlrm_forward_schema, "rec.dlrm", 1,
          "DLRM.forward(dense_features, sparse_features): dense arch, pooled tables, dot interaction, over arch: "
          "the logits",
          PK_INPUTS(forward_inputs), PK_OUTPUTS(forward_outputs), PK_ATTRS(rec_dlrm_method_attrs),
          .object_class = REC_DLRM_CLASS);

PK_SCHEMA(rec_dlrm_train_step_schema, "rec.dlrm_train_step", 1,
          "one DLRMTrain step: the loss of the batch, its backward, the dense optimizer's step and the tables' "
          "fused step",
          PK_INPUTS(train_inputs), PK_OUTPUTS(train_outputs), PK_ATTRS(rec_dlrm_method_attrs),
          .object_class = REC_DLRM_CLASS);

#define DLRM_SAVE_ATTRS(A, op)                                                                    \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "safetensors file to write", )
PK_ATTR_TABLE(rec_dlrm_save, DLRM_SAVE_ATTRS);

PK_SCHEMA(rec_dlrm_save_schema, "rec.dlrm_save", 1,
          "the model as DLRM's state_dict (the same keys rec.dlrm is created from), as safetensors",
          PK_ATTRS(rec_dlrm_save_attrs), .object_class = REC_DLRM_CLASS);

static const loom_arg_def weight_outputs[] = {
    { .name = "weight", .dtypes = F32 | LOOM_DTYPE_BIT(LOOM_DTYPE_F16), .ndim = 2,
      .doc = "[num_embeddings, embedding_dim] the table as trained so far" },
};

#define WEIGHT_ATTRS(A, op)                                                                       \
    A(op, table, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the table's name", )
PK_ATTR_TABLE(rec_fused_ebc_weight, WEIGHT_ATTRS);

PK_SCHEMA(rec_fused_ebc_weight_schema, "rec.fused_embedding_bag_collection_weight", 1,
          "a table of the collection by name (its state_dict entry embedding_bags.<table>.weight) as it stands",
          PK_OUTPUTS(weight_outputs), PK_ATTRS(rec_fused_ebc_weight_attrs), .object_class = REC_FUSED_EBC_CLASS);

PK_OPS_DEFINE(rec_dlrm_ops, REC_DLRM_OPS);

static const loom_object_class *const dlrm_classes[] = { &rec_dlrm_class };

static const loom_kernel_desc rec_dlrm_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_dlrm_forward_schema, "cpu:gemm+ebc", F32 | REC_ID_MASK, rec_dlrm_forward),
    PK_KERNEL_CPU(rec_dlrm_train_step_schema, "cpu:gemm+ebc", F32 | REC_ID_MASK, rec_dlrm_train_step),
    PK_KERNEL_CPU(rec_dlrm_save_schema, "cpu", 0, rec_dlrm_save),
    PK_KERNEL_CPU(rec_fused_ebc_weight_schema, "cpu:tbe_state", 0, rec_fused_ebc_weight),
};

const pk_module rec_dlrm_cpu = {
    .name = "dlrm", .ops = rec_dlrm_ops, .n_ops = PK_COUNT(rec_dlrm_ops),
    .classes = dlrm_classes, .n_classes = PK_COUNT(dlrm_classes),
    .kernels = rec_dlrm_cpu_kernels, .n_kernels = PK_COUNT(rec_dlrm_cpu_kernels),
};
