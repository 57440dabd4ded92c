/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_groups.c - a rank's shards grouped by compute kernel (shard.h), as
** torchrec groups them (one TBE per kernel of a rank's shards): a rank
** holding shards of fused and of fused_uvm_caching tables looks them up
** on two local fbgemm.tbe objects, the fused one and the caching one.
**
** shard_layout_build orders a rank's pairs fused first, so each group is a
** run of the rank's TBE batch (pair-major: a group's bags and ids are one
** slice of it) and a run of the columns of the rank's TBE output [bags,
** local_d]: each group's lookup fills its columns, each group's backward
** takes its columns of the gradient, and nothing else of the collection
** sees the split. Every value is the one of a lookup on one TBE: the
** groups hold different tables, so no sum mixes them.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

loom_object *shard_group_tbe(const rec_sebc *e, int g)
{
    return g == 0 ? e->tbe : e->tbe_cached;
}

void shard_group_range(const rec_sebc *e, int g, int64_t *p0, int64_t *p1, int64_t *c0, int64_t *cols)
{
    const int me = e->c.rank;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me];
    *p0 = g == 0 ? 0 : e->group0_pairs;
    *p1 = g == 0 ? e->group0_pairs : P;
    *c0 = g == 0 ? 0 : e->group0_d;
    *cols = g == 0 ? e->group0_d : LD - e->group0_d;
}

loom_object *shard_cache_tbe(const rec_sebc *e)
{
    /* the prefetch keeps the load factor of the rank's cached shards (1.0: none) */
    if (e->prefetch == NULL || e->tbe == NULL || shard_prefetch_load_factor(e) >= 1.0)
        return NULL;
    return e->n_groups == 2 ? e->tbe_cached : e->tbe;
}

loom_status shard_group_batch(const rec_sebc *e, const shard_batch *b, int g, shard_batch *sub)
{
    int64_t p0, p1, c0, cols;
    shard_group_range(e, g, &p0, &p1, &c0, &cols);
    const int64_t n = (p1 - p0) * b->bags, base = b->offsets[p0 * b->bags];
    *sub = (shard_batch){ .bags = b->bags };
    if ((sub->offsets = malloc((size_t)(n + 1) * sizeof *sub->offsets)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int64_t i = 0; i <= n; i++)
        sub->offsets[i] = b->offsets[p0 * b->bags + i] - base;
    sub->indices = b->indices + base;
    sub->psw = b->psw ? b->psw + base : NULL;
    sub->n_indices = sub->offsets[n];
    return LOOM_OK;
}

loom_status shard_tbe_lookup(loom_call *call, const rec_sebc *e, loom_object *obj, const shard_batch *b,
                             int64_t bags, loom_tensor **y)
{
    int64_t ishape[1] = { b->n_indices }, oshape[1] = { bags + 1 };
    loom_tensor ti = shard_view(b->indices, SHARD_I64, 1, ishape);
    loom_tensor to = shard_view(b->offsets, SHARD_I64, 1, oshape);
    loom_tensor tw = shard_view(b->psw, SHARD_F32, 1, ishape);
    const loom_tensor *ins[3] = { &ti, &to, b->psw ? &tw : NULL };
    *y = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = y, .object = obj };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status shard_groups_lookup(loom_call *call, const rec_sebc *e, const shard_batch *b, float **y)
{
    const int64_t LD = e->local_d[e->c.rank], R = b->bags;
    float *out = calloc((size_t)(R * LD > 0 ? R * LD : 1), sizeof *out);
    loom_status st = out ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int g = 0; st == LOOM_OK && g < e->n_groups; g++) {
        int64_t p0, p1, c0, cols;
        shard_group_range(e, g, &p0, &p1, &c0, &cols);
        shard_batch sub;
        loom_tensor *yg = NULL;
        if ((st = shard_group_batch(e, b, g, &sub)) != LOOM_OK)
            break;
        st = shard_tbe_lookup(call, e, shard_group_tbe(e, g), &sub, (p1 - p0) * R, &yg);
        /* group g's [R, cols] into its columns of the rank's [R, LD] */
        const float *src = st == LOOM_OK && loom_numel(yg) ? loom_data(yg) : NULL;
        for (int64_t r = 0; src && r < R; r++)
            memcpy(out + r * LD + c0, src + r * cols, (size_t)cols * sizeof *out);
        if (yg)
            pk_host->tensor_free(yg);
        free(sub.offsets);
    }
    if (st != LOOM_OK) {
        free(out);
        out = NULL;
    }
    *y = out;
    return st;
}
