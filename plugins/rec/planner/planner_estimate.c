/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner_estimate.c - one sharding option of one table: its shards
** (torchrec's calculate_shard_sizes_and_offsets), the perf of each shard
** (EmbeddingPerfEstimator.perf_func_emb_wall_time) and its storage
** (calculate_shard_storages), with torchrec's constants (constants.py).
** The formulas are documented in README.md ("rec planner: the cost model").
**
** The inputs are those of an EmbeddingBagCollection: pooled outputs, one
** input feature group per table (pooling_factors = [pooling_factor]),
** num_poolings 1, unweighted, comms in the table's data type, no cache
** statistics (so prefetch_compute is 0), the storage estimator's default
** pipeline (inputs + outputs).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

#define MIN_CW_DIM 128
#define BIGINT_DTYPE 8.0
#define FULL_BLOCK_EMB_DIM 128
#define HALF_BLOCK_PENALTY 1.15
#define QUARTER_BLOCK_PENALTY 1.75
#define BATCHED_COPY_PERF_FACTOR 2.455
#define DP_ELEMENTWISE_KERNELS_PERF_FACTOR 9.22
#define UVM_CACHING_RATIO 0.2

double rp_perf_total(const rp_perf *p)
{
    return p->fwd_compute + p->fwd_comms + p->bwd_compute + p->bwd_comms + p->prefetch_compute;
}

/* sharding_plan.py _find_base_dim: the first multiple of 4 in [lower, dim) dividing dim, else dim. */
static int64_t find_base_dim(int64_t lower, int64_t dim)
{
    for (int64_t i = lower; i < dim; i++)
        if (dim % i == 0 && i % 4 == 0)
            return i;
    return dim;
}

int64_t rp_cw_block(const rp_table *t)
{
    const int64_t d = t->embedding_dim;
    int64_t b = find_base_dim(t->min_partition > 0 ? t->min_partition : MIN_CW_DIM, d);
    if (b > d)
        b = d;
    return d % b == 0 ? b : d; /* torchrec warns and falls back to one block */
}

/* _calculate_rw_shard_sizes_and_offsets: ceil(rows / n) per rank, the rest on the last, zeros after. */
static void rw_shards(int64_t rows, int64_t cols, int n, rp_shard *s)
{
    const int64_t block = (rows + n - 1) / n;
    const int64_t last_rank = rows / block, last_block = rows - block * last_rank;
    int64_t off = 0;
    for (int r = 0; r < n; r++) {
        const int64_t local = r < last_rank ? block : r == last_rank ? last_block : 0;
        s[r].sizes[0] = local;
        s[r].sizes[1] = cols;
        s[r].offsets[0] = off;
        s[r].offsets[1] = 0;
        off += local;
    }
}

static double kernel_bw(const rp_topology *tp, const rp_table *t, rp_kernel k)
{
    const double ratio = t->cache_load_factor >= 0 ? t->cache_load_factor : UVM_CACHING_RATIO;
    const double mem = tp->device == RP_CPU ? tp->ddr_mem_bw : tp->hbm_mem_bw;
    switch (k) {
    case RP_DENSE:
        return 0.5 * mem;
    case RP_FUSED_UVM_CACHING:
        if (t->prefetch_pipeline)
            return tp->hbm_mem_bw; /* kernel_bw_lookup: a pipelined prefetch runs at the fused rate */
        return (ratio * tp->hbm_mem_bw + (1 - ratio) * tp->hbm_to_ddr_mem_bw) / 10;
    default:
        return mem;
    }
}

/* BasicCommsBandwidths.get_bw */
static double comms_bw(const rp_topology *tp, int world, int local, int all_reduce)
{
    if (all_reduce)
        return tp->inter_host_bw * local;
    return world <= local ? tp->intra_host_bw : tp->inter_host_bw;
}

static rp_perf shard_perf(const rp_problem *pb, const rp_table *t, rp_sharding s, rp_kernel k, const rp_shard *sh)
{
    const rp_topology *tp = &pb->topo;
    const double W = tp->world_size, L = tp->local_world_size, B = (double)pb->batch_size;
    const double tsz = t->element_size, d = (double)sh->sizes[1], bw = kernel_bw(tp, t, k);
    const double bmult = tp->bwd_compute_multiplier;
    const double outputs = B;                       /* pooled: num_poolings x batch */
    rp_perf p = { 0, 0, 0, 0, 0 };
    if (s == RP_TW || s == RP_CW) {
        const double inputs = t->pooling_factor * B;
        const double read = ceil(inputs * W * BIGINT_DTYPE);
        const double lookup = inputs * W * fmax(d, 32) * tsz;
        const double out = outputs * W * d * tsz;
        const double penalty = d >= FULL_BLOCK_EMB_DIM ? 1 : d >= 64 ? HALF_BLOCK_PENALTY : QUARTER_BLOCK_PENALTY;
        const double cbw = comms_bw(tp, tp->world_size, tp->local_world_size, 0);
        p.fwd_comms = out / cbw;
        p.fwd_compute = (read + lookup + out) * penalty / bw;
        p.bwd_comms = out / cbw;
        p.bwd_compute = p.fwd_compute * bmult;
    } else if (s == RP_RW || s == RP_TWRW) {
        const double group = s == RP_RW ? W : L;
        const double inputs = t->pooling_factor * B / group;
        const double read = ceil(inputs * W * BIGINT_DTYPE);
        const double lookup = inputs * W * d * tsz;
        const double out = outputs * W * d * tsz;
        p.fwd_compute = (read + lookup + out) / bw;
        if (s == RP_RW) {
            const double cbw = comms_bw(tp, tp->world_size, tp->local_world_size, 0);
            p.fwd_comms = out / cbw;
            p.bwd_comms = out / cbw;
        } else {
            const double cbw = comms_bw(tp, tp->local_world_size, tp->local_world_size, 0);
            p.fwd_comms = out / cbw;
            p.bwd_comms = out / cbw;
            if (W > L) {
                const double inter = outputs * (W / L) * d * tsz;
                const double ibw = comms_bw(tp, (int)(W / L), 1, 0);
                p.fwd_comms += inter / ibw;
                p.bwd_comms += inter / ibw;
            }
        }
        p.bwd_comms += out * BATCHED_COPY_PERF_FACTOR / bw;
        p.bwd_compute = p.fwd_compute * bmult;
    } else { /* data_parallel */
        const double inputs = t->pooling_factor * B;
        const double read = ceil(inputs * BIGINT_DTYPE);
        const double lookup = inputs * d * tsz;
        const double out = outputs * d * tsz;
        const double table = (double)sh->sizes[0] * d * tsz;
        p.fwd_compute = (read + lookup + out) / bw;
        const double nodes = fmin(W / L, 2);
        double all_reduce = table * (2 * nodes - 1) / nodes / comms_bw(tp, tp->world_size, tp->local_world_size, 1);
        if (W > 2 * L)
            all_reduce *= 2;
        p.bwd_comms = all_reduce + table * DP_ELEMENTWISE_KERNELS_PERF_FACTOR / bw;
        p.bwd_compute = p.fwd_compute * bmult;
    }
    return p;
}

/* ceil(x) bytes, clamped to RP_MAX_IO_BYTES (which no rank holds), so that
** a batch of absurd size stays a large int64 instead of overflowing. */
static int64_t io_bytes(double x)
{
    const double c = ceil(x);
    return c < (double)RP_MAX_IO_BYTES ? (int64_t)c : RP_MAX_IO_BYTES;
}

/* math.ceil(a * b / c) as torchrec computes it: Python's true division of
** the exact product gives the double nearest the quotient; the product is
** formed in long double (64-bit mantissa) so that it stays exact or nearly
** so for tables of up to 2^32 elements per shard. */
static int64_t ceil_muldiv(int64_t a, int64_t b, int64_t c)
{
    const double q = (double)((long double)a * (long double)b / (long double)c);
    return (int64_t)ceil(q);
}

/* _calculate_storage_specific_sizes for one shard: tensor + optimizer (+ cache aux state). */
static int64_t specific_size(const rp_problem *pb, const rp_table *t, rp_sharding s, int64_t storage,
                             const rp_shard *sh, double clf)
{
    const int64_t whole = t->num_embeddings * t->embedding_dim;
    const int64_t tensor = s == RP_DP ? storage : ceil_muldiv(storage, sh->sizes[0] * sh->sizes[1], whole);
    const double mult = pb->rowwise_optimizer ? 1.0 / (double)t->embedding_dim : pb->optimizer_multiplier;
    const int64_t optimizer = (int64_t)ceil((double)tensor * mult);
    const int64_t aux = clf >= 0 ? (int64_t)ceil((double)sh->sizes[0] * (4 + clf * 16)) : 0;
    return tensor + optimizer + aux;
}

static rp_storage shard_storage(const rp_problem *pb, const rp_table *t, rp_sharding s, rp_kernel k,
                                const rp_shard *sh)
{
    const rp_topology *tp = &pb->topo;
    const double W = tp->world_size, L = tp->local_world_size, B = (double)pb->batch_size;
    const double tsz = t->element_size;
    /* _calculate_shard_io_sizes */
    double inputs = t->pooling_factor * B, io_world = W;
    if (s == RP_RW)
        inputs /= W;
    else if (s == RP_TWRW)
        inputs /= L;
    if (s == RP_DP)
        io_world = 1;
    const double out_dim = s == RP_DP || s == RP_TW ? (double)t->embedding_dim : (double)sh->sizes[1];
    int64_t in_size = io_bytes(inputs * io_world * BIGINT_DTYPE);
    int64_t out_size = io_bytes(B * io_world * out_dim * tsz);
    if ((s == RP_RW || s == RP_TWRW) && sh->sizes[0] * sh->sizes[1] == 0)
        in_size = out_size = 0;
    /* the sharder's storage_usage: the whole table's bytes, in DDR for UVM caching and on cpu */
    int64_t tensor_bytes = t->num_embeddings * t->embedding_dim * t->element_size;
    if (k == RP_QUANT)
        tensor_bytes += t->num_embeddings * 4; /* BaseQuantEmbeddingSharder: + rows x 4 */
    int64_t hbm = 0, ddr = 0;
    if (tp->device == RP_CPU || k == RP_FUSED_UVM_CACHING)
        ddr = tensor_bytes;
    else
        hbm = tensor_bytes;
    const int cached = k == RP_FUSED_UVM_CACHING;
    const double clf = t->cache_load_factor > 0 ? t->cache_load_factor : UVM_CACHING_RATIO;
    if (cached)
        hbm = (int64_t)rint((double)ddr * clf); /* Python's round: half to even, as rint by default */
    const int64_t hbm_specific = specific_size(pb, t, s, hbm, sh, cached ? clf : -1);
    const int64_t ddr_specific = specific_size(pb, t, s, ddr, sh, -1);
    rp_storage st;
    st.hbm = tp->device == RP_CUDA ? hbm_specific + in_size + out_size : 0;
    st.ddr = tp->device == RP_CPU ? in_size + out_size + ddr_specific : ddr_specific;
    return st;
}

int rp_option_make(const rp_problem *pb, int ti, rp_sharding s, rp_kernel k, rp_option *o)
{
    const rp_table *t = &pb->tables[ti];
    const int W = pb->topo.world_size, L = pb->topo.local_world_size;
    const int64_t rows = t->num_embeddings, cols = t->embedding_dim;
    memset(o, 0, sizeof *o);
    o->table = ti;
    o->sharding = s;
    o->kernel = k;
    int64_t block = 0;
    switch (s) {
    case RP_DP: o->n_shards = W; break;
    case RP_TW: o->n_shards = 1; break;
    case RP_RW: o->n_shards = W; break;
    case RP_TWRW: o->n_shards = L; break;
    case RP_CW:
        block = rp_cw_block(t);
        o->n_shards = (int)(cols / block);
        break;
    default: return -1;
    }
    o->shards = calloc((size_t)o->n_shards, sizeof *o->shards);
    if (o->shards == NULL)
        return -1;
    for (int i = 0; i < o->n_shards; i++) {
        rp_shard *sh = &o->shards[i];
        sh->rank = -1;
        sh->sizes[0] = rows;
        sh->sizes[1] = cols;
        if (s == RP_CW) {
            sh->sizes[1] = block;
            sh->offsets[1] = block * i;
        }
    }
    if (s == RP_RW || s == RP_TWRW)
        rw_shards(rows, cols, o->n_shards, o->shards);
    for (int i = 0; i < o->n_shards; i++) {
        o->shards[i].perf = shard_perf(pb, t, s, k, &o->shards[i]);
        o->shards[i].storage = shard_storage(pb, t, s, k, &o->shards[i]);
    }
    return 0;
}

void rp_option_free(rp_option *o)
{
    free(o->shards);
    o->shards = NULL;
    o->n_shards = 0;
}
