/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard.h - what the files of the rec-mpi pack share: torchrec's sharded
** EmbeddingBagCollection (torchrec/distributed/embeddingbag.py) over
** OpenMPI, rec.sharded_embedding_bag_collection.
**
** Every rank of the communicator creates the object with the same table
** configs, the same weights file (the unsharded state_dict, keys
** embedding_bags.<table>.weight) and the same plan (plan.h). Create keeps
** the rows and columns of the shards the plan places on this rank, each
** one table of a local fbgemm.tbe object (host->object_create; the lookups
** and the fused optimizer are fbgemm's), and the data-parallel tables
** whole in a second one.
**
** A call takes this rank's KJT (B local samples of every feature, in the
** collection's feature order) and:
**   1. sends each (feature, shard) pair's lengths, then ids (relative to
**      the shard's first row; row-wise ids bucketised by row range) and
**      weights, to the shard's rank: MPI_Alltoall of the counts, then
**      MPI_Alltoallv (torchrec's KJTAllToAll);
**   2. looks up the received batch of W * B samples (source rank major)
**      on the local TBE;
**   3. returns the pooled rows: table-wise and column-wise by
**      MPI_Alltoallv (PooledEmbeddingsAllToAll), row-wise and
**      table-row-wise partial sums by MPI_Reduce_scatter_block
**      (PooledEmbeddingsReduceScatter); data-parallel tables look up the
**      local batch on the local replica.
** The backward sends the output gradient back the same ways (all-to-all;
** all-gather for the row-wise tables, the transpose of a reduce-scatter)
** and runs fbgemm.tbe_backward on the local TBE. Data-parallel tables
** all-gather the batch's ids and output gradients, so every replica takes
** the one step of the whole global batch: the sum of every rank's
** gradients, in the same order on every rank, so the replicas stay
** bit-identical (the sparse form of DDP's gradient allreduce).
**
** Every collective is non-blocking, waited for with a deadline
** (timeout_s): a peer that died or left makes the others fail with an
** error naming the collective and the rank, not hang. The communicator is
** a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN.
*/
#ifndef LOOM_REC_SHARD_H
#define LOOM_REC_SHARD_H

#include <stdint.h>

#include <mpi.h>

#include "loom/plugin.h"
#include "pack.h"
#include "plan.h"

#define REC_SEBC_CLASS "rec.sharded_embedding_bag_collection"

#define REC_SEBC_CLASS_ATTRS(A, op)                                                                \
    A(op, tables, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                  \
      "table names in order, joined by ',' (EmbeddingBagConfig.name)", )                         \
    A(op, num_embeddings, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,        \
      "rows of each table", )                                                                     \
    A(op, embedding_dim, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,       \
      "D of each table", )                                                                        \
    A(op, feature_names, STRING, LOOM_DEFAULT_STRING(""), 0,                                     \
      "each table's features joined by '|', tables joined by ','; a table with none takes its own name", ) \
    A(op, pooling, STRING, LOOM_DEFAULT_STRING("sum"), 0,                                        \
      "the PoolingType of every table: sum | mean (mean: not with row_wise or table_row_wise tables)", ) \
    A(op, is_weighted, BOOL, LOOM_DEFAULT_BOOL(0), 0, "use the KJT's weights as per-sample weights", ) \
    A(op, plan, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "the sharding plan (loom.rec.plan/1): its JSON text (starting with '{') or a file holding it", ) \
    A(op, optimizer, STRING, LOOM_DEFAULT_STRING("sgd"), 0,                                      \
      "the fused optimizer: sgd (torch.optim.SGD) | rowwise_adagrad (torchrec.optim.RowWiseAdagrad)", ) \
    A(op, lr, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "learning rate", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1.0e-8), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "epsilon", ) \
    A(op, timeout_s, FLOAT, LOOM_DEFAULT_FLOAT(60.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,       \
      "the longest wait for one collective: a peer that does not take part by then is reported", )
PK_ATTR_ENUM(rec_sebc_class, REC_SEBC_CLASS_ATTRS);

extern const loom_object_class rec_sebc_class;

/* The communicator and its deadline (shard_comm.c). */
typedef struct shard_comm {
    MPI_Comm comm;
    int rank, size;
    double timeout_s;
    int broken;                /* a collective failed or timed out: the communicator is not used again */
    /* shard_wait's own clock (sharded_ebc_stats.c reads it): the wall seconds
    ** spent waiting for collectives to complete, and how many, since open */
    double wait_s;
    int64_t n_waits;
} shard_comm;

/* Duplicates MPI_COMM_WORLD (initialising MPI, MPI_THREAD_SERIALIZED, when
** the host has not) with MPI_ERRORS_RETURN. */
loom_status shard_comm_open(shard_comm *c, double timeout_s);
void shard_comm_close(shard_comm *c);
/* Waits for req until the deadline; the error names what and this rank. */
loom_status shard_wait(shard_comm *c, MPI_Request *req, const char *what);
/* MPI_Finalize at unload when the pack initialised MPI. */
void shard_mpi_fini(void);

/* One (feature, shard) pair: what a rank's local TBE looks up. */
typedef struct shard_pair {
    int64_t feature, table;
    int64_t local_table;       /* the shard's table index in its rank's TBE */
    int64_t row_offset, rows, col_offset, cols;
    int rw;                    /* row_wise or table_row_wise: partial sums, reduce-scattered */
    int64_t local_col;         /* first column in its rank's TBE output */
    int64_t block_col;         /* table-/column-wise: first column in its rank's all-to-all block */
} shard_pair;

/* What one method (forward or backward) cost so far, on this rank: its
** calls, their wall seconds (MPI_Wtime, entry to return) and, of those, the
** seconds inside collectives (shard_wait) and how many collectives. */
typedef struct rec_sebc_method_stats {
    int64_t calls, collectives;
    double wall_s, comm_s;
} rec_sebc_method_stats;
typedef struct rec_sebc_stats {
    rec_sebc_method_stats forward, backward;
} rec_sebc_stats;

typedef struct rec_sebc {
    shard_comm c;
    rec_plan *plan;
    int64_t n_tables;
    char **table_names;
    int64_t *num_embeddings, *embedding_dim;
    int64_t n_features;
    int64_t *feature_table;    /* [F] */
    int64_t *feature_col;      /* [F + 1] columns of the KeyedTensor */
    int is_weighted, pooling_mean;
    /* the pairs of every rank: pairs[pair_start[r] .. pair_start[r + 1]) */
    int64_t *pair_start;
    shard_pair *pairs;
    int64_t *block_cols;       /* [W] table-/column-wise columns of rank r's block */
    int64_t *local_d;          /* [W] columns of rank r's TBE output */
    int64_t *rw_col;           /* [F] column in the row-wise partial-sum block, -1 when not row-wise */
    int64_t rw_d;
    int64_t *dp_col;           /* [F] column in the data-parallel output, -1 when not data-parallel */
    int64_t n_dp_features, dp_d;
    int64_t *dp_features;      /* [n_dp_features] in feature order */
    loom_object *tbe, *dp_tbe; /* NULL when this rank has no shard / there is no data-parallel table */
    float **shard_rows;        /* this rank's shards' rows, the TBE's tables (it views them) */
    int64_t n_shard_rows;
    const loom_op *tbe_op, *backward_op;
    rec_sebc_stats stats;      /* per method: calls, wall and collective seconds (sharded_ebc_stats.c) */
} rec_sebc;

/* The plan's layout for the collection (shard_layout.c): checks the plan
** against the table configs and fills pairs, columns and the dp lists. */
loom_status shard_layout_build(rec_sebc *e);

/* The KJT a call was given, checked (sharded_ebc_dist.c). */
typedef struct shard_input {
    const int64_t *values, *lengths;
    const float *weights;      /* NULL unless is_weighted */
    int64_t B, n_values;
    int64_t *value_start;      /* [F * B + 1] */
} shard_input;

/* This rank's TBE batch after the KJT all-to-all: W * B samples per pair. */
typedef struct shard_batch {
    int64_t *indices, *offsets;
    float *psw;
    int64_t n_indices;
} shard_batch;

/* Checks the call's KJT (and with_grad its 'grad' [B, sum D]) and agrees
** with the other ranks: LOOM_OK only when every rank's input is fine and
** every B is the same. */
loom_status shard_input_read(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in);
void shard_input_free(shard_input *in);
loom_status shard_kjt_all_to_all(const rec_sebc *e, const shard_input *in, shard_batch *out);
/* The data-parallel features of the local batch (all_ranks 0), or of every
** rank's batch, all-gathered in rank order (all_ranks 1). */
loom_status shard_dp_batch(const rec_sebc *e, const shard_input *in, int all_ranks, shard_batch *out);
void shard_batch_free(shard_batch *b);

/* An MPI count from a size: fails naming what when it exceeds int. */
loom_status shard_count(int64_t n, const char *what, int *out);

/* A CPU tensor header over data (borrowed), for nested calls. */
#define SHARD_I64 ((loom_dl_dtype){ LOOM_DL_INT, 64, 1 })
#define SHARD_F32 ((loom_dl_dtype){ LOOM_DL_FLOAT, 32, 1 })
static inline loom_tensor shard_view(void *data, loom_dl_dtype dt, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim, .dtype = dt, .shape = shape };
    return t;
}

loom_status rec_sebc_forward(loom_call *call);
loom_status rec_sebc_backward(loom_call *call);
loom_status rec_sebc_allreduce(loom_call *call);
loom_status rec_sebc_weight(loom_call *call);
/* sharded_ebc_stats.c: the forward and backward with their time recorded,
** and the method that reads (and resets) the record */
loom_status rec_sebc_forward_timed(loom_call *call);
loom_status rec_sebc_backward_timed(loom_call *call);
loom_status rec_sebc_stats_read(loom_call *call);

#define REC_SHARD_OPS(X) X(rec_sebc_forward_schema) X(rec_sebc_backward_schema) X(rec_sebc_allreduce_schema) \
    X(rec_sebc_weight_schema) \
    X(rec_sebc_stats_schema)
PK_OPS_DECLARE(rec_shard_ops, REC_SHARD_OPS);
extern const pk_module rec_shard_cpu;

/* inputs of both methods */
enum { SEBC_IN_VALUES, SEBC_IN_LENGTHS, SEBC_IN_WEIGHTS, SEBC_IN_GRAD };

#endif /* LOOM_REC_SHARD_H */
