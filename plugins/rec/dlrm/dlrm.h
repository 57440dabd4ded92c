/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm.h - torchrec's DLRM (torchrec/models/dlrm.py) as the object class
** rec.dlrm, with DLRMTrain's training step.
**
** The model, for a batch of B samples:
**   DenseArch    dense [B, dense_in_features] through an MLP, linear then
**                relu at every layer: [B, D] (D = dense_arch_layer_sizes[-1]
**                = every table's embedding_dim)
**   SparseArch   the KJT pooled by a rec.fused_embedding_bag_collection
**                object (host->object_create): [B, F, D], F features in
**                table then feature order (SparseArch.sparse_feature_names)
**   Interaction  Z = [dense; sparse...] [B, F + 1, D]; the output is the
**                dense features then Z_i . Z_j for i < j in row-major
**                order (torch.triu_indices(F + 1, F + 1, offset=1)):
**                [B, D + F (F + 1) / 2]
**   OverArch     an MLP (linear + relu) over every layer but the last, then
**                a linear layer without activation: the logits [B, 1]
**
** The weights file is DLRM's state_dict: dense_arch.model._mlp.<i>._linear.
** weight [out, in] / .bias [out], over_arch.model.0._mlp.<i>._linear.weight
** / .bias for the over arch's hidden layers, over_arch.model.1.weight /
** .bias for its last, and sparse_arch.embedding_bag_collection.
** embedding_bags.<table>.weight [num_embeddings, D]. rec.dlrm_save writes
** the same keys.
**
** The dense layers are the object's own f32 copies, run on the toolkit GEMM
** (plugins/common/gemm): core.linear's weights are immutable and it has no
** backward, and training needs both. rec.dlrm_train_step is DLRMTrain's
** forward (BCEWithLogitsLoss, mean over the batch) and backward, then one
** optimizer step: dense_optimizer (torch.optim.SGD or torch.optim.Adagrad,
** fused into the backward layer by layer, after each layer's input
** gradient is taken) on the dense parameters, the collection's fused
** optimizer (embedding_optimizer: fbgemm's exact SGD or row-wise Adagrad)
** on the tables. Calls on one object are serialised (its lock): the
** weights change with every step.
**
** Sharded (torchrec's shard(module, plan) / shard_modules, loom's rec.shard):
** with a `plan` attribute, every rank of an MPI job creates the model from
** the same file and plan, and the SparseArch's collection is a
** rec.sharded_embedding_bag_collection (rec-mpi.so) over that plan instead;
** the dense modules stay whole on every rank (data-parallel). A call then
** takes this rank's B samples (the KJT as lengths, in the collection's
** feature order). The training step is the unsharded one on the global
** batch of every rank's samples: the loss gradient is taken over the
** global batch size G (sigmoid(z) - y) / G, each dense layer's gradient is
** summed over the ranks (rec.sharded_embedding_bag_collection_allreduce)
** before its step, and the sharded backward sums the tables' gradients
** over the ranks. The loss returned is this rank's batch mean.
*/
#ifndef LOOM_REC_DLRM_H
#define LOOM_REC_DLRM_H

#include <pthread.h>
#include <stdint.h>

#include "rec_pack.h"
#include "../collections/collections.h"

#define REC_DLRM_CLASS "rec.dlrm"
#define REC_DLRM_MAX_LAYERS 64

#define REC_DLRM_CLASS_ATTRS(A, op)                                                               \
    REC_TABLE_CONFIG_ATTRS(A, op)                                                                 \
    A(op, dense_in_features, INT, LOOM_DEFAULT_INT(13), LOOM_ATTR_POSITIVE,                      \
      "width of the dense input (13 on the Criteo layout)", )                                     \
    A(op, dense_arch_layer_sizes, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, \
      "DenseArch's out_size per layer; the last is the tables' embedding_dim", )                 \
    A(op, over_arch_layer_sizes, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, \
      "OverArch's out_size per layer (at least two; the last is 1 for DLRMTrain)", )             \
    A(op, dense_optimizer, STRING, LOOM_DEFAULT_STRING("sgd"), 0,                                \
      "the dense parameters' optimizer: sgd (torch.optim.SGD) | adagrad (torch.optim.Adagrad)", ) \
    A(op, embedding_optimizer, STRING, LOOM_DEFAULT_STRING("sgd"), 0,                            \
      "the tables' fused optimizer: sgd | rowwise_adagrad (torchrec.optim.RowWiseAdagrad)", )    \
    A(op, lr, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,              \
      "learning rate of both optimizers", )                                                       \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1.0e-10), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,          \
      "Adagrad's epsilon (both optimizers; torch.optim.Adagrad's default)", )                     \
    A(op, plan, STRING, LOOM_DEFAULT_STRING(""), 0,                                              \
      "shard the tables over MPI following this plan (loom.rec.plan/1, its JSON or a file): rec.shard", ) \
    A(op, timeout_s, FLOAT, LOOM_DEFAULT_FLOAT(60.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,       \
      "with a plan: the longest wait for one collective", )
PK_ATTR_ENUM(rec_dlrm_class, REC_DLRM_CLASS_ATTRS);

/* One linear layer: y = x w^T + b, relu after it unless it is the last of the over arch. */
typedef struct rec_dlrm_layer {
    int64_t in, out;
    int relu;
    float *w, *b;              /* [out, in], [out] */
    float *w_sum, *b_sum;      /* Adagrad's state_sum (zeros at create), NULL for SGD */
} rec_dlrm_layer;

typedef struct rec_dlrm {
    pthread_mutex_t lock;
    loom_object *ebc;          /* the rec.fused_embedding_bag_collection */
    const loom_op *ebc_forward, *ebc_backward, *ebc_weight;
    const loom_op *allreduce;  /* sharded: the dense gradients' sum over the ranks; NULL unsharded */
    int sharded;
    int64_t n_tables;
    char **table_names;        /* for the save's keys */
    int64_t n_features, dim, dense_in;
    int64_t n_dense, n_layers; /* layers[0, n_dense) DenseArch, then OverArch */
    rec_dlrm_layer layers[2 * REC_DLRM_MAX_LAYERS];
    int adagrad;
    double lr, eps;
} rec_dlrm;

extern const loom_object_class rec_dlrm_class;

/* The interaction (dlrm_interaction.c) of a batch of B: x [B, D] the dense
** arch's output, e [B, F D] the pooled features; out [B, D + F (F + 1) / 2].
** The backward takes g, the gradient of out, and writes the gradients of x
** (gx [B, D]) and e (ge [B, F D]). Both take rec_dlrm_interact_work floats
** of 64-byte aligned work and run on the toolkit GEMM and the core's pool
** (from the kernel's thread). */
int64_t rec_dlrm_interact_work(int64_t B, int64_t F, int64_t D);
loom_status rec_dlrm_interact(loom_exec_ctx *ctx, const float *x, const float *e, float *out, int64_t B, int64_t F,
                              int64_t D, float *work);
loom_status rec_dlrm_interact_backward(loom_exec_ctx *ctx, const float *x, const float *e, const float *g, float *gx,
                                       float *ge, int64_t B, int64_t F, int64_t D, float *work);

/* The MLP on the toolkit GEMM (dlrm_mlp.c). forward: y [B, out] of layer l
** from x [B, in] (relu when the layer has it). backward: from gy [B, out]
** (the gradient of y, relu's mask applied here from y), gx [B, in] when gx
** is not NULL, then the layer's optimizer step; gy is overwritten. */
loom_status rec_dlrm_layer_forward(loom_exec_ctx *ctx, const rec_dlrm_layer *l, const float *x, float *y, int64_t B);
loom_status rec_dlrm_layer_backward(loom_exec_ctx *ctx, const rec_dlrm *m, rec_dlrm_layer *l, const float *x,
                                    const float *y, float *gy, float *gx, int64_t B, float *work);
/* floats of work rec_dlrm_layer_backward needs for layer l */
int64_t rec_dlrm_layer_work(const rec_dlrm_layer *l);

loom_status rec_dlrm_forward(loom_call *call);
loom_status rec_dlrm_train_step(loom_call *call);
loom_status rec_dlrm_save(loom_call *call);
loom_status rec_fused_ebc_weight(loom_call *call);

#define REC_DLRM_OPS(X) X(rec_dlrm_forward_schema) X(rec_dlrm_train_step_schema) X(rec_dlrm_save_schema) \
    X(rec_fused_ebc_weight_schema)
PK_OPS_DECLARE(rec_dlrm_ops, REC_DLRM_OPS);

/* inputs of the methods: dense, the KJT (REC_EBC_INPUT_DEFS), then labels */
enum { REC_DLRM_IN_DENSE, REC_DLRM_IN_KJT, REC_DLRM_IN_LABELS = REC_DLRM_IN_KJT + 6 };

#endif /* LOOM_REC_DLRM_H */
