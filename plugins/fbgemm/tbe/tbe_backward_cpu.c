/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_backward_cpu.c - fbgemm.tbe_backward: the TBE backward with the
** optimizer fused (tbe_optim.h), as fbgemm_gpu's
** split_embedding_backward_codegen_<optimizer>_cpu runs it.
**
** The call gives the forward's output gradient grad_output [B, total_D]
** and the forward's indices, offsets and per_sample_weights. Then:
**   1. the forward's plan and bounds check (tbe_plan.c), on the same inputs;
**   2. one entry (row key, bag, weight) per index that is not pruned (-1),
**      the key being the row's place in all tables (rows of table t after
**      those of tables < t); weight = per_sample_weight, or 1/L for MEAN
**      without weights (fbgemm's csr2csc: MEAN with weights is not scaled);
**   3. a stable radix sort by key: the entries of one row become one
**      segment, in index order (feature, bag, position), fbgemm's
**      deduplicated sorted-by-row update;
**   4. threads over segments (host->parallel_for): each sums its row's
**      gradient in that fixed order (fma per element) and applies the
**      optimizer to the row and its state. Rows are disjoint between
**      segments, so results are the same for any thread count or timing.
** The step count `iter` advances once per call (fbgemm's module advances
** it once per training step), before the update uses it. Calls on one
** object are serialised (the state's lock).
**
** With a row cache (cache_load_factor < 1) the updated row is the owned
** slow-tier row, and its cached copy, if any, is refreshed right after it
** (write-through, cache/cache_refresh.c). The whole update then also holds
** the object's cache lock, so that an fbgemm.tbe_prefetch (for the next
** batch, possibly on another thread) never copies a row half updated.
*/
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "tbe_internal.h"
#include "tbe_optim.h"

static const char *const OP = "fbgemm.tbe_backward";

/* Segments per parallel_for grain. */
#define SEG_GRAIN 16
/* Radix digit of the sort. */
#define RADIX_BITS 11

enum { BW_IN_GRAD = 0, BW_IN_INDICES = 1, BW_IN_OFFSETS = 2, BW_IN_PSW = 3 };

typedef struct bw_entry {
    int64_t key;                /* row base of the table + row */
    int64_t bag;                /* bag of the index: feature * B + b */
    float w;                    /* weight of the contribution */
    int32_t pad;
} bw_entry;

/* Stable LSD radix sort of e[0..n) by key (0 <= key < limit); tmp: n entries.
** Returns the sorted array (e or tmp). */
static bw_entry *radix_sort(bw_entry *e, bw_entry *tmp, int64_t n, int64_t limit)
{
    int bits = 0;
    while (bits < 63 && (INT64_C(1) << bits) < limit)
        bits++;
    static const int64_t R = INT64_C(1) << RADIX_BITS;
    int64_t count[(1 << RADIX_BITS) + 1];
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        memset(count, 0, sizeof count);
        for (int64_t i = 0; i < n; i++)
            count[((e[i].key >> shift) & (R - 1)) + 1]++;
        for (int64_t d = 0; d < R; d++)
            count[d + 1] += count[d];
        for (int64_t i = 0; i < n; i++)
            tmp[count[(e[i].key >> shift) & (R - 1)]++] = e[i];
        bw_entry *x = e;
        e = tmp;
        tmp = x;
    }
    return e;
}

typedef struct bw_job {
    const fbg_tbe_state *s;
    fbg_tbe_train *tr;
    const fbg_tbe_plan *p;
    const float *grad;          /* [B, total_D] */
    const bw_entry *e;          /* sorted entries */
    const int64_t *seg;         /* [n_seg + 1] segment starts */
    const int64_t *row_base;    /* [n_tables + 1] */
    float *buf;                 /* [n_slots * 2 * stride] */
    int64_t stride;
    int32_t n_slots;
    fbg_row_update_fn update;
    fbg_axpy_fn axpy;
    atomic_int failed;
} bw_job;

static void bw_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    bw_job *j = user;
    const fbg_tbe_state *s = j->s;
    const fbg_tbe_plan *p = j->p;
    const fbg_optim_params *prm = &j->tr->prm;
    const int own = thread_index < 0 || thread_index >= j->n_slots;
    float *g = own ? malloc((size_t)(2 * j->stride) * sizeof *g) : j->buf + (int64_t)thread_index * 2 * j->stride;
    if (g == NULL) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *work = g + j->stride;
    for (int64_t sg = begin; sg < end; sg++) {
        const bw_entry *e0 = &j->e[j->seg[sg]], *e1 = &j->e[j->seg[sg + 1]];
        const int32_t f0 = (int32_t)(e0->bag / p->B);
        const int32_t t = s->feature_table_map[f0];
        const fbg_tbe_table *tab = &s->tables[t];
        const int64_t D = tab->dim, row = e0->key - j->row_base[t];
        memset(g, 0, (size_t)D * sizeof *g);
        for (const bw_entry *x = e0; x < e1; x++) {
            const int64_t f = x->bag / p->B, b = x->bag - f * p->B;
            j->axpy(g, j->grad + b * s->total_D + s->D_offsets[f], x->w, D);
        }
        const int64_t n1 = fbg_optim_state_numel(prm->optimizer, 1, 1, D);
        const int64_t n2 = fbg_optim_state_numel(prm->optimizer, 2, 1, D);
        float *m1 = n1 > 0 ? j->tr->momentum1[t] + row * n1 : NULL;
        float *m2 = n2 > 0 ? j->tr->momentum2[t] + row * n2 : NULL;
        j->update(prm, tab->wtype, (uint8_t *)tab->base + row * tab->row_stride, D, g, m1, m2, j->tr->iter, work);
        if (s->cache != NULL)
            fbg_cache_refresh(s->cache, e0->key);   /* key = the cache's linear index */
    }
    if (own)
        free(g);
}

/* The forward's plan of this call: inputs and attributes in the
** forward's order (fbgemm.tbe's schema), then its bounds check. */
static loom_status plan_call(loom_call *call, const fbg_tbe_state *s, fbg_tbe_plan *p, fbg_plan_store *store)
{
    const loom_tensor *in[4] = { call->inputs[BW_IN_INDICES], call->inputs[BW_IN_OFFSETS], call->inputs[BW_IN_PSW],
                                 NULL };
    loom_attr_value av[fbg_tbe__n_attrs];
    memset(av, 0, sizeof av);
    av[PK_ATTR(fbg_tbe, pooling_mode)] = call->attrs[PK_ATTR(fbg_tbe_backward, pooling_mode)];
    av[PK_ATTR(fbg_tbe, bounds_check_mode)] = call->attrs[PK_ATTR(fbg_tbe_backward, bounds_check_mode)];
    loom_call fwd = *call;
    fwd.inputs = in;
    fwd.n_inputs = 4;
    fwd.attrs = av;
    fwd.n_attrs = fbg_tbe__n_attrs;
    loom_status st = fbg_tbe_plan_build(&fwd, s, NULL, OP, p, store);
    if (st != LOOM_OK)
        return st;
    if (p->pooling == FBG_POOL_NONE)
        return pk_host->fail(LOOM_EINVAL, "%s: pooling none (sequence embeddings) has no fused backward here; "
                             "train with pooling sum or mean", OP);
    return fbg_tbe_bounds_check_host(&fwd, s, fbg_tbe_call_bounds_mode(&fwd, s), p, OP);
}

/* The entries of step 2 into e; their count into *n. */
static void gather(const fbg_tbe_plan *p, const int64_t *row_base, bw_entry *e, int64_t *n)
{
    const fbg_tbe_state *s = p->state;
    const int32_t dt = p->index_dtype;
    int64_t m = 0;
    for (int64_t k = 0; k < p->n_bags; k++) {
        const int32_t f = (int32_t)(k / p->B);
        const int64_t base = row_base[s->feature_table_map[f]];
        const int64_t i0 = fbg_idx(p->offsets, dt, k), i1 = fbg_idx(p->offsets, dt, k + 1);
        /* fbgemm forms 1/L in double and rounds the weight to f32 */
        const float mean = p->pooling == FBG_POOL_MEAN && p->per_sample_weights == NULL && i1 > i0
                         ? (float)(1.0 / (double)(i1 - i0)) : 1.0f;
        for (int64_t i = i0; i < i1; i++) {
            const int64_t idx = fbg_idx(p->indices, dt, i);
            if (idx < 0)
                continue;
            e[m++] = (bw_entry){ .key = base + idx, .bag = k,
                                 .w = p->per_sample_weights != NULL ? p->per_sample_weights[i] : mean };
        }
    }
    *n = m;
}

loom_status fbg_tbe_backward_cpu(loom_call *call)
{
    const fbg_tbe_state *s = call->object;
    fbg_tbe_train *tr = fbg_tbe_train_of(call, OP);
    if (tr == NULL)
        return LOOM_EINVAL;
    fbg_tbe_plan p;
    fbg_plan_store store;
    loom_status st = plan_call(call, s, &p, &store);
    const loom_tensor *grad = call->inputs[BW_IN_GRAD];
    char b1[96];
    if (st == LOOM_OK && (loom_tensor_dtype_of(grad) != LOOM_DTYPE_F32 || grad->ndim != 2 || grad->shape[0] != p.B
                          || grad->shape[1] != s->total_D || !loom_is_contiguous(grad)))
        st = pk_host->fail(LOOM_EINVAL, "%s: grad_output is %s; it must be the gradient of the forward's output, a "
                           "contiguous f32 [B = %lld, total_D = %lld]", OP, fbgemm_describe(grad, b1, sizeof b1),
                           (long long)p.B, (long long)s->total_D);
    int64_t *row_base = NULL;
    bw_entry *e = NULL, *tmp = NULL;
    if (st == LOOM_OK) {
        row_base = pk_host->scratch(call->ctx, (size_t)(s->n_tables + 1) * sizeof *row_base);
        e = pk_host->scratch(call->ctx, (size_t)(p.n_indices + 1) * sizeof *e);
        tmp = pk_host->scratch(call->ctx, (size_t)(p.n_indices + 1) * sizeof *tmp);
        if (row_base == NULL || e == NULL || tmp == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "%s: no scratch memory for %lld indices", OP, (long long)p.n_indices);
    }
    if (st != LOOM_OK) {
        fbg_plan_store_free(&store);
        return st;
    }
    row_base[0] = 0;
    for (int32_t t = 0; t < s->n_tables; t++)
        row_base[t + 1] = row_base[t] + s->tables[t].rows;

    fbg_tbe_cpu *c = s->cpu_private;
    pthread_mutex_lock(&tr->lock);
    if (s->cache != NULL)
        pthread_mutex_lock(&c->lock);   /* order: the state's lock, then the cache's */
    tr->iter++;
    int64_t n = 0;
    gather(&p, row_base, e, &n);
    const bw_entry *sorted = radix_sort(e, tmp, n, row_base[s->n_tables]);
    int64_t *seg = pk_host->scratch(call->ctx, (size_t)(n + 1) * sizeof *seg);
    bw_job j = {
        .s = s, .tr = tr, .p = &p, .grad = loom_data(grad), .e = sorted, .seg = seg, .row_base = row_base,
        .stride = ((int64_t)s->max_D + 15) / 16 * 16,
        .n_slots = call->ctx->n_threads > 0 ? call->ctx->n_threads : 64,
        .update = fbg_optim_update_fn(), .axpy = fbg_optim_axpy_fn(),
    };
    j.buf = pk_host->scratch(call->ctx, (size_t)(j.n_slots * 2 * j.stride) * sizeof(float));
    atomic_init(&j.failed, 0);
    if (seg == NULL || j.buf == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: no scratch memory for the row segments", OP);
    } else {
        int64_t n_seg = 0;
        for (int64_t i = 0; i < n; i++)
            if (i == 0 || sorted[i].key != sorted[i - 1].key)
                seg[n_seg++] = i;
        seg[n_seg] = n;
        if (n_seg > 0)
            st = pk_host->parallel_for(call->ctx, n_seg, SEG_GRAIN, bw_range, &j);
        if (st == LOOM_OK && atomic_load(&j.failed))
            st = pk_host->fail(LOOM_ENOMEM, "%s: no memory for a gradient buffer; rows were left partly updated", OP);
    }
    if (s->cache != NULL)
        pthread_mutex_unlock(&c->lock);
    pthread_mutex_unlock(&tr->lock);
    fbg_plan_store_free(&store);
    return st;
}
