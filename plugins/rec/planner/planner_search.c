/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner_search.c - EmbeddingShardingPlanner.plan: reserve storage
** (HeuristicalStorageReservation), enumerate every option of every table
** (EmbeddingEnumerator), propose (GridSearchProposer when the product of the
** option counts is at most 10^4, GreedyProposer by depth and by sum,
** UniformProposer, in that order), place each proposal
** (GreedyPerfPartitioner sorting by storage, or MemoryBalancedPartitioner)
** and keep the first proposal of the lowest perf rating (NoopPerfModel:
** the largest per-rank sum of shard perf totals).
**
** Determinism: options sort stably, so ties keep enumeration order
** (sharding types data_parallel, table_wise, column_wise, row_wise,
** table_row_wise; kernels dense, fused, fused_uvm_caching, quant); a shard
** goes to the device of the least (perf total, rank % local_world_size,
** rank) that fits, which is what torchrec's heap of OrderedDeviceHardware
** pops; a later proposal replaces the best only when strictly better.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

#define MAX_GRID_PROPOSALS 10000
#define MB_HBM_DIFF (10 * 1024 * 1024)   /* MemoryBalancedPartitioner: 10 MB */
#define MB_MAX_SEARCH 10
#define MB_TOLERANCE 0.02

typedef struct device {
    rp_storage free;
    rp_perf perf;
} device;

/* Why the last failed placement failed: the table, and what it lacked. */
typedef struct failure {
    int table;
    int64_t need_hbm, need_ddr, free_hbm, free_ddr;
} failure;

typedef struct search {
    const rp_problem *pb;
    rp_storage cap;             /* per rank, after the reservation */
    int n_options;
    rp_option *options;         /* every option of every table, table-major */
    int *first, *count;         /* per table: its options [first, first + count) */
    failure fail;
} search;

static double dev_total(const device *d)
{
    return rp_perf_total(&d->perf);
}

static void perf_add(rp_perf *a, const rp_perf *b)
{
    a->fwd_compute += b->fwd_compute;
    a->fwd_comms += b->fwd_comms;
    a->bwd_compute += b->bwd_compute;
    a->bwd_comms += b->bwd_comms;
    a->prefetch_compute += b->prefetch_compute;
}

static int fits(const rp_storage *need, const rp_storage *have)
{
    return need->hbm <= have->hbm && need->ddr <= have->ddr;
}

static rp_storage option_storage(const rp_option *o)
{
    rp_storage s = { 0, 0 };
    for (int i = 0; i < o->n_shards; i++) {
        s.hbm += o->shards[i].storage.hbm;
        s.ddr += o->shards[i].storage.ddr;
    }
    return s;
}

static double option_perf(const rp_option *o)
{
    double p = 0;
    for (int i = 0; i < o->n_shards; i++)
        p += rp_perf_total(&o->shards[i].perf);
    return p;
}

/* _sharding_option_score */
static double option_score(const rp_option *o, int use_depth)
{
    double s = 0;
    for (int i = 0; i < o->n_shards; i++) {
        const double t = rp_perf_total(&o->shards[i].perf);
        s = use_depth ? (i == 0 || t > s ? t : s) : s + t;
    }
    return s;
}

static void note_failure(search *sr, int table, const rp_storage *need, const device *devs, int n)
{
    /* the device with the most room for this shard (its HBM first, as torchrec's Storage orders) */
    int best = 0;
    for (int i = 1; i < n; i++)
        if (devs[i].free.hbm > devs[best].free.hbm
            || (devs[i].free.hbm == devs[best].free.hbm && devs[i].free.ddr > devs[best].free.ddr))
            best = i;
    sr->fail.table = table;
    sr->fail.need_hbm = need->hbm;
    sr->fail.need_ddr = need->ddr;
    sr->fail.free_hbm = n ? devs[best].free.hbm : 0;
    sr->fail.free_ddr = n ? devs[best].free.ddr : 0;
}

static int uniform_place(search *sr, rp_option *o, device *devs, const int *ranks, int n)
{
    if (o->n_shards != n)
        return -1;
    for (int i = 0; i < n; i++) {
        rp_shard *sh = &o->shards[i];
        device *d = &devs[ranks[i]];
        if (!fits(&sh->storage, &d->free)) {
            note_failure(sr, o->table, &sh->storage, d, 1);
            return -1;
        }
        sh->rank = ranks[i];
        d->free.hbm -= sh->storage.hbm;
        d->free.ddr -= sh->storage.ddr;
        perf_add(&d->perf, &sh->perf);
    }
    return 0;
}

static int device_less(const device *devs, int a, int b, int lws)
{
    const double ta = dev_total(&devs[a]), tb = dev_total(&devs[b]);
    if (ta != tb)
        return ta < tb;
    if (a % lws != b % lws)
        return a % lws < b % lws;
    return a < b;
}

static int device_place(search *sr, rp_option *o, device *devs, int W, int lws)
{
    for (int i = 0; i < o->n_shards; i++) {
        rp_shard *sh = &o->shards[i];
        int best = -1;
        for (int r = 0; r < W; r++)
            if (fits(&sh->storage, &devs[r].free) && (best < 0 || device_less(devs, r, best, lws)))
                best = r;
        if (best < 0) {
            note_failure(sr, o->table, &sh->storage, devs, W);
            return -1;
        }
        sh->rank = best;
        devs[best].free.hbm -= sh->storage.hbm;
        devs[best].free.ddr -= sh->storage.ddr;
        perf_add(&devs[best].perf, &sh->perf);
    }
    return 0;
}

/* _cohost_partition of one table_row_wise option: the hosts by their summed perf
** (a stable sort), the first whose devices take the shards uniformly. */
static int host_place(search *sr, rp_option *o, device *devs, int W, int lws)
{
    const int hosts = W / lws;
    int order[RP_MAX_WORLD];
    double sums[RP_MAX_WORLD];
    for (int h = 0; h < hosts; h++) {
        order[h] = h;
        sums[h] = 0;
        for (int j = 0; j < lws; j++)
            sums[h] += dev_total(&devs[h * lws + j]);
    }
    for (int i = 1; i < hosts; i++) /* insertion sort: stable */
        for (int j = i; j > 0 && sums[order[j]] < sums[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    const rp_storage need = option_storage(o);
    device copy[RP_MAX_WORLD];
    for (int hi = 0; hi < hosts; hi++) {
        const int h = order[hi];
        rp_storage have = { 0, 0 };
        for (int j = 0; j < lws; j++) {
            have.hbm += devs[h * lws + j].free.hbm;
            have.ddr += devs[h * lws + j].free.ddr;
        }
        if (!fits(&need, &have))
            continue;
        memcpy(copy, devs, (size_t)W * sizeof *devs);
        int ranks[RP_MAX_WORLD];
        for (int j = 0; j < lws; j++)
            ranks[j] = h * lws + j;
        if (uniform_place(sr, o, copy, ranks, lws) == 0) {
            memcpy(devs, copy, (size_t)W * sizeof *devs);
            return 0;
        }
    }
    note_failure(sr, o->table, &need, devs, 0);
    sr->fail.free_hbm = sr->fail.free_ddr = 0;
    for (int h = 0; h < hosts; h++) {
        rp_storage have = { 0, 0 };
        for (int j = 0; j < lws; j++) {
            have.hbm += devs[h * lws + j].free.hbm;
            have.ddr += devs[h * lws + j].free.ddr;
        }
        if (have.hbm > sr->fail.free_hbm || (have.hbm == sr->fail.free_hbm && have.ddr > sr->fail.free_ddr)) {
            sr->fail.free_hbm = have.hbm;
            sr->fail.free_ddr = have.ddr;
        }
    }
    return -1;
}

/* GreedyPerfPartitioner.partition of proposal[0..n) (options of distinct
** tables, in table order); hbm_per_device > 0 overrides the HBM capacity. */
static int greedy_partition(search *sr, rp_option **prop, int n, int by_perf, int64_t hbm_per_device,
                            device *devs)
{
    const int W = sr->pb->topo.world_size, lws = sr->pb->topo.local_world_size;
    for (int r = 0; r < W; r++) {
        devs[r].free = sr->cap;
        if (hbm_per_device > 0)
            devs[r].free.hbm = hbm_per_device;
        memset(&devs[r].perf, 0, sizeof devs[r].perf);
    }
    int ranks[RP_MAX_WORLD];
    for (int r = 0; r < W; r++)
        ranks[r] = r;
    /* uniform ones first, in proposal order */
    for (int i = 0; i < n; i++)
        if (prop[i]->sharding == RP_DP || prop[i]->sharding == RP_RW)
            if (uniform_place(sr, prop[i], devs, ranks, W))
                return -1;
    /* the others, largest first (storage (hbm, ddr) or perf), stable */
    int order[RP_MAX_TABLES], m = 0;
    for (int i = 0; i < n; i++)
        if (!(prop[i]->sharding == RP_DP || prop[i]->sharding == RP_RW))
            order[m++] = i;
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0; j--) {
            const rp_option *a = prop[order[j]], *b = prop[order[j - 1]];
            int greater;
            if (by_perf) {
                greater = option_perf(a) > option_perf(b);
            } else {
                const rp_storage sa = option_storage(a), sb = option_storage(b);
                greater = sa.hbm > sb.hbm || (sa.hbm == sb.hbm && sa.ddr > sb.ddr);
            }
            if (!greater)
                break;
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < m; i++) {
        rp_option *o = prop[order[i]];
        if (o->sharding == RP_TWRW ? host_place(sr, o, devs, W, lws) : device_place(sr, o, devs, W, lws))
            return -1;
    }
    return 0;
}

/* NoopPerfModel.rate */
static double rate(const search *sr, rp_option **prop, int n)
{
    double perfs[RP_MAX_WORLD] = { 0 };
    const int W = sr->pb->topo.world_size;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < prop[i]->n_shards; j++)
            perfs[prop[i]->shards[j].rank] += rp_perf_total(&prop[i]->shards[j].perf);
    double m = perfs[0];
    for (int r = 1; r < W; r++)
        m = perfs[r] > m ? perfs[r] : m;
    return m;
}

static void save_ranks(rp_option **prop, int n, int *out)
{
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < prop[i]->n_shards; j++)
            out[k++] = prop[i]->shards[j].rank;
}

static void load_ranks(rp_option **prop, int n, const int *in)
{
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < prop[i]->n_shards; j++)
            prop[i]->shards[j].rank = in[k++];
}

/* MemoryBalancedPartitioner.partition: the greedy placement sorting by perf,
** then a bisection on the HBM per device for the least HBM whose plan is
** within 2% of the first one's perf. */
static int memory_balanced_partition(search *sr, rp_option **prop, int n, device *devs, int *tmp_ranks)
{
    if (greedy_partition(sr, prop, n, 1, 0, devs))
        return -1;
    const int W = sr->pb->topo.world_size;
    const double original = rate(sr, prop, n);
    save_ranks(prop, n, tmp_ranks);
    int64_t by_rank[RP_MAX_WORLD] = { 0 }, max_shard = 0;
    double total = 0; /* up to world_size x hbm_cap: a double, not to overflow */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < prop[i]->n_shards; j++) {
            const int64_t h = prop[i]->shards[j].storage.hbm;
            by_rank[prop[i]->shards[j].rank] += h;
            total += (double)h;
            max_shard = h > max_shard ? h : max_shard;
        }
    int64_t hi = 0;
    for (int r = 0; r < W; r++)
        hi = by_rank[r] > hi ? by_rank[r] : hi;
    int64_t lo = (int64_t)(total / W);
    lo = lo > max_shard ? lo : max_shard;
    for (int count = 0; count < MB_MAX_SEARCH && lo + MB_HBM_DIFF < hi; count++) {
        const int64_t mid = (hi + lo) / 2;
        if (greedy_partition(sr, prop, n, 1, mid, devs) == 0) {
            const double p = rate(sr, prop, n);
            if (p > original * (1 + MB_TOLERANCE)) {
                lo = mid;
            } else {
                save_ranks(prop, n, tmp_ranks);
                hi = mid;
            }
        } else {
            lo = mid;
        }
    }
    load_ranks(prop, n, tmp_ranks);
    return 0;
}

typedef struct best_plan {
    double rating;
    int found;
    int *choice;    /* per table: index into sr->options */
    int *ranks;     /* every shard's rank, in table order */
} best_plan;

static int evaluate(search *sr, rp_option **prop, const int *choice, best_plan *best, int *n_proposals,
                    device *devs, int *tmp_ranks)
{
    const rp_problem *pb = sr->pb;
    const int n = pb->n_tables;
    for (int t = 0; t < n; t++)
        prop[t] = &sr->options[choice[t]];
    (*n_proposals)++;
    const int rc = pb->partitioner == RP_PART_MEMORY_BALANCED ? memory_balanced_partition(sr, prop, n, devs, tmp_ranks)
                                                              : greedy_partition(sr, prop, n, 0, 0, devs);
    if (rc)
        return 0;
    const double r = rate(sr, prop, n);
    if (!best->found || r < best->rating) {
        best->found = 1;
        best->rating = r;
        memcpy(best->choice, choice, (size_t)n * sizeof *choice);
        save_ranks(prop, n, best->ranks);
    }
    return 1;
}

/* per table, its option indices sorted by score (stable) */
static void sort_by_score(const search *sr, int t, int use_depth, int *idx)
{
    const int c = sr->count[t];
    for (int i = 0; i < c; i++)
        idx[i] = sr->first[t] + i;
    for (int i = 1; i < c; i++)
        for (int j = i; j > 0 && option_score(&sr->options[idx[j]], use_depth)
                                      < option_score(&sr->options[idx[j - 1]], use_depth); j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
}

static int storage_tuple_greater(const rp_option *a, const rp_option *b)
{
    /* (max hbm, sum hbm, max ddr, sum ddr) of GreedyProposer.feedback */
    int64_t ka[4] = { 0, 0, 0, 0 }, kb[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < a->n_shards; i++) {
        ka[0] = a->shards[i].storage.hbm > ka[0] ? a->shards[i].storage.hbm : ka[0];
        ka[1] += a->shards[i].storage.hbm;
        ka[2] = a->shards[i].storage.ddr > ka[2] ? a->shards[i].storage.ddr : ka[2];
        ka[3] += a->shards[i].storage.ddr;
    }
    for (int i = 0; b && i < b->n_shards; i++) {
        kb[0] = b->shards[i].storage.hbm > kb[0] ? b->shards[i].storage.hbm : kb[0];
        kb[1] += b->shards[i].storage.hbm;
        kb[2] = b->shards[i].storage.ddr > kb[2] ? b->shards[i].storage.ddr : kb[2];
        kb[3] += b->shards[i].storage.ddr;
    }
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i])
            return ka[i] > kb[i];
    return 0;
}

static int fail_msg(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int rp_plan_run(const rp_problem *pb, int keep_search_space, rp_plan *plan, char *err, size_t errlen)
{
    const rp_topology *tp = &pb->topo;
    const int n = pb->n_tables, W = tp->world_size;
    memset(plan, 0, sizeof *plan);
    search sr;
    memset(&sr, 0, sizeof sr);
    sr.pb = pb;
    sr.fail.table = -1;
    /* HeuristicalStorageReservation: percentage of HBM, then the KJTs (2 pipelined batches x 10 copies) */
    double batch_inputs = 0;
    for (int t = 0; t < n; t++)
        batch_inputs += pb->tables[t].pooling_factor * (double)pb->batch_size;
    const double kjt_bytes = ceil(batch_inputs * 8.0) * 20;
    const int64_t kjt = kjt_bytes < (double)RP_MAX_IO_BYTES ? (int64_t)kjt_bytes : RP_MAX_IO_BYTES;
    sr.cap.hbm = (int64_t)((1 - pb->storage_reservation) * (double)tp->hbm_cap);
    sr.cap.ddr = tp->ddr_cap;
    if (tp->device == RP_CUDA)
        sr.cap.hbm -= kjt;
    else
        sr.cap.ddr -= kjt;
    if (sr.cap.hbm < 0 || sr.cap.ddr < 0)
        return fail_msg(err, errlen, "the storage reservation (%.0f%% of HBM and %lld bytes of KJT buffers per rank) "
                        "exceeds the capacity of a rank by %lld bytes", pb->storage_reservation * 100,
                        (long long)kjt, (long long)-(sr.cap.hbm < 0 ? sr.cap.hbm : sr.cap.ddr));
    plan->reserved = sr.cap;

    int rc = -1;
    sr.first = calloc((size_t)n, sizeof *sr.first);
    sr.count = calloc((size_t)n, sizeof *sr.count);
    sr.options = calloc((size_t)n * RP_N_SHARDINGS * RP_N_KERNELS, sizeof *sr.options);
    int *choice = calloc((size_t)n, sizeof *choice), *sorted = NULL, *cur = NULL, *tmp_ranks = NULL;
    rp_option **prop = calloc((size_t)n, sizeof *prop);
    device *devs = calloc((size_t)W, sizeof *devs);
    best_plan best = { 0, 0, calloc((size_t)n, sizeof(int)), NULL };
    if (!sr.first || !sr.count || !sr.options || !choice || !prop || !devs || !best.choice) {
        fail_msg(err, errlen, "out of memory");
        goto done;
    }
    /* EmbeddingEnumerator */
    int64_t n_shards_max = 0;
    for (int t = 0; t < n; t++) {
        const rp_table *tb = &pb->tables[t];
        sr.first[t] = sr.n_options;
        int64_t most = 0;
        for (int s = 0; s < RP_N_SHARDINGS; s++) {
            if (!(tb->sharding_mask & (1u << s)))
                continue;
            for (int k = 0; k < RP_N_KERNELS; k++) {
                if (!(tb->kernel_mask & (1u << k)) || (s == RP_DP) != (k == RP_DENSE))
                    continue;
                if (k == RP_FUSED_UVM_CACHING && tp->device != RP_CUDA)
                    continue;
                if (rp_option_make(pb, t, (rp_sharding)s, (rp_kernel)k, &sr.options[sr.n_options])) {
                    fail_msg(err, errlen, "out of memory");
                    goto done;
                }
                most = sr.options[sr.n_options].n_shards > most ? sr.options[sr.n_options].n_shards : most;
                sr.n_options++;
            }
        }
        sr.count[t] = sr.n_options - sr.first[t];
        n_shards_max += most;
        if (sr.count[t] == 0) {
            fail_msg(err, errlen, "tables[%d] (%s): no sharding type and compute kernel are left by its "
                     "'sharding_types' and 'compute_kernels' on compute_device %s", t, tb->name,
                     tp->device == RP_CUDA ? "cuda" : "cpu");
            goto done;
        }
    }
    best.ranks = calloc((size_t)n_shards_max, sizeof(int));
    tmp_ranks = calloc((size_t)n_shards_max, sizeof(int));
    sorted = calloc((size_t)sr.n_options, sizeof *sorted);
    cur = calloc((size_t)n, sizeof *cur);
    if (!best.ranks || !tmp_ranks || !sorted || !cur) {
        fail_msg(err, errlen, "out of memory");
        goto done;
    }

    /* GridSearchProposer: every combination, the last table fastest (itertools.product), options by depth */
    double combos = 1;
    for (int t = 0; t < n; t++)
        combos *= sr.count[t];
    if (combos <= MAX_GRID_PROPOSALS) {
        for (int t = 0; t < n; t++)
            sort_by_score(&sr, t, 1, sorted + sr.first[t]);
        memset(cur, 0, (size_t)n * sizeof *cur);
        for (;;) {
            for (int t = 0; t < n; t++)
                choice[t] = sorted[sr.first[t] + cur[t]];
            evaluate(&sr, prop, choice, &best, &plan->n_proposals, devs, tmp_ranks);
            int t = n - 1;
            while (t >= 0 && ++cur[t] == sr.count[t])
                cur[t--] = 0;
            if (t < 0)
                break;
        }
    }
    /* GreedyProposer(use_depth=True), then (use_depth=False) */
    for (int depth = 1; depth >= 0; depth--) {
        for (int t = 0; t < n; t++) {
            sort_by_score(&sr, t, depth, sorted + sr.first[t]);
            cur[t] = 0;
        }
        for (;;) {
            for (int t = 0; t < n; t++)
                choice[t] = sorted[sr.first[t] + cur[t]];
            evaluate(&sr, prop, choice, &best, &plan->n_proposals, devs, tmp_ranks);
            int largest = -1;
            for (int t = 0; t < n; t++)
                if (cur[t] + 1 < sr.count[t]
                    && storage_tuple_greater(&sr.options[choice[t]], largest < 0 ? NULL : &sr.options[choice[largest]]))
                    largest = t;
            if (largest < 0)
                break;
            cur[largest]++;
        }
    }
    /* UniformProposer: per sharding type present in every table, each table's best option of it */
    for (int s = 0; s < RP_N_SHARDINGS; s++) {
        int all = 1;
        for (int t = 0; t < n && all; t++) {
            sort_by_score(&sr, t, 1, sorted + sr.first[t]);
            int found = -1;
            for (int i = 0; i < sr.count[t] && found < 0; i++)
                if (sr.options[sorted[sr.first[t] + i]].sharding == (rp_sharding)s)
                    found = sorted[sr.first[t] + i];
            all = found >= 0;
            choice[t] = found;
        }
        if (all)
            evaluate(&sr, prop, choice, &best, &plan->n_proposals, devs, tmp_ranks);
    }

    if (!best.found) {
        if (sr.fail.table < 0) {
            fail_msg(err, errlen, "no sharding plan fits");
        } else {
            const int64_t short_hbm = sr.fail.need_hbm - sr.fail.free_hbm;
            const int64_t short_ddr = sr.fail.need_ddr - sr.fail.free_ddr;
            const int hbm_short = short_hbm > 0;
            fail_msg(err, errlen, "no sharding plan fits: table %s (tables[%d]) needs %lld bytes of %s for a shard but "
                     "the roomiest rank has %lld left after the others: %lld bytes short (after reserving "
                     "%.0f%% of HBM and the KJT buffers; %d proposals tried)",
                     pb->tables[sr.fail.table].name, sr.fail.table,
                     (long long)(hbm_short ? sr.fail.need_hbm : sr.fail.need_ddr), hbm_short ? "HBM" : "DDR",
                     (long long)(hbm_short ? sr.fail.free_hbm : sr.fail.free_ddr),
                     (long long)(hbm_short ? short_hbm : short_ddr), pb->storage_reservation * 100,
                     plan->n_proposals);
        }
        goto done;
    }
    /* the plan: copies of the chosen options with their ranks */
    plan->options = calloc((size_t)n, sizeof *plan->options);
    if (plan->options == NULL) {
        fail_msg(err, errlen, "out of memory");
        goto done;
    }
    plan->n_tables = n;
    for (int t = 0, k = 0; t < n; t++) {
        const rp_option *o = &sr.options[best.choice[t]];
        rp_option *c = &plan->options[t];
        *c = *o;
        c->shards = malloc((size_t)o->n_shards * sizeof *c->shards);
        if (c->shards == NULL) {
            c->n_shards = 0;
            fail_msg(err, errlen, "out of memory");
            goto done;
        }
        memcpy(c->shards, o->shards, (size_t)o->n_shards * sizeof *c->shards);
        for (int j = 0; j < c->n_shards; j++)
            c->shards[j].rank = best.ranks[k++];
    }
    if (keep_search_space) {
        /* the options move to the plan (their shards too), unplaced */
        plan->search = sr.options;
        plan->n_search = sr.n_options;
        for (int i = 0; i < sr.n_options; i++)
            for (int j = 0; j < sr.options[i].n_shards; j++)
                sr.options[i].shards[j].rank = -1;
        sr.options = NULL;
        sr.n_options = 0;
    }
    plan->perf_rating = best.rating;
    int64_t hbm[RP_MAX_WORLD] = { 0 }, ddr[RP_MAX_WORLD] = { 0 };
    for (int t = 0; t < n; t++)
        for (int j = 0; j < plan->options[t].n_shards; j++) {
            hbm[plan->options[t].shards[j].rank] += plan->options[t].shards[j].storage.hbm;
            ddr[plan->options[t].shards[j].rank] += plan->options[t].shards[j].storage.ddr;
        }
    for (int r = 0; r < W; r++) {
        plan->max_hbm = hbm[r] > plan->max_hbm ? hbm[r] : plan->max_hbm;
        plan->max_ddr = ddr[r] > plan->max_ddr ? ddr[r] : plan->max_ddr;
    }
    rc = 0;
done:
    for (int i = 0; i < sr.n_options; i++)
        rp_option_free(&sr.options[i]);
    free(sr.options);
    free(sr.first);
    free(sr.count);
    free(choice);
    free(prop);
    free(devs);
    free(best.choice);
    free(best.ranks);
    free(tmp_ranks);
    free(sorted);
    free(cur);
    if (rc)
        rp_plan_free(plan);
    return rc;
}

void rp_plan_free(rp_plan *plan)
{
    for (int i = 0; plan->search && i < plan->n_search; i++)
        rp_option_free(&plan->search[i]);
    free(plan->search);
    plan->search = NULL;
    plan->n_search = 0;
    for (int t = 0; plan->options && t < plan->n_tables; t++)
        rp_option_free(&plan->options[t]);
    free(plan->options);
    plan->options = NULL;
    plan->n_tables = 0;
}
