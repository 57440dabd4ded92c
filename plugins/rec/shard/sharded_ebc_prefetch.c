/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_prefetch.c - the cache of rec.sharded_embedding_bag_collection
** (torchrec's fused_uvm_caching compute kernel) and its prefetch,
** rec.sharded_embedding_bag_collection_prefetch, the step that torchrec's
** PrefetchTrainPipelineSparseDist runs for the next batch.
**
** The cache. A plan table whose compute_kernel is fused_uvm_caching keeps
** its shards in a local fbgemm.tbe made with the plan's cache_load_factor
** (fbgemm.tbe's row cache, plugins/fbgemm/cache: the table's rows stay in
** the TBE's owned copy, the slow tier, and the given share of them is kept
** in the set-associative fast tier, LRU). A rank's shards are grouped by
** kernel as torchrec groups them, one local TBE per kernel: a rank may
** hold fused and fused_uvm_caching shards (shard_groups.c: the fused TBE
** and the caching one), but its cached shards share one cache, so they
** need one load factor: another is refused at create, naming the rank and
** both tables (and the sequence collection, whose lookups run on one TBE,
** refuses a rank that mixes kernels). The cache changes no
** bit of any result: a slot is a byte copy of its row, and the training
** backward writes every updated row through to its slot (cache_refresh.c).
**
** The prefetch, attribute `stage`:
**   dist  collective (every rank calls it): this rank's KJT of the NEXT
**         batch (the forward's inputs) goes to the shards by the input
**         all-to-all (shard_kjt_all_to_all, as the forward does it), and
**         the ids this rank's shards received are kept in the object;
**   fill  local, no MPI: fbgemm.tbe_prefetch of the kept ids on the local
**         caching TBE (the cache fill); the forward of that batch then
**         finds its rows cached and does not populate again (fbgemm's
**         prefetch queue). May run on another thread while this rank's
**         forward and backward of the current batch run: the TBE orders its
**         cache fill against their lookups and updates by its lock;
**   all   dist then fill.
** Every stage (and stage stats, which does nothing else) returns this
** rank's cache counters (fbgemm.tbe_cache_stats of
** the local TBE; zeros without a cache), so that a host can watch the hit
** rate.
** A dist replaces a kept batch that was never filled (nothing was counted
** for it); fill without a kept batch is refused. Without a caching table on
** this rank, fill has nothing to do (dist still takes part: it is
** collective).
**
** The forward reuses the input dist (as PrefetchTrainPipelineSparseDist
** keeps the input_dist context of the batch it prefetched): dist also
** keeps, for the forward, a copy of what the all-to-all gave this rank
** with a copy of the KJT this rank sent, under an id counted per dist call
** (the same on every rank: dist is collective). The forward of a KJT
** equal bit for bit (values, lengths, weights, B) to a kept one sends that
** id with the input agreement it runs anyway (shard_input_agree); only
** when every rank sent the same id do all of them take the kept batch,
** otherwise (another batch on some rank, a dist that failed on one) all
** of them run the all-to-all as before. Either way the lookup sees the
** same batch, so results do not change; the stats method counts the
** forwards' all-to-alls and reuses. A pipeline keeps two inputs at most
** (the current batch's and the next's); SHARD_KEPT bounds the list, the
** oldest going first, and a taken input drops every older one.
**
** Why the all-to-all stays on the calling thread: the pack initialises MPI
** with MPI_THREAD_SERIALIZED (a host may have initialised it so as well),
** and whether MPI_THREAD_MULTIPLE is granted depends on how OpenMPI was
** built; a collective on a second thread would then have to be serialised
** with the main thread's by hand, or run on a duplicated communicator under
** MPI_THREAD_MULTIPLE only where it is granted. Splitting the prefetch at
** the only MPI call keeps every collective on the thread that makes all the
** others, under any thread level, and what is worth overlapping with the
** forward and backward is the cache fill: the way search, the evictions and
** the row copies, all local.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* The distributed inputs kept for the forward: a pipeline needs two. */
#define SHARD_KEPT 4

/* One distributed input kept for its forward: the KJT this rank sent, and
** what the all-to-all gave it. */
typedef struct shard_kept {
    int64_t id;                /* 0: an empty slot */
    int64_t B, n_values, n_lengths;
    int64_t *values, *lengths;
    float *weights;            /* NULL unweighted */
    shard_batch batch;
} shard_kept;

/* The kept batch of stage dist, for stage fill; the kept inputs, for the forward. */
typedef struct shard_prefetch {
    pthread_mutex_t lock;
    shard_batch next;
    int64_t next_bags;         /* offsets has next_bags + 1 entries */
    int have_next;
    int64_t dist_calls;        /* the ids of the kept inputs */
    shard_kept kept[SHARD_KEPT];
    double cache_load_factor;  /* of this rank's local TBE; 1.0: no cache */
    const loom_op *tbe_prefetch_op, *tbe_stats_op;
} shard_prefetch;

/* "fused", "fused_uvm_caching, cache_load_factor 0.2", ... */
static void describe(const rec_plan_table *t, char *buf, size_t n)
{
    if (t->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING)
        snprintf(buf, n, "fused_uvm_caching, cache_load_factor %g", t->cache_load_factor);
    else
        snprintf(buf, n, "%s", rec_compute_kernel_names[t->compute_kernel]);
}

/* The load factor the plan gives rank q's cached shards: 0 with *lf the
** load factor (1.0 when it has none), or -1 with the message set. */
static loom_status rank_cache(const rec_sebc *e, int64_t q, double *lf)
{
    const rec_plan *p = e->plan;
    int64_t first = -1, first_cached = -1;
    *lf = 1.0;
    for (int64_t t = 0; t < p->n_tables; t++) {
        const rec_plan_table *pt = &p->tables[t];
        int here = 0;
        for (int64_t s = 0; s < pt->n_shards; s++)
            here |= pt->shards[s].rank == q;
        if (!here)
            continue;
        const int cached = pt->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING;
        /* the other of two tables that cannot share: another kernel (sequence), another load factor */
        int64_t clash = -1;
        if (e->sequence && first >= 0 && (p->tables[first].compute_kernel == REC_KERNEL_FUSED_UVM_CACHING) != cached)
            clash = first;
        else if (cached && first_cached >= 0 && pt->cache_load_factor != *lf)
            clash = first_cached;
        if (clash >= 0) {
            const rec_plan_table *pf = &p->tables[clash];
            char a[64], b[64];
            describe(pf, a, sizeof a);
            describe(pt, b, sizeof b);
            return pk_host->fail(LOOM_EINVAL, "%s: rank %lld holds shards of table '%s' (%s) and of table '%s' (%s): %s",
                                 e->c.name, (long long)q, pf->name, a, pt->name, b,
                                 e->sequence ? "a rank's shards share one local fbgemm.tbe, so they need one compute "
                                               "kernel and one cache_load_factor"
                                             : "a rank's cached shards share one cache, so they need one "
                                               "cache_load_factor");
        }
        if (first < 0)
            first = t;
        if (cached && first_cached < 0) {
            first_cached = t;
            *lf = pt->cache_load_factor;
        }
    }
    return LOOM_OK;
}

loom_status shard_cache_config(const rec_sebc *e, double *lf)
{
    /* every rank checks every rank: the verdict is the same everywhere */
    double mine = 1.0;
    for (int64_t q = 0; q < e->c.size; q++) {
        double x;
        loom_status st = rank_cache(e, q, &x);
        if (st != LOOM_OK)
            return st;
        if (q == e->c.rank)
            mine = x;
    }
    *lf = mine;
    return LOOM_OK;
}

loom_status shard_prefetch_create(rec_sebc *e, double lf)
{
    shard_prefetch *pf = calloc(1, sizeof *pf);
    if (pf == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    pthread_mutex_init(&pf->lock, NULL);
    pf->cache_load_factor = lf;
    e->prefetch = pf;
    if ((pf->tbe_prefetch_op = pk_host->op_find("fbgemm.tbe_prefetch")) == NULL
        || (pf->tbe_stats_op = pk_host->op_find("fbgemm.tbe_cache_stats")) == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s fills its cache with fbgemm.tbe_prefetch (and reads fbgemm.tbe_cache_stats): load the fbgemm pack",
                             e->c.name);
    return LOOM_OK;
}

static void kept_free(shard_kept *k)
{
    free(k->values);
    free(k->lengths);
    free(k->weights);
    shard_batch_free(&k->batch);
    *k = (shard_kept){ 0 };
}

double shard_prefetch_load_factor(const rec_sebc *e)
{
    return e->prefetch ? e->prefetch->cache_load_factor : 1.0;
}

void shard_prefetch_free(rec_sebc *e)
{
    shard_prefetch *pf = e->prefetch;
    if (pf == NULL)
        return;
    if (pf->have_next)
        shard_batch_free(&pf->next);
    for (int i = 0; i < SHARD_KEPT; i++)
        kept_free(&pf->kept[i]);
    pthread_mutex_destroy(&pf->lock);
    free(pf);
    e->prefetch = NULL;
}

/* A copy of n elements of size sz (one byte when n is 0), NULL when out of memory. */
static void *dup_n(const void *src, int64_t n, size_t sz)
{
    void *d = malloc((size_t)(n > 0 ? n : 1) * sz);
    if (d != NULL && n > 0)
        memcpy(d, src, (size_t)n * sz);
    return d;
}

/* Keeps in's KJT and a copy of its distributed batch b for the forward
** under id; without memory nothing is kept (the forward distributes again). */
static void keep_for_forward(rec_sebc *e, int64_t id, const shard_input *in, const shard_batch *b)
{
    shard_prefetch *pf = e->prefetch;
    const int me = e->c.rank;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], nl = in->len_start[e->n_features];
    shard_kept k = { .id = id, .B = in->B, .n_values = in->n_values, .n_lengths = nl };
    k.values = dup_n(in->values, in->n_values, sizeof *k.values);
    k.lengths = dup_n(in->lengths, nl, sizeof *k.lengths);
    k.weights = in->weights ? dup_n(in->weights, in->n_values, sizeof *k.weights) : NULL;
    k.batch = (shard_batch){ .n_indices = b->n_indices, .bags = b->bags, .sent_bytes = b->sent_bytes };
    k.batch.indices = dup_n(b->indices, b->n_indices, sizeof *b->indices);
    k.batch.offsets = dup_n(b->offsets, P * b->bags + 1, sizeof *b->offsets);
    k.batch.psw = b->psw ? dup_n(b->psw, b->n_indices, sizeof *b->psw) : NULL;
    k.batch.row0 = dup_n(b->row0, P * (e->c.size + 1), sizeof *b->row0);
    if (!k.values || !k.lengths || (in->weights && !k.weights) || !k.batch.indices || !k.batch.offsets ||
        (b->psw && !k.batch.psw) || !k.batch.row0) {
        kept_free(&k);
        return;
    }
    /* an empty slot, else the oldest */
    int slot = 0;
    for (int i = 0; i < SHARD_KEPT; i++) {
        if (pf->kept[i].id == 0) {
            slot = i;
            break;
        }
        if (pf->kept[i].id < pf->kept[slot].id)
            slot = i;
    }
    kept_free(&pf->kept[slot]);
    pf->kept[slot] = k;
}

int64_t shard_prefetch_match(rec_sebc *e, const shard_input *in)
{
    shard_prefetch *pf = e->prefetch;
    if (pf == NULL || in->inverse != NULL)
        return 0;
    for (int64_t f = 0; f < e->n_features; f++)
        if (in->stride[f] != in->B)
            return 0;
    const int64_t nl = in->len_start[e->n_features];
    int64_t best = 0;
    pthread_mutex_lock(&pf->lock);
    for (int i = 0; i < SHARD_KEPT; i++) {
        const shard_kept *k = &pf->kept[i];
        if (k->id <= best || k->B != in->B || k->n_values != in->n_values || k->n_lengths != nl ||
            (k->weights != NULL) != (in->weights != NULL))
            continue;
        if (memcmp(k->values, in->values, (size_t)in->n_values * sizeof *in->values) != 0 ||
            memcmp(k->lengths, in->lengths, (size_t)nl * sizeof *in->lengths) != 0 ||
            (in->weights && memcmp(k->weights, in->weights, (size_t)in->n_values * sizeof *in->weights) != 0))
            continue;
        best = k->id;
    }
    pthread_mutex_unlock(&pf->lock);
    return best;
}

loom_status shard_prefetch_take(rec_sebc *e, int64_t id, shard_batch *out)
{
    shard_prefetch *pf = e->prefetch;
    int found = 0;
    *out = (shard_batch){ 0 };
    pthread_mutex_lock(&pf->lock);
    for (int i = 0; i < SHARD_KEPT; i++) {
        shard_kept *k = &pf->kept[i];
        if (k->id == id) {
            *out = k->batch;
            k->batch = (shard_batch){ 0 };
            found = 1;
        }
        if (k->id != 0 && k->id <= id)
            kept_free(k);
    }
    pthread_mutex_unlock(&pf->lock);
    /* match and take run back to back on the calling thread: only a host
    ** freeing the object under a call gets here */
    return found ? LOOM_OK : pk_host->fail(LOOM_EINVAL, "%s: rank %d: the prefetched input %lld is gone", e->c.name,
                                           e->c.rank, (long long)id);
}

/* stage dist: the input all-to-all of the next batch, kept for fill and for its forward. */
static loom_status dist(loom_call *call, rec_sebc *e)
{
    shard_prefetch *pf = e->prefetch;
    /* counted on entry, so every rank numbers this call the same even when it fails on one */
    const int64_t id = ++pf->dist_calls;
    shard_input in;
    loom_status st = shard_input_read(call, e, 0, &in);
    if (st != LOOM_OK)
        return st;
    shard_batch b;
    st = shard_kjt_all_to_all(e, &in, &b);
    const int me = e->c.rank;
    const int64_t bags = (e->pair_start[me + 1] - e->pair_start[me]) * e->c.size * in.B;
    if (st == LOOM_OK) {
        pthread_mutex_lock(&pf->lock);
        keep_for_forward(e, id, &in, &b);
        pthread_mutex_unlock(&pf->lock);
    }
    shard_input_free(&in);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&pf->lock);
    if (pf->have_next)
        shard_batch_free(&pf->next);
    pf->next = b;
    pf->next_bags = bags;
    pf->have_next = 1;
    pthread_mutex_unlock(&pf->lock);
    return LOOM_OK;
}

/* stage fill: fbgemm.tbe_prefetch of the kept batch on the local TBE. */
static loom_status fill(loom_call *call, rec_sebc *e, const char *op)
{
    shard_prefetch *pf = e->prefetch;
    pthread_mutex_lock(&pf->lock);
    const int have = pf->have_next;
    shard_batch b = pf->next;
    const int64_t bags = pf->next_bags;
    pf->have_next = 0;
    pf->next = (shard_batch){ 0 };
    pthread_mutex_unlock(&pf->lock);
    if (!have)
        return pk_host->fail(LOOM_EINVAL, "%s: rank %d: stage fill has no batch to fill: run stage dist (collective) "
                             "on the next batch first", op, e->c.rank);
    loom_status st = LOOM_OK;
    loom_object *cache = shard_cache_tbe(e);
    if (cache != NULL && bags > 0) {
        /* with two kernel groups the cached shards' ids are group 1's slice of the batch */
        shard_batch sub = b;
        int64_t n_bags = bags;
        if (e->n_groups == 2) {
            int64_t p0, p1, c0, cols;
            shard_group_range(e, 1, &p0, &p1, &c0, &cols);
            n_bags = (p1 - p0) * b.bags;
            st = shard_group_batch(e, &b, 1, &sub);
        }
        int64_t ishape[1] = { sub.n_indices }, oshape[1] = { n_bags + 1 };
        loom_tensor ti = shard_view(sub.indices, SHARD_I64, 1, ishape);
        loom_tensor to = shard_view(sub.offsets, SHARD_I64, 1, oshape);
        const loom_tensor *ins[2] = { &ti, &to };
        loom_op_call oc = { .struct_size = sizeof oc, .op = pf->tbe_prefetch_op, .n_inputs = 2, .inputs = ins,
                            .object = cache };
        if (st == LOOM_OK)
            st = pk_host->op_call(call->ctx, &oc);
        if (e->n_groups == 2)
            free(sub.offsets);
    }
    shard_batch_free(&b);
    return st;
}

/* The output: the local caching TBE's fbgemm.tbe_cache_stats after the
** stage (zeros without a cache on this rank). */
static loom_status stats(loom_call *call, rec_sebc *e)
{
    int64_t n = 8;
    loom_tensor *out = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out);
    if (st != LOOM_OK)
        return st;
    memset(loom_data(out), 0, 8 * sizeof(int64_t));
    loom_object *cache = shard_cache_tbe(e);
    if (cache == NULL)
        return LOOM_OK;
    loom_tensor *y = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->prefetch->tbe_stats_op, .n_outputs = 1, .outputs = &y,
                        .object = cache };
    if ((st = pk_host->op_call(call->ctx, &oc)) == LOOM_OK && loom_numel(y) == 8)
        memcpy(loom_data(out), loom_data(y), 8 * sizeof(int64_t));
    if (y)
        pk_host->tensor_free(y);
    return st;
}

#define PREFETCH_ATTRS(A, op)                                                                     \
    A(op, stage, STRING, LOOM_DEFAULT_STRING("all"), 0,                                           \
      "dist (collective: the input all-to-all of the next batch, kept) | fill (local: "           \
      "fbgemm.tbe_prefetch of the kept ids on the caching TBE; may run on another thread while the "  \
      "forward and backward of the current batch run) | all (dist then fill) | stats (the counters only)", )
PK_ATTR_ENUM(rec_sebc_prefetch, PREFETCH_ATTRS);
PK_ATTR_TABLE(rec_sebc_prefetch, PREFETCH_ATTRS);

static loom_status prefetch_run(loom_call *call)
{
    static const char *const op = "rec.sharded_embedding_bag_collection_prefetch";
    rec_sebc *e = call->object;
    const char *stage = call->attrs[PK_ATTR(rec_sebc_prefetch, stage)].u.s;
    const int d = strcmp(stage, "dist") == 0 || strcmp(stage, "all") == 0;
    const int f = strcmp(stage, "fill") == 0 || strcmp(stage, "all") == 0;
    if (!d && !f && strcmp(stage, "stats") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: stage '%s' is not dist, fill, all or stats", op, stage);
    if (e == NULL || e->prefetch == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: not a %s object made by this pack", op, REC_SEBC_CLASS);
    /* a host bug, the same on every rank as a rule: refused before any collective */
    if (d && (call->inputs[SEBC_IN_VALUES] == NULL || call->inputs[SEBC_IN_LENGTHS] == NULL))
        return pk_host->fail(LOOM_EINVAL, "%s: rank %d: stage %s needs the next batch's 'values' and 'lengths'", op,
                             e->c.rank, stage);
    loom_status st = d ? dist(call, e) : LOOM_OK;
    if (st == LOOM_OK && f)
        st = fill(call, e, op);
    return st == LOOM_OK ? stats(call, e) : st;
}

/* recorded in the stats method's prefetch row (sharded_ebc_stats.c) */
static loom_status prefetch_timed(loom_call *call)
{
    return call->object ? rec_sebc_prefetch_timed(call, prefetch_run) : prefetch_run(call);
}

static const loom_arg_def prefetch_inputs[] = {
    { .name = "values", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[N] this rank's KJT ids of the next batch, as the forward takes them (stages dist and all; fill "
             "and stats take no inputs)" },
    { .name = "lengths", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[F * B] the next batch's lengths (stages dist and all)" },
    { .name = "weights", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[N] per-sample weights (when the collection is_weighted)" },
};

static const loom_arg_def prefetch_outputs[] = {
    { .name = "cache_stats", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[8] this rank's cache counters after the stage, fbgemm.tbe_cache_stats's (calls, requested, unique, "
             "unique misses, conflict unique misses, conflict misses, lookups, lookup hits); zeros without a cache" },
};

PK_SCHEMA(rec_sebc_prefetch_schema, "rec.sharded_embedding_bag_collection_prefetch", 1,
          "PrefetchTrainPipelineSparseDist's prefetch of the next batch: its KJT by the input all-to-all to the "
          "shards (stage dist, collective), then fbgemm.tbe_prefetch of the received ids on the local caching "
          "TBEs (stage fill, local; fused_uvm_caching tables); results do not change, the next forward finds "
          "its rows cached",
          PK_INPUTS(prefetch_inputs), PK_OUTPUTS(prefetch_outputs), PK_ATTRS(rec_sebc_prefetch_attrs),
          .object_class = REC_SEBC_CLASS);

static const loom_op_schema *const prefetch_ops[] = { &rec_sebc_prefetch_schema };

static const loom_kernel_desc prefetch_kernels[] = {
    PK_KERNEL_CPU(rec_sebc_prefetch_schema, "cpu:mpi+fbgemm.tbe_prefetch", 0, prefetch_timed),
};

const pk_module rec_shard_prefetch_cpu = PK_MODULE("shard-prefetch", prefetch_ops, prefetch_kernels, NULL);
