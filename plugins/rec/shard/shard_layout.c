/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_layout.c - from a plan and the collection's table configs to what
** every rank computes (shard.h): the (feature, shard) pairs of each rank
** in the order of its TBE's features (table, then shard, then feature),
** their columns in the rank's TBE output and all-to-all block, and the
** columns of the row-wise and data-parallel blocks. Every rank builds the
** same layout from the same plan, so no rank needs to ask another where a
** feature goes.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

#define FAIL(...) return pk_host->fail(LOOM_EINVAL, __VA_ARGS__)

static int is_rw(rec_sharding_type s)
{
    return s == REC_SHARD_ROW_WISE || s == REC_SHARD_TABLE_ROW_WISE;
}

/* The plan against the configs: same tables, in order, of the same sizes. */
static loom_status check_plan(const rec_sebc *e)
{
    const rec_plan *p = e->plan;
    if (p->world_size != e->c.size)
        FAIL("%s: plan: field 'world_size' is %lld, but the communicator has %d ranks", e->c.name,
             (long long)p->world_size, e->c.size);
    if (p->n_tables != e->n_tables)
        FAIL("%s: plan: field 'tables' has %lld tables, the collection %lld", e->c.name,
             (long long)p->n_tables, (long long)e->n_tables);
    for (int64_t t = 0; t < e->n_tables; t++) {
        const rec_plan_table *pt = &p->tables[t];
        if (strcmp(pt->name, e->table_names[t]) != 0)
            FAIL("%s: plan: table %lld: field 'name' is '%s', the collection's table %lld is '%s' (the plan lists "
                 "the tables in the collection's order)", e->c.name, (long long)t, pt->name, (long long)t,
                 e->table_names[t]);
        if (pt->num_embeddings != e->num_embeddings[t] || pt->embedding_dim != e->embedding_dim[t])
            FAIL("%s: plan: table '%s' (%lld): fields 'num_embeddings', 'embedding_dim' are [%lld, %lld], the "
                 "collection's table is [%lld, %lld]", e->c.name, pt->name, (long long)t,
                 (long long)pt->num_embeddings, (long long)pt->embedding_dim, (long long)e->num_embeddings[t],
                 (long long)e->embedding_dim[t]);
        if (pt->compute_kernel == REC_KERNEL_QUANT)
            FAIL("%s: plan: table '%s' (%lld): field 'compute_kernel' quant: the sharded training collection "
                 "runs fused (fp32) tables", e->c.name, pt->name, (long long)t);
        if (e->pooling_mean && is_rw(pt->sharding_type))
            FAIL("%s: plan: table '%s' (%lld): field 'sharding_type' %s with mean pooling: the partial sums of "
                 "row shards are reduce-scattered, so mean pooling needs the bag sizes of every shard (not "
                 "supported; use sum)", e->c.name, pt->name, (long long)t,
                 rec_sharding_type_names[pt->sharding_type]);
    }
    return LOOM_OK;
}

/* Rank r's pairs of the tables of one compute kernel (kind 1: fused_uvm_caching,
** 0: the others), in table order, from pairs[*k]; their local tables count from 0
** (the kernel's own TBE); *n_pairs and *cols count them and their columns. */
static void add_pairs(rec_sebc *e, int r, int kind, int64_t *k, int64_t *n_pairs, int64_t *cols)
{
    const rec_plan *p = e->plan;
    const int64_t F = e->n_features;
    int64_t local_table = 0;
    for (int64_t t = 0; t < e->n_tables; t++) {
        const rec_plan_table *pt = &p->tables[t];
        if ((pt->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING) != kind)
            continue;
        for (int64_t s = 0; s < pt->n_shards; s++) {
            const rec_plan_shard *sh = &pt->shards[s];
            if (sh->rank != r)
                continue;
            for (int64_t f = 0; f < F; f++) {
                if (e->feature_table[f] != t)
                    continue;
                shard_pair *q = &e->pairs[(*k)++];
                *q = (shard_pair){ .feature = f, .table = t, .local_table = local_table,
                                   .row_offset = sh->row_offset, .rows = sh->rows,
                                   .col_offset = sh->col_offset, .cols = sh->cols,
                                   .rw = is_rw(pt->sharding_type), .local_col = e->local_d[r],
                                   .block_col = -1 };
                e->local_d[r] += sh->cols;
                (*n_pairs)++;
                *cols += sh->cols;
                if (!q->rw) {
                    q->block_col = e->block_cols[r];
                    e->block_cols[r] += sh->cols;
                }
            }
            local_table++;
        }
    }
}

loom_status shard_layout_build(rec_sebc *e)
{
    loom_status st = check_plan(e);
    if (st != LOOM_OK)
        return st;
    const rec_plan *p = e->plan;
    const int W = e->c.size;
    const int64_t F = e->n_features;
    /* every (feature, shard) pair, grouped by rank */
    int64_t n_pairs = 0;
    for (int64_t f = 0; f < F; f++)
        n_pairs += p->tables[e->feature_table[f]].n_shards;
    e->pair_start = calloc((size_t)W + 1, sizeof *e->pair_start);
    e->pairs = calloc((size_t)(n_pairs > 0 ? n_pairs : 1), sizeof *e->pairs);
    e->block_cols = calloc((size_t)W, sizeof *e->block_cols);
    e->local_d = calloc((size_t)W, sizeof *e->local_d);
    e->rw_col = calloc((size_t)(F > 0 ? F : 1), sizeof *e->rw_col);
    e->dp_col = calloc((size_t)(F > 0 ? F : 1), sizeof *e->dp_col);
    e->dp_features = calloc((size_t)(F > 0 ? F : 1), sizeof *e->dp_features);
    if (!e->pair_start || !e->pairs || !e->block_cols || !e->local_d || !e->rw_col || !e->dp_col || !e->dp_features)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    int64_t k = 0;
    e->n_groups = 1;
    for (int r = 0; r < W; r++) {
        e->pair_start[r] = k;
        /* a rank's pairs by compute kernel, fused first (one local TBE per kernel, each
        ** numbering its tables from 0), then in table order; with one kernel that is
        ** table order */
        int64_t kind_pairs[2] = { 0, 0 }, kind_d[2] = { 0, 0 };
        for (int kind = 0; kind < 2; kind++)
            add_pairs(e, r, kind, &k, &kind_pairs[kind], &kind_d[kind]);
        if (r == e->c.rank) {
            e->n_groups = kind_pairs[0] > 0 && kind_pairs[1] > 0 ? 2 : 1;
            e->group0_pairs = e->n_groups == 2 ? kind_pairs[0] : kind_pairs[0] + kind_pairs[1];
            e->group0_d = e->n_groups == 2 ? kind_d[0] : kind_d[0] + kind_d[1];
        }
    }
    e->pair_start[W] = k;
    e->rw_d = e->dp_d = e->n_dp_features = 0;
    for (int64_t f = 0; f < F; f++) {
        const rec_plan_table *pt = &p->tables[e->feature_table[f]];
        const int64_t D = e->embedding_dim[e->feature_table[f]];
        e->rw_col[f] = e->dp_col[f] = -1;
        if (is_rw(pt->sharding_type)) {
            e->rw_col[f] = e->rw_d;
            e->rw_d += D;
        } else if (pt->sharding_type == REC_SHARD_DATA_PARALLEL) {
            e->dp_col[f] = e->dp_d;
            e->dp_d += D;
            e->dp_features[e->n_dp_features++] = f;
        }
    }
    return LOOM_OK;
}
