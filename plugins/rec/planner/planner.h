/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner.h - rec.plan: TorchRec's embedding sharding planner
** (torchrec.distributed.planner.EmbeddingShardingPlanner) as plain C.
**
** The pipeline, one file per stage:
**   planner_config.c    the config JSON (torchrec's names) -> rp_problem,
**                       every error naming the table and the field
**   planner_estimate.c  shard geometry (sharding_plan.py), the perf model
**                       (EmbeddingPerfEstimator) and the storage model
**                       (EmbeddingStorageEstimator)
**   planner_search.c    storage reservation (HeuristicalStorageReservation),
**                       enumeration, the proposers (grid search, greedy by
**                       depth and by sum, uniform), the partitioners
**                       (GreedyPerfPartitioner, MemoryBalancedPartitioner)
**                       and the choice of the best plan (NoopPerfModel)
**   planner_output.c    the plan JSON (loom.rec.plan/1), the per-shard
**                       estimates JSON and the EmbeddingStats-like table
**   planner_op.c        the op rec.plan around them
**
** Units are torchrec's inside: bandwidths in bytes/ms and perf in ms (the
** config gives bytes/s, divided by 1000 on reading), storage in bytes.
** Everything is deterministic: ties keep the enumeration order (a stable
** sort), devices tie by (perf, rank % local_world_size, rank).
*/
#ifndef LOOM_REC_PLANNER_H
#define LOOM_REC_PLANNER_H

#include <stddef.h>
#include <stdint.h>

/* Sharding types, in the order options are enumerated (torchrec's sharder
** order: data_parallel, table_wise, column_wise, then row_wise, table_row_wise). */
typedef enum rp_sharding {
    RP_DP, RP_TW, RP_CW, RP_RW, RP_TWRW, RP_N_SHARDINGS
} rp_sharding;

/* Compute kernels, in enumeration order. */
typedef enum rp_kernel {
    RP_DENSE, RP_FUSED, RP_FUSED_UVM_CACHING, RP_QUANT, RP_N_KERNELS
} rp_kernel;

typedef enum rp_device { RP_CPU, RP_CUDA } rp_device;
typedef enum rp_partitioner { RP_PART_GREEDY, RP_PART_MEMORY_BALANCED } rp_partitioner;

#define RP_NAME_MAX 64
#define RP_MAX_TABLES 4096
#define RP_MAX_WORLD 1024
#define RP_MAX_DIM 65536
#define RP_MAX_TABLE_BYTES ((int64_t)1 << 50)   /* 1 PiB: every storage sum stays in int64 */
#define RP_MAX_IO_BYTES ((int64_t)1 << 48)      /* a shard's input or output buffer is clamped here */
#define RP_MAX_CW_SHARDS 256   /* column-wise shards of one table (min_partition bounds them) */

extern const char *const rp_sharding_names[RP_N_SHARDINGS];
extern const char *const rp_kernel_names[RP_N_KERNELS];

/* One table: EmbeddingBagConfig's fields and its ParameterConstraints. */
typedef struct rp_table {
    char name[RP_NAME_MAX];
    int64_t num_embeddings, embedding_dim;
    int n_features;                 /* feature_names (checked; torchrec plans one input per table) */
    int element_size;               /* data_type: FP32 4, FP16 2, INT8 1 */
    double pooling_factor;          /* torchrec's pooling_factors[0] (default 1.0) */
    unsigned sharding_mask;         /* allowed rp_sharding bits */
    unsigned kernel_mask;           /* allowed rp_kernel bits */
    double cache_load_factor;       /* < 0: not given (torchrec's 0.2 then) */
    int prefetch_pipeline;
    int64_t min_partition;          /* column-wise block lower bound; 0: MIN_CW_DIM 128 */
} rp_table;

typedef struct rp_topology {
    int world_size, local_world_size;
    rp_device device;
    int64_t hbm_cap, ddr_cap;       /* per rank, bytes */
    double hbm_mem_bw, ddr_mem_bw, hbm_to_ddr_mem_bw;   /* bytes/ms */
    double intra_host_bw, inter_host_bw;                /* bytes/ms */
    double bwd_compute_multiplier;
} rp_topology;

typedef struct rp_problem {
    rp_topology topo;
    int64_t batch_size;
    double storage_reservation;     /* HeuristicalStorageReservation's percentage (0.15) */
    double optimizer_multiplier;    /* _get_optimizer_multipler: none/sgd 0, adam 2, rowwise 1/D (< 0) */
    int rowwise_optimizer;          /* RowWiseAdagrad: the multiplier is 1 / embedding_dim */
    rp_partitioner partitioner;
    int n_tables;
    rp_table *tables;
} rp_problem;

/* torchrec's Perf (ms) and Storage (bytes). */
typedef struct rp_perf {
    double fwd_compute, fwd_comms, bwd_compute, bwd_comms, prefetch_compute;
} rp_perf;
typedef struct rp_storage {
    int64_t hbm, ddr;
} rp_storage;

typedef struct rp_shard {
    int64_t offsets[2], sizes[2];
    rp_perf perf;
    rp_storage storage;
    int rank;                       /* -1 until placed */
} rp_shard;

/* One sharding option of one table (torchrec's ShardingOption). */
typedef struct rp_option {
    int table;
    rp_sharding sharding;
    rp_kernel kernel;
    int n_shards;
    rp_shard *shards;
} rp_option;

/* The chosen plan: one option per table, placed. */
typedef struct rp_plan {
    int n_tables;
    rp_option *options;             /* [n_tables], shards owned */
    double perf_rating;             /* NoopPerfModel: max over ranks of the summed perf totals */
    int64_t max_hbm, max_ddr;       /* the storage "cost model": the fullest rank */
    int n_proposals;                /* proposals partitioned */
    rp_storage reserved;            /* per rank: the capacity left after the reservation */
    int n_search;                   /* with keep_search_space: every enumerated option, */
    rp_option *search;              /* estimated, unplaced (ranks -1), table-major */
} rp_plan;

double rp_perf_total(const rp_perf *p);

/* planner_config.c: parse `text` (n bytes) into *pb (tables malloc'd; free
** with rp_problem_free). On error returns -1 with a message in err naming
** the table and the field. */
int rp_problem_parse(const char *text, size_t n, rp_problem *pb, char *err, size_t errlen);
void rp_problem_free(rp_problem *pb);

/* planner_estimate.c: the shards (geometry) of table t under sharding s
** into o (o->shards malloc'd), then their perf and storage. Returns -1 when
** the sharding does not apply (for example table_row_wise with a
** local_world_size that does not divide the world). */
int rp_option_make(const rp_problem *pb, int t, rp_sharding s, rp_kernel k, rp_option *o);
void rp_option_free(rp_option *o);
/* The column-wise block of table t (torchrec's _get_block_size_for_cw_shard). */
int64_t rp_cw_block(const rp_table *t);

/* planner_search.c: the whole planner; keep_search_space also keeps every
** enumerated option with its estimates in plan->search. On error (no plan fits) returns -1
** with a message naming the table and the shortfall in bytes. */
int rp_plan_run(const rp_problem *pb, int keep_search_space, rp_plan *plan, char *err, size_t errlen);
void rp_plan_free(rp_plan *plan);

/* planner_output.c: malloc'd NUL-terminated texts (NULL when out of memory). */
char *rp_plan_json(const rp_problem *pb, const rp_plan *plan);
char *rp_estimates_json(const rp_problem *pb, const rp_plan *plan);   /* + "search_space" when kept */
char *rp_stats_text(const rp_problem *pb, const rp_plan *plan);

#endif /* LOOM_REC_PLANNER_H */
