/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cpu.c - the cpu kernels of the fbgemm.tbe methods and the tbe module
** of fbgemm.so.
**
** fbgemm.tbe: plan (tbe_plan.c) -> bounds check on a private copy ->
** output -> with a cache: linearise the batch's indices, populate the
** cache unless fbgemm.tbe_prefetch already did for this batch, look up the
** slots -> forward (tbe_forward_cpu.c). A cached object serialises its
** calls (prefetch and lookup must not interleave, cache/cache.h); the
** results are bit-identical to the uncached object because a slot holds a
** byte copy of its row and the same row function reads it.
**
** fbgemm.tbe_prefetch: the same checks, then populate; the next forward
** consumes it (fbgemm's prefetch queue, depth counted).
**
** The module: the ops (FBG_TBE_OPS), the fbgemm.tbe class, these kernels
** and the quantisers' (quantize_ops.c).
*/
#include <string.h>

#include "cache/cache.h"
#include "tbe_bags.h"
#include "tbe_internal.h"
#include "tbe_optim.h"
#include "tbe_rows.h"
#include "pack.h"

static const char *OP = "fbgemm.tbe";

static loom_status check_object(const loom_call *call, const char *op)
{
    const fbg_tbe_state *s = call->object;
    if (s == NULL || s->struct_size < sizeof(fbg_tbe_state) || s->cpu_private == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: not an fbgemm.tbe object made by this pack", op);
    return LOOM_OK;
}

/* Object check + plan + bounds check, shared by forward and prefetch.
** *store is ready for fbg_plan_store_free whatever this returns. */
static loom_status prepare(loom_call *call, const char *op, fbg_tbe_plan *p, fbg_plan_store *store)
{
    const fbg_tbe_state *s = call->object;
    const loom_tensor *vbe = call->inputs[TBE_IN_VBE];
    store->vbe = NULL;
    loom_status st = check_object(call, op);
    if (st != LOOM_OK)
        return st;
    st = fbg_tbe_plan_build(call, s, vbe != NULL ? loom_data(vbe) : NULL, op, p, store);
    if (st != LOOM_OK)
        return st;
    return fbg_tbe_bounds_check_host(call, s, fbg_tbe_call_bounds_mode(call, s), p, op);
}

/* Linear cache index of every index of the (checked) plan; -1 for pruned. */
static int64_t *linearize(loom_call *call, const fbg_tbe_plan *p)
{
    const fbg_tbe_state *s = p->state;
    int64_t *lin = pk_host->scratch(call->ctx, (size_t)(p->n_indices + 1) * sizeof *lin);
    if (lin == NULL)
        return NULL;
    for (int32_t f = 0; f < p->n_features; f++) {
        const int64_t i0 = fbg_idx(p->offsets, p->index_dtype, fbg_plan_feature_bag(p, f));
        const int64_t i1 = fbg_idx(p->offsets, p->index_dtype, fbg_plan_feature_bag(p, f + 1));
        for (int64_t i = i0; i < i1; i++) {
            int64_t idx = fbg_idx(p->indices, p->index_dtype, i);
            lin[i] = idx >= 0 ? fbg_cache_linear(s->cache, s->feature_table_map[f], idx) : -1;
        }
    }
    return lin;
}

static loom_status tbe_run(loom_call *call)
{
    const fbg_tbe_state *s = call->object;
    fbg_tbe_plan p;
    fbg_plan_store store;
    loom_status st = prepare(call, OP, &p, &store);
    int64_t shape[2];
    loom_tensor *out = NULL;
    if (st == LOOM_OK) {
        int32_t ndim = fbg_tbe_output_shape(&p, shape);
        st = pk_host->alloc_output(call, 0, (loom_dtype)p.output_dtype, ndim, shape, &out);
    }
    if (st == LOOM_OK) {
        p.output = loom_data(out);
        if (s->cache == NULL) {
            st = fbg_tbe_forward_cpu(call->ctx, &p);
        } else {
            fbg_tbe_cpu *c = s->cpu_private;
            int64_t *lin = linearize(call, &p);
            int32_t *loc = pk_host->scratch(call->ctx, (size_t)(p.n_indices + 1) * sizeof *loc);
            if (lin == NULL || loc == NULL)
                st = pk_host->fail(LOOM_ENOMEM, "%s: no memory for %lld cache locations", OP,
                                   (long long)p.n_indices);
            pthread_mutex_lock(&c->lock);
            if (st == LOOM_OK && c->pending_prefetches > 0)
                c->pending_prefetches--;
            else if (st == LOOM_OK)
                st = fbg_cache_prefetch(s->cache, p.n_indices, lin);
            if (st == LOOM_OK) {
                fbg_cache_lookup(s->cache, p.n_indices, lin, loc);
                p.cache_locations = loc;
                st = fbg_tbe_forward_cpu(call->ctx, &p);
            }
            pthread_mutex_unlock(&c->lock);
        }
    }
    fbg_plan_store_free(&store);
    return st;
}

static loom_status prefetch_run(loom_call *call)
{
    const char *op = "fbgemm.tbe_prefetch";
    const fbg_tbe_state *s = call->object;
    fbg_tbe_plan p;
    fbg_plan_store store;
    loom_status st = prepare(call, op, &p, &store);
    if (st == LOOM_OK && s->cache != NULL) {
        fbg_tbe_cpu *c = s->cpu_private;
        int64_t *lin = linearize(call, &p);
        if (lin == NULL) {
            st = pk_host->fail(LOOM_ENOMEM, "%s: no memory for %lld linear indices", op, (long long)p.n_indices);
        } else {
            pthread_mutex_lock(&c->lock);
            st = fbg_cache_prefetch(s->cache, p.n_indices, lin);
            if (st == LOOM_OK)
                c->pending_prefetches++;
            pthread_mutex_unlock(&c->lock);
        }
    }
    fbg_plan_store_free(&store);
    return st;
}

static loom_status stats_run(loom_call *call)
{
    loom_status st = check_object(call, "fbgemm.tbe_cache_stats");
    if (st != LOOM_OK)
        return st;
    const fbg_tbe_state *s = call->object;
    fbg_tbe_cpu *c = s->cpu_private;
    int64_t n = 8;
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out)) != LOOM_OK)
        return st;
    fbg_cache_stats cs;
    memset(&cs, 0, sizeof cs);
    if (s->cache != NULL) {
        pthread_mutex_lock(&c->lock);
        fbg_cache_get_stats(s->cache, &cs);
        if (call->attrs[PK_ATTR(fbg_tbe_cache_stats, reset)].u.b)
            fbg_cache_reset_stats(s->cache);
        pthread_mutex_unlock(&c->lock);
    }
    const int64_t v[8] = { cs.num_calls, cs.num_requested_indices, cs.num_unique_indices, cs.num_unique_misses,
                           cs.num_conflict_unique_misses, cs.num_conflict_misses, cs.lookups, cs.lookup_hits };
    memcpy(loom_data(out), v, sizeof v);
    return LOOM_OK;
}

/* ------------------------------------------------------------ the module */

static const loom_object_class *const tbe_classes[] = { &fbg_tbe_class };

static const loom_kernel_desc tbe_cpu_kernels[] = {
    PK_KERNEL_CPU(fbg_quantize_rows_schema, "cpu:rowwise", 0, fbg_quantize_rows_cpu),
    PK_KERNEL_CPU(fbg_dequantize_rows_schema, "cpu:rowwise", 0, fbg_dequantize_rows_cpu),
    PK_KERNEL_CPU(fbg_tbe_prefetch_schema, "cpu", 0, prefetch_run),
    PK_KERNEL_CPU(fbg_tbe_cache_stats_schema, "cpu", 0, stats_run),
    PK_KERNEL_CPU(fbg_tbe_save_schema, "cpu", 0, fbg_tbe_save_cpu),
    PK_KERNEL_CPU(fbg_tbe_state_schema, "cpu", 0, fbg_tbe_state_cpu),
};

/* The row functions for this CPU (tbe_rows.h), then the forward, whose
** implementation name says which ones run: a descriptor made here (the
** core copies what it registers). */
static loom_status tbe_register_forward(const loom_host_api *host, loom_registrar *reg)
{
    fbg_rows_init();
    fbg_bags_init();
    /* the row functions' ISA, then the whole-bag path's (FP32 tables) when there is one */
    const char *bags = fbg_bags_isa();
    const char *impl = strcmp(fbg_rows_isa(), "avx2") != 0 ? "cpu:rows-scalar"
                       : bags == NULL                    ? "cpu:rows-avx2"
                       : strcmp(bags, "avx512") == 0     ? "cpu:rows-avx2+bags-avx512"
                                                         : "cpu:rows-avx2+bags-avx2";
    const loom_kernel_desc k = PK_KERNEL_CPU(fbg_tbe_schema, impl, 0, tbe_run);
    loom_status st = host->register_kernel(reg, &k);
    fbg_optim_update_init();
    const loom_kernel_desc b = PK_KERNEL_CPU(fbg_tbe_backward_schema,
                                             strcmp(fbg_optim_isa(), "avx2") == 0 ? "cpu:sorted-rows-avx2"
                                                                                  : "cpu:sorted-rows-scalar",
                                             0, fbg_tbe_backward_cpu);
    return st != LOOM_OK ? st : host->register_kernel(reg, &b);
}

const pk_module fbgemm_tbe_cpu = {
    .name = "tbe",
    .ops = fbgemm_tbe_ops, .n_ops = PK_COUNT(fbgemm_tbe_ops),
    .classes = tbe_classes, .n_classes = PK_COUNT(tbe_classes),
    .kernels = tbe_cpu_kernels, .n_kernels = PK_COUNT(tbe_cpu_kernels),
    .register_more = tbe_register_forward,
};
