/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner_output.c - what rec.plan returns:
**   the plan      loom.rec.plan/1 as canonical JSON (the keys in the format's
**                 order, no spaces): torchrec's ShardingPlan, one entry per
**                 table in the config's order, shards [] for data_parallel
**   the estimates the per-shard perf (ms) and storage (bytes) of the chosen
**                 options, the plan's perf rating and its hash (FNV-1a 64 of
**                 the plan text, as 16 hex digits)
**   the stats     a table like torchrec's EmbeddingStats: per rank its HBM,
**                 DDR and perf, per table its sharding, kernel and ranks
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"

typedef struct text {
    char *s;
    size_t n, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = 1;
            return;
        }
        if (t->s && (size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 1024;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

static char *finish(text *t)
{
    if (t->failed) {
        free(t->s);
        return NULL;
    }
    return t->s;
}

/* table names are checked at parsing to be non-empty; quote and escape them */
static void put_name(text *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(t, "\\%c", c);
        else if (c < 0x20)
            put(t, "\\u%04x", c);
        else
            put(t, "%c", c);
    }
    put(t, "\"");
}

static void put_ranks(text *t, const rp_option *o)
{
    put(t, "[");
    for (int j = 0; j < o->n_shards; j++)
        put(t, "%s%d", j ? "," : "", o->shards[j].rank);
    put(t, "]");
}

char *rp_plan_json(const rp_problem *pb, const rp_plan *plan)
{
    text t = { NULL, 0, 0, 0 };
    put(&t, "{\"format\":\"loom.rec.plan/1\",\"world_size\":%d,\"tables\":[", pb->topo.world_size);
    for (int i = 0; i < plan->n_tables; i++) {
        const rp_option *o = &plan->options[i];
        const rp_table *tb = &pb->tables[o->table];
        put(&t, "%s{\"name\":", i ? "," : "");
        put_name(&t, tb->name);
        put(&t, ",\"num_embeddings\":%lld,\"embedding_dim\":%lld,\"sharding_type\":\"%s\",\"compute_kernel\":\"%s\",",
            (long long)tb->num_embeddings, (long long)tb->embedding_dim, rp_sharding_names[o->sharding],
            rp_kernel_names[o->kernel]);
        /* a cached table's CacheParams, as the plan's canonical form has them
        ** (plugins/rec/shard/plan.c): only where they differ from the defaults */
        if (strcmp(rp_kernel_names[o->kernel], "fused_uvm_caching") == 0) {
            if (tb->cache_load_factor > 0 && tb->cache_load_factor != 0.2)
                put(&t, "\"cache_load_factor\":%.17g,", tb->cache_load_factor);
            if (tb->prefetch_pipeline)
                put(&t, "\"prefetch_pipeline\":true,");
        }
        put(&t, "\"ranks\":");
        put_ranks(&t, o);
        put(&t, ",\"shards\":[");
        for (int j = 0; o->sharding != RP_DP && j < o->n_shards; j++) {
            const rp_shard *s = &o->shards[j];
            put(&t, "%s{\"rank\":%d,\"offsets\":[%lld,%lld],\"sizes\":[%lld,%lld]}", j ? "," : "", s->rank,
                (long long)s->offsets[0], (long long)s->offsets[1], (long long)s->sizes[0], (long long)s->sizes[1]);
        }
        put(&t, "]}");
    }
    put(&t, "]}");
    return finish(&t);
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

char *rp_estimates_json(const rp_problem *pb, const rp_plan *plan)
{
    char *pj = rp_plan_json(pb, plan);
    if (pj == NULL)
        return NULL;
    const uint64_t hash = fnv1a64(pj);
    free(pj);
    text t = { NULL, 0, 0, 0 };
    put(&t, "{\"hash\": \"%016" PRIx64 "\", \"perf_rating\": %.17g, \"max_hbm\": %lld, \"max_ddr\": %lld, "
        "\"proposals\": %d, \"reserved\": {\"hbm\": %lld, \"ddr\": %lld}, \"tables\": [",
        hash, plan->perf_rating, (long long)plan->max_hbm, (long long)plan->max_ddr, plan->n_proposals,
        (long long)plan->reserved.hbm, (long long)plan->reserved.ddr);
    for (int i = 0; i < plan->n_tables; i++) {
        const rp_option *o = &plan->options[i];
        put(&t, "%s{\"name\": ", i ? ", " : "");
        put_name(&t, pb->tables[o->table].name);
        put(&t, ", \"sharding_type\": \"%s\", \"compute_kernel\": \"%s\", \"shards\": [",
            rp_sharding_names[o->sharding], rp_kernel_names[o->kernel]);
        for (int j = 0; j < o->n_shards; j++) {
            const rp_shard *s = &o->shards[j];
            const rp_perf *p = &s->perf;
            put(&t, "%s{\"rank\": %d, \"offsets\": [%lld, %lld], \"sizes\": [%lld, %lld], "
                "\"perf\": {\"fwd_compute\": %.17g, \"fwd_comms\": %.17g, \"bwd_compute\": %.17g, "
                "\"bwd_comms\": %.17g, \"prefetch_compute\": %.17g, \"total\": %.17g}, "
                "\"storage\": {\"hbm\": %lld, \"ddr\": %lld}}", j ? ", " : "", s->rank,
                (long long)s->offsets[0], (long long)s->offsets[1], (long long)s->sizes[0], (long long)s->sizes[1],
                p->fwd_compute, p->fwd_comms, p->bwd_compute, p->bwd_comms, p->prefetch_compute, rp_perf_total(p),
                (long long)s->storage.hbm, (long long)s->storage.ddr);
        }
        put(&t, "]}");
    }
    put(&t, "]");
    if (plan->search) {
        /* every option, per shard: [fwd_compute, fwd_comms, bwd_compute, bwd_comms, prefetch_compute, total,
        ** hbm, ddr] */
        put(&t, ", \"search_space\": [");
        for (int i = 0; i < plan->n_search; i++) {
            const rp_option *o = &plan->search[i];
            put(&t, "%s{\"name\": ", i ? ", " : "");
            put_name(&t, pb->tables[o->table].name);
            put(&t, ", \"sharding_type\": \"%s\", \"compute_kernel\": \"%s\", \"shards\": [",
                rp_sharding_names[o->sharding], rp_kernel_names[o->kernel]);
            for (int j = 0; j < o->n_shards; j++) {
                const rp_shard *sh = &o->shards[j];
                const rp_perf *p = &sh->perf;
                put(&t, "%s[%.17g, %.17g, %.17g, %.17g, %.17g, %.17g, %lld, %lld]", j ? ", " : "", p->fwd_compute,
                    p->fwd_comms, p->bwd_compute, p->bwd_comms, p->prefetch_compute, rp_perf_total(p),
                    (long long)sh->storage.hbm, (long long)sh->storage.ddr);
            }
            put(&t, "]}");
        }
        put(&t, "]");
    }
    put(&t, "}");
    return finish(&t);
}

static double gb(int64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

char *rp_stats_text(const rp_problem *pb, const rp_plan *plan)
{
    const rp_topology *tp = &pb->topo;
    const int W = tp->world_size;
    text t = { NULL, 0, 0, 0 };
    rp_storage *used = calloc((size_t)W, sizeof *used);
    rp_perf *perf = calloc((size_t)W, sizeof *perf);
    int *n_shards = calloc((size_t)W, sizeof *n_shards);
    if (!used || !perf || !n_shards) {
        free(used);
        free(perf);
        free(n_shards);
        return NULL;
    }
    for (int i = 0; i < plan->n_tables; i++)
        for (int j = 0; j < plan->options[i].n_shards; j++) {
            const rp_shard *s = &plan->options[i].shards[j];
            used[s->rank].hbm += s->storage.hbm;
            used[s->rank].ddr += s->storage.ddr;
            perf[s->rank].fwd_compute += s->perf.fwd_compute;
            perf[s->rank].fwd_comms += s->perf.fwd_comms;
            perf[s->rank].bwd_compute += s->perf.bwd_compute;
            perf[s->rank].bwd_comms += s->perf.bwd_comms;
            perf[s->rank].prefetch_compute += s->perf.prefetch_compute;
            n_shards[s->rank]++;
        }
    put(&t, "--- Planner Statistics ---\n");
    put(&t,
        "--- Evaluated %d proposal(s), world_size %d, local_world_size %d, compute_device %s, batch_size %lld ---\n",
        plan->n_proposals, W, tp->local_world_size, tp->device == RP_CUDA ? "cuda" : "cpu", (long long)pb->batch_size);
    put(&t, "--- Perf rating (the slowest rank's total): %.4f ms; per rank after the reservation: HBM %.3f GB, "
        "DDR %.3f GB ---\n", plan->perf_rating, gb(plan->reserved.hbm), gb(plan->reserved.ddr));
    put(&t, "%-6s %-24s %-24s %-10s %-10s %-10s %-10s %-10s %s\n", "Rank", "HBM (GB)", "DDR (GB)", "Perf (ms)",
        "Fwd comp", "Fwd comms", "Bwd comp", "Bwd comms", "Shards");
    for (int r = 0; r < W; r++) {
        char hbm[32], ddr[32];
        snprintf(hbm, sizeof hbm, "%.3f (%.0f%%)", gb(used[r].hbm),
                 plan->reserved.hbm > 0 ? 100.0 * (double)used[r].hbm / (double)plan->reserved.hbm : 0.0);
        snprintf(ddr, sizeof ddr, "%.3f (%.0f%%)", gb(used[r].ddr),
                 plan->reserved.ddr > 0 ? 100.0 * (double)used[r].ddr / (double)plan->reserved.ddr : 0.0);
        put(&t, "%-6d %-24s %-24s %-10.4f %-10.4f %-10.4f %-10.4f %-10.4f %d\n", r, hbm, ddr,
            rp_perf_total(&perf[r]), perf[r].fwd_compute, perf[r].fwd_comms, perf[r].bwd_compute,
            perf[r].bwd_comms, n_shards[r]);
    }
    put(&t, "\n%-24s %-10s %-10s %-10s %-18s %-8s %s\n", "Table", "Rows", "Dim", "Sharding", "Kernel", "Shards",
        "Ranks");
    for (int i = 0; i < plan->n_tables; i++) {
        const rp_option *o = &plan->options[i];
        const rp_table *tb = &pb->tables[o->table];
        static const char *const abbrev[RP_N_SHARDINGS] = { "DP", "TW", "CW", "RW", "TWRW" };
        put(&t, "%-24s %-10lld %-10lld %-10s %-18s %-8d ", tb->name, (long long)tb->num_embeddings,
            (long long)tb->embedding_dim, abbrev[o->sharding], rp_kernel_names[o->kernel], o->n_shards);
        put_ranks(&t, o);
        put(&t, "\n");
    }
    free(used);
    free(perf);
    free(n_shards);
    return finish(&t);
}
