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
** and the fused optimizer are fbgemm's; one such object per compute kernel
** of the rank's shards, shard_groups.c), and the data-parallel tables
** whole in another one.
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
** VBE KJTs (stride_per_key_per_rank, inverse_indices) move only their
** deduplicated bags; every rank's strides per feature are all-gathered
** with the verdicts, so the all-to-alls know their sizes, the pooled rows
** come back per feature and the sample's rank expands them through
** inverse_indices (sharded_ebc_dist.c, sharded_ebc_blocks.c).
**
** rec-mpi-cuda.so (cuda/, with NCCL) has the forward's cuda kernel over
** the same objects: the same layouts, NCCL's collectives.
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
    /* the class that opened it (REC_SEBC_CLASS or REC_SEC_CLASS): every
    ** message of the shared code names it, so a sharded EmbeddingCollection's
    ** errors never speak of the bag collection */
    const char *name;
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
** the host has not) with MPI_ERRORS_RETURN; name (static) heads its messages. */
loom_status shard_comm_open(shard_comm *c, const char *name, double timeout_s);
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
/* The forward's input: its KJT all-to-alls, the forwards that took the
** distributed input a prefetch had kept instead (sharded_ebc_prefetch.c),
** the bytes this rank sent in the forwards' KJT all-to-alls, and the bytes
** the reuse did not send again (what the prefetch's dist had sent). */
typedef struct rec_sebc_input_stats {
    int64_t kjt_all_to_alls, kjt_reused;
    double kjt_bytes, kjt_bytes_saved;
} rec_sebc_input_stats;
typedef struct rec_sebc_stats {
    rec_sebc_method_stats forward, backward, prefetch;
    rec_sebc_input_stats input;
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
    /* this rank's compute-kernel groups (torchrec groups a rank's shards by
    ** kernel, one TBE each): a rank holding shards of both fused and
    ** fused_uvm_caching tables has two, its pairs ordered fused first
    ** (group 0: the first group0_pairs pairs, TBE output columns [0,
    ** group0_d), TBE tbe), then cached (group 1: the rest, tbe_cached);
    ** otherwise one, tbe, and tbe_cached is NULL (shard_groups.c) */
    int n_groups;
    int64_t group0_pairs, group0_d;
    loom_object *tbe_cached;
    float **shard_rows;        /* this rank's shards' rows, the TBE's tables (it views them) */
    int64_t n_shard_rows;
    const loom_op *tbe_op, *backward_op;
    /* rec.sharded_embedding_collection (sharded_ec_*.c): unpooled rows, weights keyed
    ** embeddings.<table>.weight, the output keys (feature names) kept for the forward */
    int sequence;
    char *keys;                /* the names, back to back */
    int64_t *keys_offsets;     /* [F + 1] */
    /* the cache's prefetch (sharded_ebc_prefetch.c) */
    struct shard_prefetch *prefetch;
    /* the cuda kernel's state (rec-mpi-cuda.so: the NCCL communicator and
    ** device buffers), made at its first call, freed with the object */
    void *device_state;
    void (*device_state_free)(void *device_state);
    rec_sebc_stats stats;      /* per method: calls, wall and collective seconds (sharded_ebc_stats.c) */
} rec_sebc;

/* The cache of this rank's local TBEs from the plan (sharded_ebc_prefetch.c):
** *lf the cache_load_factor of its fused_uvm_caching shards, 1.0 when it
** has none; refuses a rank (any rank: the verdict is the same on all)
** whose cached shards differ in load factor, and for the sequence
** collection one that mixes kernels. */
loom_status shard_cache_config(const rec_sebc *e, double *lf);
/* The prefetch state (e->prefetch) for a local TBE of load factor lf. */
loom_status shard_prefetch_create(rec_sebc *e, double lf);
void shard_prefetch_free(rec_sebc *e);
/* The load factor shard_prefetch_create was given. */
double shard_prefetch_load_factor(const rec_sebc *e);
extern const pk_module rec_shard_prefetch_cpu;

/* The plan's layout for the collection (shard_layout.c): checks the plan
** against the table configs and fills pairs, columns and the dp lists. */
loom_status shard_layout_build(rec_sebc *e);

/* The KJT a call was given, checked (sharded_ebc_dist.c). A VBE KJT
** (stride_per_key_per_rank, inverse_indices) has stride[f] bags of feature
** f on this rank, its deduplicated samples; sample b of the output is bag
** inverse[f * B + b] of feature f. Without VBE, stride[f] = B and inverse is
** NULL: lengths [F * B] as before. */
typedef struct shard_input {
    const int64_t *values, *lengths;
    const float *weights;      /* NULL unless is_weighted */
    int64_t B, n_values;       /* B: samples of the output, every rank the same */
    int64_t *value_start;      /* [n_lengths + 1] (n_lengths = F * B without VBE) */
    int64_t *stride;           /* [F] this rank's bags per feature */
    int64_t *len_start;        /* [F + 1] feature f's lengths are lengths[len_start[f] .. len_start[f + 1]) */
    int64_t *inverse;          /* [F * B], or NULL when every bag is a sample (no inverse_indices) */
    int64_t *strides;          /* [W * F] every rank's stride per feature (strides[q * F + f]), all-gathered */
    /* set between shard_input_check and shard_input_agree: the id (>= 1) of
    ** the distributed input a prefetch kept for this very KJT, 0 when none
    ** (shard_prefetch_match); agree sets reuse when every rank kept the
    ** same one, so all take it and none runs the KJT all-to-all */
    int64_t kept_id;
    int reuse;
} shard_input;

/* This rank's TBE batch after the KJT all-to-all: per pair j, source rank
** q's row0[j * (W + 1) + q + 1] - row0[j * (W + 1) + q] bags (its strides
** of the pair's feature) from row row0[j * (W + 1) + q], then empty bags up
** to `bags` rows (the TBE takes one batch size for every feature; fbgemm's
** VBE lookup has no backward). Without VBE, bags = W * B and rank q's
** samples are rows q * B .. q * B + B - 1. */
typedef struct shard_batch {
    int64_t *indices, *offsets;
    float *psw;
    int64_t n_indices;
    int64_t bags;              /* rows per feature (pair) of the TBE batch */
    int64_t *row0;             /* [P * (W + 1)] */
    int64_t sent_bytes;        /* what this rank sent in the KJT all-to-all that made it */
} shard_batch;

/* Checks the call's KJT (and with_grad its 'grad' [B, sum D]) and agrees
** with the other ranks: LOOM_OK only when every rank's input is fine and
** every B is the same; every rank's strides are exchanged with the
** verdicts (in->strides). */
loom_status shard_input_read(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in);
/* The two halves of shard_input_read, for a method with checks of its own
** between them: the local checks (in zeroed first), then the exchange of
** every rank's verdict st and B (frees in on failure). */
loom_status shard_input_check(loom_call *call, const rec_sebc *e, int with_grad, shard_input *in);
loom_status shard_input_agree(const rec_sebc *e, loom_status st, shard_input *in);
void shard_input_free(shard_input *in);
/* Takes part in the ranks' agreement on the input as a rank that refused
** its input with st (its message set): the others fail now too; returns st. */
loom_status shard_input_refuse(const rec_sebc *e, loom_status st);
loom_status shard_kjt_all_to_all(const rec_sebc *e, const shard_input *in, shard_batch *out);
/* The parts of the KJT all-to-all (shard_kjt_all_to_all runs them over
** MPI; the cuda kernel over NCCL): what this rank sends, destination-major
** (each destination's pairs' bags, ids relative to the shard's first
** row), the lengths and ids to each rank, the lengths from each rank, and
** sq [W * P]: the bags of each of this rank's pairs from each rank. */
typedef struct shard_kjt_parts {
    int64_t *slen, *sval;
    float *swt;                /* NULL unweighted */
    int64_t *lsend, *vsend, *lrecv;   /* [W] each */
    int64_t *sq;
} shard_kjt_parts;
loom_status shard_kjt_pack(const rec_sebc *e, const shard_input *in, shard_kjt_parts *k);
void shard_kjt_parts_free(shard_kjt_parts *k);
/* From W received blocks (block q: for each pair j, sq[q * P + j]
** lengths, and their ids at vals + vstart[q]) to the TBE's batch:
** pair-major, then q, then bag, each pair padded with empty bags to the
** longest (shard_batch). */
loom_status shard_batch_assemble(const char *who, int W, int64_t P, const int64_t *sq, const int64_t *lens,
                                 const int64_t *vals, const float *wts, const int64_t *vstart, shard_batch *out);
/* The data-parallel features of the local batch (all_ranks 0), or of every
** rank's batch, all-gathered in rank order (all_ranks 1). */
loom_status shard_dp_batch(const rec_sebc *e, const shard_input *in, int all_ranks, shard_batch *out);
void shard_batch_free(shard_batch *b);

/* The kernel groups (shard_groups.c). Group g's TBE (tbe, or tbe_cached for
** group 1 of two); its pairs [*p0, *p1) of this rank's and its TBE output
** columns [*c0, *c0 + *cols) of the rank's [bags, local_d]. */
loom_object *shard_group_tbe(const rec_sebc *e, int g);
void shard_group_range(const rec_sebc *e, int g, int64_t *p0, int64_t *p1, int64_t *c0, int64_t *cols);
/* The TBE holding this rank's cached shards, NULL when it has none. */
loom_object *shard_cache_tbe(const rec_sebc *e);
/* Group g's part of this rank's TBE batch b: indices and weights viewed in
** b, offsets rebased (owned: free sub->offsets only). */
loom_status shard_group_batch(const rec_sebc *e, const shard_batch *b, int g, shard_batch *sub);
/* fbgemm.tbe on obj for batch b of `bags` bags: a new output (free with tensor_free). */
loom_status shard_tbe_lookup(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b,
                             int64_t bags, loom_tensor **y);
/* The lookup of this rank's batch b over every group: *y [b->bags, local_d] (malloc'd). */
loom_status shard_groups_lookup(loom_call *call, const rec_sebc *e, const shard_batch *b, float **y);

/* (sharded_ebc_prefetch.c) The id of the newest distributed input the prefetch kept for a KJT equal
** (bit for bit: values, lengths, weights, B) to in's, 0 when none (or in is
** VBE: the prefetch takes none). */
int64_t shard_prefetch_match(rec_sebc *e, const shard_input *in);
/* Moves kept input id's batch to *out and drops it and every older one. */
loom_status shard_prefetch_take(rec_sebc *e, int64_t id, shard_batch *out);

/* The deduplicated KeyedTensor of this rank (sharded_ebc_dist.c): feature
** f's stride[f] rows of D_f at kt_start[f] (kt_start [F + 1]); the forward
** fills it and expands it to [B, sum D] through inverse, the backward sums
** the output gradient into it. */
loom_status shard_kt_layout(const rec_sebc *e, const shard_input *in, int64_t **kt_start);
void shard_kt_expand(const rec_sebc *e, const shard_input *in, const int64_t *kt_start, const float *kt, float *out);
void shard_kt_reduce(const rec_sebc *e, const shard_input *in, const int64_t *kt_start, const float *grad, float *kt);

/* The pooled blocks' layouts for a call's strides (sharded_ebc_blocks.c):
** MPI counts and displacements (elements) of the table-/column-wise rows
** this rank's shards send each rank (ship) and receive from each rank's
** shards (take) in the forward (the backward swaps them), of each rank's
** row-wise and data-parallel blocks, and where feature f starts in rank
** q's row-wise / data-parallel block (rw_f / dp_f [q * F + f], -1 when the
** feature is not of that kind). */
typedef struct shard_blocks {
    int *ship_cnt, *ship_dis, *take_cnt, *take_dis, *rw_cnt, *rw_dis, *dp_cnt, *dp_dis;   /* [W] each */
    int64_t n_ship, n_take, n_rw, n_dp;   /* totals */
    int64_t *rw_f, *dp_f;                 /* [W * F] */
    void *mem;
} shard_blocks;

loom_status shard_blocks_build(const rec_sebc *e, const shard_input *in, shard_blocks *b);
void shard_blocks_free(shard_blocks *b);

/* An MPI count from a size: fails naming who (the class) and what when it exceeds int. */
loom_status shard_count(const char *who, int64_t n, const char *what, int *out);

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
/* the forward's cuda kernel over NCCL (rec-mpi-cuda.so, cuda/sharded_ebc_nccl.c) */
loom_status rec_sebc_forward_nccl(loom_call *call);
/* sharded_ebc_stats.c: the forward and backward with their time recorded,
** and the method that reads (and resets) the record */
loom_status rec_sebc_forward_timed(loom_call *call);
loom_status rec_sebc_backward_timed(loom_call *call);
loom_status rec_sebc_prefetch_timed(loom_call *call, loom_status (*prefetch)(loom_call *));
loom_status rec_sebc_stats_read(loom_call *call);

#define REC_SHARD_OPS(X) X(rec_sebc_forward_schema) X(rec_sebc_backward_schema) X(rec_sebc_allreduce_schema) \
    X(rec_sebc_weight_schema) \
    X(rec_sebc_stats_schema)
PK_OPS_DECLARE(rec_shard_ops, REC_SHARD_OPS);
extern const pk_module rec_shard_cpu;

/* inputs of both methods; the VBE tensors follow (after grad in the backward) */
enum { SEBC_IN_VALUES, SEBC_IN_LENGTHS, SEBC_IN_WEIGHTS, SEBC_IN_GRAD };
#define SEBC_IN_SPKPR(with_grad) ((with_grad) ? 4 : 3)
#define SEBC_IN_INVERSE(with_grad) ((with_grad) ? 5 : 4)

/* The create both classes share (sharded_ebc_object.c): args in the
** layout of rec_sebc_class's attributes; sequence for the sharded
** EmbeddingCollection, which rec_sec_check then checks further. */
loom_status rec_shard_create(const loom_object_args *args, int sequence, void **state_out);
void rec_sebc_destroy(void *state);

/* ---- rec.sharded_embedding_collection (sharded_ec_*.c) ---- */

#define REC_SEC_CLASS "rec.sharded_embedding_collection"

/* rec.embedding_collection's table configs, then the plan and optimizer of
** the sharded bag collection (the same meanings). */
#define REC_SEC_CLASS_ATTRS(A, op)                                                                 \
    A(op, tables, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                  \
      "table names in order, joined by ',' (EmbeddingConfig.name)", )                            \
    A(op, num_embeddings, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,        \
      "rows of each table", )                                                                     \
    A(op, embedding_dim, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,       \
      "D of each table: one D for every table, as EmbeddingCollection", )                        \
    A(op, feature_names, STRING, LOOM_DEFAULT_STRING(""), 0,                                     \
      "each table's features joined by '|', tables joined by ','; a table with none takes its own name", ) \
    A(op, plan, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "the sharding plan (loom.rec.plan/1; table_wise, row_wise, column_wise, data_parallel): its JSON text " \
      "(starting with '{') or a file holding it", )                                              \
    A(op, optimizer, STRING, LOOM_DEFAULT_STRING("sgd"), 0,                                      \
      "the fused optimizer: sgd (torch.optim.SGD) | rowwise_adagrad (torchrec.optim.RowWiseAdagrad)", ) \
    A(op, lr, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "learning rate", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1.0e-8), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "epsilon", ) \
    A(op, timeout_s, FLOAT, LOOM_DEFAULT_FLOAT(60.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,       \
      "the longest wait for one collective: a peer that does not take part by then is reported", )
PK_ATTR_ENUM(rec_sec_class, REC_SEC_CLASS_ATTRS);

extern const loom_object_class rec_sec_class;

/* What the sequence collection adds to the shared checks of create (args in
** rec_sebc_class's layout), before the ranks exchange their verdicts: one D
** for every table, only the sharding types torchrec's
** EmbeddingCollectionSharder offers, and the forward's keys
** (sharded_ec_object.c). */
loom_status rec_sec_check(rec_sebc *e, const loom_object_args *args);

loom_status rec_sec_forward(loom_call *call);
loom_status rec_sec_backward(loom_call *call);

#define REC_SEC_OPS(X) X(rec_sec_forward_schema) X(rec_sec_backward_schema) X(rec_sec_weight_schema)
PK_OPS_DECLARE(rec_sec_ops, REC_SEC_OPS);
extern const pk_module rec_shard_ec_cpu;

/* inputs of the sequence collection's methods */
enum { SEC_IN_VALUES, SEC_IN_LENGTHS, SEC_IN_GRAD };
/* outputs of its forward, those of rec.embedding_collection */
enum { SEC_OUT_VALUES, SEC_OUT_VALUES_OFFSETS, SEC_OUT_LENGTHS, SEC_OUT_LENGTHS_OFFSETS, SEC_OUT_KEYS,
       SEC_OUT_KEYS_OFFSETS };

/* The unpooled lookups and their exchange (sharded_ec_dist.c). */
typedef struct sec_exchange {
    int *own_cnt, *own_dis;    /* [W] floats exchanged with rank r on the side of the samples (this rank's ids) */
    int *shd_cnt, *shd_dis;    /* [W] floats exchanged with rank q on the side of the shards (this rank's pairs) */
    int64_t own_total, shd_total;
    int64_t B;                 /* samples per rank */
    int64_t rows;              /* B': rows of the local TBE's per-id batch (the most ids of one local pair) */
    int64_t *offsets;          /* [P * B' + 1] the per-id bags of the local TBE */
} sec_exchange;

/* The counts of both sides for this rank's input and its TBE batch. */
loom_status sec_exchange_plan(const rec_sebc *e, const shard_input *in, const shard_batch *b, sec_exchange *x);
void sec_exchange_free(sec_exchange *x);
/* Per-id bags of a batch of n_pairs * bags bags: bag i of pair j holds the
** pair's i-th id, pairs padded with empty bags to the most ids of one
** pair, *rows; a pooled (sum) lookup of them is the unpooled one. */
loom_status sec_single_offsets(const shard_batch *b, int64_t n_pairs, int64_t bags, int64_t *rows, int64_t **offsets);
/* Sample side: rows of this rank's output [N, D] <-> the exchange buffer (to_buf 1: out to buf). */
void sec_pack_own(const rec_sebc *e, const shard_input *in, const sec_exchange *x, float *rows, float *buf,
                  int to_buf);
/* Shard side: the local TBE's per-id rows [B', LD] <-> the exchange buffer. */
void sec_pack_shard(const rec_sebc *e, const shard_batch *b, const sec_exchange *x, float *rows, float *buf,
                    int to_buf);

#endif /* LOOM_REC_SHARD_H */
