/* SPDX-License-Identifier: BSD-3-Clause */
/*
** plan.h - a sharding plan ("loom.rec.plan/1"): the information of
** torchrec's ShardingPlan / ParameterSharding for the tables of one
** embedding collection, parsed from JSON, validated, and hashed.
**
**   { "format": "loom.rec.plan/1", "world_size": W,
**     "tables": [ { "name", "num_embeddings", "embedding_dim",
**                   "sharding_type", "compute_kernel",
**                   ("cache_load_factor", "prefetch_pipeline": fused_uvm_caching only)
**                   "ranks": [...],
**                   "shards": [ { "rank", "offsets": [row, col],
**                                 "sizes": [rows, cols] } ] } ] }
**
** The validator checks what every consumer relies on: each table's shards
** tile it exactly (no overlap, no gap), in offset order, on ranks below
** world_size; table_wise has one shard, row_wise and table_row_wise
** shards span every column, column_wise shards span every row,
** data_parallel has none. Errors name the table (by name and index) and
** the field.
**
** The hash is the 64-bit FNV-1a of the canonical JSON (rec_plan_canonical:
** the keys in the order above, no spaces, the cache parameters only where
** they differ from their defaults), so two ranks that parsed
** differently formatted texts of one plan agree.
**
** This file needs only the C library and cJSON (no MPI, no host table):
** the planner writes plans that this parser reads.
*/
#ifndef LOOM_REC_SHARD_PLAN_H
#define LOOM_REC_SHARD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define REC_PLAN_FORMAT "loom.rec.plan/1"

typedef enum rec_sharding_type {
    REC_SHARD_TABLE_WISE,
    REC_SHARD_ROW_WISE,
    REC_SHARD_COLUMN_WISE,
    REC_SHARD_TABLE_ROW_WISE,
    REC_SHARD_DATA_PARALLEL,
} rec_sharding_type;

typedef enum rec_compute_kernel {
    REC_KERNEL_FUSED,
    REC_KERNEL_FUSED_UVM_CACHING,
    REC_KERNEL_QUANT,
    REC_KERNEL_DENSE,
} rec_compute_kernel;

/* torchrec's ShardMetadata: placement rank, shard_offsets, shard_sizes */
typedef struct rec_plan_shard {
    int64_t rank;
    int64_t row_offset, col_offset;
    int64_t rows, cols;
} rec_plan_shard;

typedef struct rec_plan_table {
    char *name;
    int64_t num_embeddings, embedding_dim;
    rec_sharding_type sharding_type;
    rec_compute_kernel compute_kernel;
    int64_t n_ranks;
    int64_t *ranks;            /* ParameterSharding.ranks */
    int64_t n_shards;
    rec_plan_shard *shards;    /* in offset order; none for data_parallel */
    /* CacheParams, fused_uvm_caching only (0 and 0 for the other kernels):
    ** the share of the table's rows the cache holds, and whether a prefetch
    ** pipeline fills it (rec.sharded_embedding_bag_collection_prefetch) */
    double cache_load_factor;
    int prefetch_pipeline;
} rec_plan_table;

/* torchrec's default cache_load_factor (the planner's CACHING_RATIO). */
#define REC_PLAN_DEFAULT_CACHE_LOAD_FACTOR 0.2

typedef struct rec_plan {
    int64_t world_size;
    int64_t n_tables;
    rec_plan_table *tables;    /* in the order of the model's tables */
} rec_plan;

/* The names as the JSON spells them. */
extern const char *const rec_sharding_type_names[5];
extern const char *const rec_compute_kernel_names[4];

/* Parses and validates text[0..len). Returns 0 and a new plan in *out, or
** -1 with a message in err[0..err_size) naming the table and field (and
** *out NULL). A text that is not JSON is refused with cJSON's position. */
int rec_plan_from_json(const char *text, size_t len, rec_plan **out, char *err, size_t err_size);

/* The canonical JSON of a valid plan: a new string (free), or NULL when
** out of memory. */
char *rec_plan_canonical(const rec_plan *plan);

/* FNV-1a 64 of the canonical JSON; 0 when out of memory. */
uint64_t rec_plan_hash(const rec_plan *plan);

void rec_plan_free(rec_plan *plan);

#endif /* LOOM_REC_SHARD_PLAN_H */
