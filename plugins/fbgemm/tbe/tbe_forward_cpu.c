/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_forward_cpu.c - the cpu TBE forward on a checked plan (tbe.h): one
** generic loop over bags, a row function per weight type (tbe_rows.c),
** software prefetch of the rows a few indices ahead (hint and distance per
** machine class: fbg_prefetch_policy in tbe_rows.c), threads over blocks
** of bags through host->parallel_for. Pooled FP32 tables whose D is a
** multiple of 8 take the whole-bag path instead (tbe_bags.c): the bag's
** row pointers (and the rows to prefetch beside each) are gathered first,
** then one call accumulates the bag in registers, straight into an f32
** output row; the bits are the row functions' (tbe_bags.h).
**
** Contract: the plan's indices/offsets are valid (bounds-checked); index
** -1 is a pruned row and adds nothing (fbgemm's TBE lookup skips it) but
** still counts in a MEAN bag's length (a NONE row of -1 is zeros). Every
** bag's output is written, empty bags with zeros. Pooling NONE ignores
** per_sample_weights, as the IntNBit TBE's CPU kernel does.
*/
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "dtype_traits.h"
#include "tbe_bags.h"
#include "tbe_internal.h"
#include "tbe_rows.h"

/* Bags per parallel_for grain. */
#define BAG_GRAIN 32
/* Rows per whole-bag call: a longer bag takes several, the accumulators
** going through memory between them. */
#define BAG_CHUNK 64

/* out[0..D) = acc in the output dtype, rounded to nearest even: one
** function per float dtype of the dtype table (the outputs are f32, f16 or
** bf16), picked once per call. */
typedef void (*store_row_fn)(void *out, const float *acc, int64_t D);
#define STORE_ROW_(sfx, DTYPE, S, C)                                      \
    static void store_row_##sfx(void *out, const float *acc, int64_t D)   \
    {                                                                     \
        S *o = out;                                                       \
        for (int64_t j = 0; j < D; j++)                                   \
            PK_ST(sfx)(o + j, (C)acc[j]);                                 \
    }
PK_FLOAT_DTYPES(STORE_ROW_)
#define STORE_ENTRY_(sfx, DTYPE, S, C) store_row_##sfx,
static const store_row_fn store_rows[] = { PK_FLOAT_DTYPES(STORE_ENTRY_) };

/* f32 output: the accumulator's bytes as they are. One vectorised copy
** instead of the element loop, which issued one 4-byte store per element:
** a bag's output row is a fresh line of a large output (a miss to memory),
** and 128 scalar stores per row fill the store buffer while those misses
** are outstanding. */
static void store_row_f32_copy(void *out, const float *acc, int64_t D)
{
    memcpy(out, acc, (size_t)D * sizeof *acc);
}

typedef struct fwd_job {
    const fbg_tbe_plan *p;
    float *acc;                 /* [n_slots * acc_stride] */
    int64_t acc_stride;
    int32_t n_slots;
    size_t out_esize;
    store_row_fn store;         /* of the output dtype */
    int f32_out;                /* the output is f32: whole bags accumulate in place */
    fbg_row_params params;
    atomic_int failed;          /* a range could not get an accumulator */
} fwd_job;

/* Row idx of table tab, from the cache slot when there is one. */
static inline const uint8_t *row_ptr(const fbg_tbe_plan *p, const fbg_tbe_table *tab, int64_t i, int64_t idx)
{
    if (p->cache_locations != NULL && p->cache_locations[i] >= 0)
        return fbg_cache_slot_row(p->state->cache, p->cache_locations[i]);
    return tab->base + idx * tab->row_stride;
}

/* Every cache line the row touches (rows need not be 64-byte aligned:
** an unaligned 512-byte row spans 9 lines). `hint` is a constant in each
** inlined copy (__builtin_prefetch needs one). */
static inline void prefetch_row(const fbg_tbe_plan *p, const fbg_tbe_table *tab, int64_t i, fbg_prefetch_hint hint)
{
    int64_t idx = fbg_idx(p->indices, p->index_dtype, i);
    if (idx < 0)
        return;
    const uint8_t *r = row_ptr(p, tab, i, idx);
    uintptr_t l = (uintptr_t)r & ~(uintptr_t)63, e = (uintptr_t)r + (uintptr_t)tab->row_stride;
    if (hint == FBG_PF_T0)
        for (; l < e; l += 64)
            __builtin_prefetch((const void *)l, 0, 3);
    else
        for (; l < e; l += 64)
            __builtin_prefetch((const void *)l, 0, 0);
}

/* Element offset of the output row of bag k of feature f. */
static int64_t bag_out_offset(const fbg_tbe_plan *p, int32_t f, int64_t k)
{
    const fbg_tbe_state *s = p->state;
    if (!p->vbe)
        return (k - (int64_t)f * p->B) * s->total_D + s->D_offsets[f];
    const int64_t R = p->vbe_ranks, j = k - p->vbe_B_offsets[f];
    const int64_t *br = p->vbe_B_offsets_rank_per_feature + f * (R + 1);
    int64_t lo = 0, hi = R;             /* br[lo] <= j < br[hi] */
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (br[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    const int64_t D = s->D_offsets[f + 1] - s->D_offsets[f];
    return p->vbe_output_offsets[lo * p->n_features + f] + (j - br[lo]) * D;
}

static int32_t feature_of_bag(const fbg_tbe_plan *p, int64_t k)
{
    if (!p->vbe)
        return (int32_t)(k / p->B);
    int32_t lo = 0, hi = p->n_features;
    while (hi - lo > 1) {
        int32_t mid = (lo + hi) / 2;
        if (p->vbe_B_offsets[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The bag loop, inlined once per hint so that the prefetch instruction is
** fixed in each copy (fwd_range_t0, fwd_range_nta). */
static inline __attribute__((always_inline)) void fwd_range(void *user, int64_t begin, int64_t end,
                                                            int32_t thread_index, const fbg_prefetch_hint hint)
{
    const fwd_job *j = user;
    const fbg_tbe_plan *p = j->p;
    const fbg_tbe_state *s = p->state;
    const int32_t dt = p->index_dtype;
    /* one accumulator per pool thread; a thread index past the slots (the
    ** pool is larger than the budget the call declared) gets its own */
    const int own = thread_index < 0 || thread_index >= j->n_slots;
    float *acc = own ? malloc((size_t)j->acc_stride * sizeof *acc) : j->acc + thread_index * j->acc_stride;
    if (acc == NULL) {
        atomic_store(&((fwd_job *)user)->failed, 1);
        return;
    }
    const int none = p->pooling == FBG_POOL_NONE;
    int32_t f = feature_of_bag(p, begin) - 1;
    int64_t f_end_bag = begin, pf = 0, pf_end = 0, pf_rows = 0;
    const fbg_tbe_table *tab = NULL;
    fbg_row_acc_fn acc_row = NULL;
    fbg_bag_acc_fn bag_fn = NULL;
    const uint8_t *rows[BAG_CHUNK], *pf_ptr[BAG_CHUNK];
    float wts[BAG_CHUNK];

    for (int64_t k = begin; k < end; k++) {
        const int64_t start = fbg_idx(p->offsets, dt, k), stop = fbg_idx(p->offsets, dt, k + 1);
        if (k >= f_end_bag) {
            /* a new feature: its table, and prefetch restarts at this bag */
            do {
                f++;
                f_end_bag = fbg_plan_feature_bag(p, f + 1);
            } while (k >= f_end_bag);
            tab = &s->tables[s->feature_table_map[f]];
            acc_row = fbg_row_acc((fbg_wtype)tab->wtype);
            bag_fn = none ? NULL : fbg_bag_acc((fbg_wtype)tab->wtype, tab->dim);
            pf_rows = fbg_prefetch_rows(tab->row_stride);
            pf = start;
            pf_end = fbg_idx(p->offsets, dt, end < f_end_bag ? end : f_end_bag);
        }
        const int64_t D = tab->dim;
        if (bag_fn != NULL) {
            /* whole-bag path: f32 output rows are accumulated in place */
            float *dst = j->f32_out ? (float *)p->output + bag_out_offset(p, f, k) : acc;
            int init = 1;
            int64_t i = start;
            do {
                int32_t n = 0;
                for (; i < stop && n < BAG_CHUNK; i++) {
                    /* the row pf_rows indices ahead, inside this range's part of the feature */
                    const int64_t a = i + pf_rows;
                    const int64_t ai = a < pf_end ? fbg_idx(p->indices, dt, a) : -1;
                    const int64_t idx = fbg_idx(p->indices, dt, i);
                    pf_ptr[n] = ai >= 0 ? row_ptr(p, tab, a, ai) : NULL;
                    if (idx < 0) {
                        /* a pruned row adds nothing; its slot is reused, so its prefetch goes out now */
                        if (pf_ptr[n] != NULL)
                            prefetch_row(p, tab, a, hint);
                        continue;
                    }
                    rows[n] = row_ptr(p, tab, i, idx);
                    if (p->per_sample_weights != NULL)
                        wts[n] = p->per_sample_weights[i];
                    n++;
                }
                bag_fn(dst, init, rows, p->per_sample_weights != NULL ? wts : NULL, pf_ptr, n, D,
                       tab->row_stride, hint);
                init = 0;
            } while (i < stop);
            if (p->pooling == FBG_POOL_MEAN && stop > start) {
                const float scale = 1.0f / (float)(stop - start);
                for (int64_t d = 0; d < D; d++)
                    dst[d] *= scale;
            }
            if (dst == acc)
                j->store((char *)p->output + (size_t)bag_out_offset(p, f, k) * j->out_esize, acc, D);
            continue;
        }
        if (none) {
            for (int64_t i = start; i < stop; i++) {
                for (; pf <= i + pf_rows && pf < pf_end; pf++)
                    prefetch_row(p, tab, pf, hint);
                const int64_t idx = fbg_idx(p->indices, dt, i);
                memset(acc, 0, (size_t)D * sizeof *acc);
                if (idx >= 0)   /* IntNBit's CPU nobag lookup ignores per-sample weights */
                    acc_row(acc, row_ptr(p, tab, i, idx), D, 1.0f, &j->params);
                j->store((char *)p->output + (size_t)(i * D) * j->out_esize, acc, D);
            }
            continue;
        }
        memset(acc, 0, (size_t)D * sizeof *acc);
        for (int64_t i = start; i < stop; i++) {
            for (; pf <= i + pf_rows && pf < pf_end; pf++)
                prefetch_row(p, tab, pf, hint);
            const int64_t idx = fbg_idx(p->indices, dt, i);
            if (idx < 0)
                continue;
            acc_row(acc, row_ptr(p, tab, i, idx), D,
                    p->per_sample_weights != NULL ? p->per_sample_weights[i] : 1.0f, &j->params);
        }
        /* MEAN scales by 1/L, with or without per-sample weights, as the
        ** IntNBit TBE's CPU kernel does */
        if (p->pooling == FBG_POOL_MEAN && stop > start) {
            const float scale = 1.0f / (float)(stop - start);
            for (int64_t d = 0; d < D; d++)
                acc[d] *= scale;
        }
        j->store((char *)p->output + (size_t)bag_out_offset(p, f, k) * j->out_esize, acc, D);
    }
    if (own)
        free(acc);
}

static void fwd_range_t0(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    fwd_range(user, begin, end, thread_index, FBG_PF_T0);
}

static void fwd_range_nta(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    fwd_range(user, begin, end, thread_index, FBG_PF_NTA);
}

loom_status fbg_tbe_forward_cpu(loom_exec_ctx *ctx, const fbg_tbe_plan *p)
{
    const fbg_tbe_state *s = p->state;
    if (p->n_bags == 0)
        return LOOM_OK;
    fwd_job j = {
        .p = p,
        .acc_stride = ((int64_t)s->max_D + 15) / 16 * 16,
        .n_slots = ctx->n_threads > 0 ? ctx->n_threads : 64,
        .out_esize = pk_host->dtype_size((loom_dtype)p->output_dtype),
        .store = (loom_dtype)p->output_dtype == LOOM_DTYPE_F32 ? store_row_f32_copy
                 : store_rows[pk_float_index((loom_dtype)p->output_dtype)],
        .f32_out = (loom_dtype)p->output_dtype == LOOM_DTYPE_F32,
        .params = { s->fp8_exponent_bits, s->fp8_exponent_bias },
    };
    j.acc = pk_host->scratch(ctx, (size_t)(j.n_slots * j.acc_stride) * sizeof(float));
    if (j.acc == NULL)
        return pk_host->fail(LOOM_ENOMEM, "fbgemm.tbe: no scratch memory for %d accumulators", (int)j.n_slots);
    atomic_init(&j.failed, 0);
    const loom_range_fn fn = fbg_prefetch_policy_get()->hint == FBG_PF_T0 ? fwd_range_t0 : fwd_range_nta;
    loom_status st = pk_host->parallel_for(ctx, p->n_bags, BAG_GRAIN, fn, &j);
    if (st == LOOM_OK && atomic_load(&j.failed))
        st = pk_host->fail(LOOM_ENOMEM, "fbgemm.tbe: no memory for an accumulator");
    return st;
}
