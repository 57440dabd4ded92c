/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_prefetch.c - fbgemm's LRU and LFU populate on the CPU.
**
** One prefetch (fbgemm: lru_cache_populate_byte / lfu_cache_populate_byte
** followed by lxu_cache_lookup with stats, as the inference TBE's prefetch
** runs them):
**  1. timestep += 1 (the first prefetch runs at 1; timestamps start at 0).
**  2. Unique linear indices with their counts, grouped by set and ascending
**     within a set: one radix sort of (set << bits | linear) keys. Values
**     outside [0, total_rows) (fbgemm's sentinel for pruned rows and
**     uncached tables) take no part.
**  3. Per set (sets are independent, so runs of sets go to parallel_for):
**     LRU: every hit stamps its way with the timestep. The misses, in
**       ascending linear order, meet the ways in fbgemm's order of ascending
**       timestamp (cache_ways.c); the l-th miss replaces the l-th way unless
**       that way carries the current timestep (then it and every later miss
**       stay uncached: conflict misses).
**     LFU: count[linear] += occurrences for every unique index first. The
**       misses, by descending count (ties: ascending linear), meet the ways
**       by ascending count of what they hold (empty = -1); the l-th miss
**       replaces the l-th way while the way's count <= the miss's count.
**       Like fbgemm, this may evict a row hit by the same batch.
**     A replaced way gets a byte copy of the slow-tier row (inference rows
**     are never written back).
**  4. Stats (fbgemm's UVMCacheStatsIndex): num_calls += 1,
**     num_requested_indices += n, num_unique_indices += unique valid
**     indices, num_unique_misses += uniques not found before inserting,
**     num_conflict_unique_misses += those not inserted, num_conflict_misses
**     += occurrences (not unique) of indices not cached once the prefetch
**     ends (what fbgemm's lxu_cache_lookup after the populate counts).
**     fbgemm counts the sentinel as one unique index and its LFU byte
**     populate gathers no stats but the last; here both algorithms count
**     every field and sentinels are not indices.
*/
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"

#define SETS_PER_CHUNK 128

typedef struct populate_job {
    fbg_cache *c;
    int64_t now;
    _Atomic int64_t unique_misses, conflict_unique, conflict_misses;
} populate_job;

static inline uint32_t key_set(const fbg_cache *c, uint64_t key)
{
    return c->packed_keys ? (uint32_t)(key >> c->key_shift) : fbg_cache__set_of((int64_t)key, c->sets);
}

static inline int64_t key_linear(const fbg_cache *c, uint64_t key)
{
    return c->packed_keys ? (int64_t)(key & ((UINT64_C(1) << c->key_shift) - 1)) : (int64_t)key;
}

/* The slow-tier row of `linear` and its length. */
static const uint8_t *slow_row(const fbg_cache *c, int64_t linear, size_t *bytes)
{
    int32_t lo = 0, hi = c->n_tables - 1;
    while (lo < hi) {                       /* last table starting at or before linear */
        int32_t mid = (lo + hi + 1) / 2;
        if (c->row_start[mid] <= linear)
            lo = mid;
        else
            hi = mid - 1;
    }
    const fbg_cache_table *t = &c->tables[lo];
    *bytes = t->row_bytes;
    return t->slow + (size_t)(linear - c->row_start[lo]) * t->row_bytes;
}

/* Ask for the rows about to be copied while the ways are being ordered. */
static void prefetch_rows(const fbg_cache *c, const int64_t *linear, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        size_t bytes;
        const uint8_t *row = slow_row(c, linear[i], &bytes);
        for (size_t off = 0; off < bytes && off < 1024; off += 64)
            __builtin_prefetch(row + off);
    }
}

/* Copy the slow-tier row of `linear` into `slot` and tag it. */
static void fill_slot(fbg_cache *c, int64_t slot, int64_t linear)
{
    size_t bytes;
    const uint8_t *row = slow_row(c, linear, &bytes);
    memcpy(c->rows + (size_t)slot * c->slot_bytes, row, bytes);
    c->tags[slot] = linear;
}

typedef struct set_result {
    int64_t unique_misses, conflict_unique, conflict_misses;
} set_result;

static set_result populate_lru(fbg_cache *c, int64_t now, int64_t a, int64_t b)
{
    set_result r = { 0, 0, 0 };
    const int32_t assoc = c->assoc;
    const uint32_t set = key_set(c, c->keys[a]);
    const int64_t base = (int64_t)set * assoc;
    int64_t *tags = c->tags + base, *stamp = c->lru_time + base;
    int64_t cand[FBG_CACHE_MAX_ASSOC];
    uint32_t cand_count[FBG_CACHE_MAX_ASSOC];
    int32_t n_cand = 0;

    for (int64_t k = a; k < b; k++) {
        int64_t v = key_linear(c, c->keys[k]);
        int32_t w = c->find(tags, assoc, v);
        if (w >= 0) {
            stamp[w] = now;
            continue;
        }
        r.unique_misses++;
        if (n_cand < assoc) {
            cand[n_cand] = v;
            cand_count[n_cand++] = c->counts[k];
        } else {
            r.conflict_misses += c->counts[k];
        }
    }
    if (n_cand == 0)
        return r;

    uint8_t order[FBG_CACHE_MAX_ASSOC];
    int64_t sorted[FBG_CACHE_MAX_ASSOC];
    prefetch_rows(c, cand, n_cand);
    fbg_cache__order_ways(stamp, assoc, c->avx2, order, sorted);
    int32_t inserted = 0;
    for (; inserted < n_cand; inserted++) {
        if (sorted[inserted] == now)
            break;
        int32_t w = order[inserted];
        fill_slot(c, base + w, cand[inserted]);
        stamp[w] = now;
    }
    for (int32_t l = inserted; l < n_cand; l++)
        r.conflict_misses += cand_count[l];
    r.conflict_unique = r.unique_misses - inserted;
    return r;
}

static set_result populate_lfu(fbg_cache *c, int64_t a, int64_t b)
{
    set_result r = { 0, 0, 0 };
    const int32_t assoc = c->assoc;
    const uint32_t set = key_set(c, c->keys[a]);
    const int64_t base = (int64_t)set * assoc;
    int64_t *tags = c->tags + base, *freq = c->lfu_count;
    int64_t cand[FBG_CACHE_MAX_ASSOC];
    uint32_t cand_count[FBG_CACHE_MAX_ASSOC];
    uint32_t hit_count[FBG_CACHE_MAX_ASSOC] = { 0 };
    int32_t n_cand = 0;

    for (int64_t k = a; k < b; k++)
        freq[key_linear(c, c->keys[k])] += c->counts[k];

    for (int64_t k = a; k < b; k++) {
        int64_t v = key_linear(c, c->keys[k]);
        uint32_t occ = c->counts[k];
        int32_t w = c->find(tags, assoc, v);
        if (w >= 0) {
            hit_count[w] = occ;
            continue;
        }
        r.unique_misses++;
        /* keep the `assoc` most frequent misses; keys come in ascending
        ** linear order, so an equal count goes after the ones kept */
        int32_t pos = n_cand;
        while (pos > 0 && freq[cand[pos - 1]] < freq[v])
            pos--;
        if (pos == assoc) {
            r.conflict_misses += occ;
            continue;
        }
        if (n_cand == assoc)
            r.conflict_misses += cand_count[--n_cand];
        memmove(cand + pos + 1, cand + pos, (size_t)(n_cand - pos) * sizeof *cand);
        memmove(cand_count + pos + 1, cand_count + pos, (size_t)(n_cand - pos) * sizeof *cand_count);
        cand[pos] = v;
        cand_count[pos] = occ;
        n_cand++;
    }
    if (n_cand == 0)
        return r;

    int64_t cost[FBG_CACHE_MAX_ASSOC], sorted[FBG_CACHE_MAX_ASSOC];
    uint8_t order[FBG_CACHE_MAX_ASSOC];
    prefetch_rows(c, cand, n_cand);
    for (int32_t w = 0; w < assoc; w++)
        cost[w] = tags[w] == FBG_CACHE_EMPTY ? -1 : freq[tags[w]];
    fbg_cache__order_ways(cost, assoc, c->avx2, order, sorted);
    int32_t inserted = 0;
    for (; inserted < n_cand; inserted++) {
        if (sorted[inserted] > freq[cand[inserted]])
            break;
        int32_t w = order[inserted];
        r.conflict_misses += hit_count[w];  /* a row this batch hit leaves the cache */
        fill_slot(c, base + w, cand[inserted]);
    }
    for (int32_t l = inserted; l < n_cand; l++)
        r.conflict_misses += cand_count[l];
    r.conflict_unique = r.unique_misses - inserted;
    return r;
}

static void populate_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    populate_job *job = user;
    fbg_cache *c = job->c;
    set_result sum = { 0, 0, 0 };
    (void)thread_index;
    for (int64_t s = begin; s < end; s++) {
        set_result r = c->algo == FBG_CACHE_LRU ? populate_lru(c, job->now, c->seg[s], c->seg[s + 1])
                                                : populate_lfu(c, c->seg[s], c->seg[s + 1]);
        sum.unique_misses += r.unique_misses;
        sum.conflict_unique += r.conflict_unique;
        sum.conflict_misses += r.conflict_misses;
    }
    atomic_fetch_add(&job->unique_misses, sum.unique_misses);
    atomic_fetch_add(&job->conflict_unique, sum.conflict_unique);
    atomic_fetch_add(&job->conflict_misses, sum.conflict_misses);
}

static loom_status ensure_work(fbg_cache *c, size_t n)
{
    static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
    if (n <= c->work_cap)
        return LOOM_OK;
    const loom_host_api *host = c->host;
    void **bufs[] = { (void **)&c->keys, (void **)&c->keys_tmp, (void **)&c->counts, (void **)&c->seg };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (*bufs[i] != NULL) {
            host->free(cpu, *bufs[i]);
            *bufs[i] = NULL;
        }
    c->work_cap = 0;
    size_t cap = n + n / 4;
    c->keys = host->alloc(cpu, cap * sizeof *c->keys, 64);
    c->keys_tmp = host->alloc(cpu, cap * sizeof *c->keys_tmp, 64);
    c->counts = host->alloc(cpu, cap * sizeof *c->counts, 64);
    c->seg = host->alloc(cpu, (cap + 1) * sizeof *c->seg, 64);
    if (c->keys == NULL || c->keys_tmp == NULL || c->counts == NULL || c->seg == NULL)
        return host->fail(LOOM_ENOMEM, "fbgemm cache: out of memory for a prefetch of %zu indices", n);
    c->work_cap = cap;
    return LOOM_OK;
}

/* Order of (set, linear) for caches whose keys do not fit 64 bits. */
static _Thread_local uint32_t unpacked_sets;

static int cmp_unpacked(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    uint32_t sa = fbg_cache__set_of(a, unpacked_sets), sb = fbg_cache__set_of(b, unpacked_sets);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return (a > b) - (a < b);
}

loom_status fbg_cache_prefetch(fbg_cache *c, int64_t n, const int64_t *linear)
{
    const loom_host_api *host = c->host;
    if (n < 0 || (n > 0 && linear == NULL))
        return host->fail(LOOM_EINVAL, "fbgemm cache prefetch: expected n >= 0 linear indices, got %lld%s",
                          (long long)n, linear == NULL ? " and NULL" : "");
    if (n >= INT32_MAX)
        return host->fail(LOOM_EINVAL, "fbgemm cache prefetch: %lld indices; fbgemm allows fewer than 2^31-1",
                          (long long)n);
    c->timestep++;
    c->pstats.num_calls++;
    c->pstats.num_requested_indices += n;
    if (n == 0)
        return LOOM_OK;
    loom_status st = ensure_work(c, (size_t)n);
    if (st != LOOM_OK)
        return st;

    size_t m = 0;
    const uint64_t total = (uint64_t)c->total_rows;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = linear[i];
        if ((uint64_t)v >= total)       /* negative values wrap above total */
            continue;
        c->keys[m++] = c->packed_keys ? (uint64_t)fbg_cache__set_of(v, c->sets) << c->key_shift | (uint64_t)v
                                      : (uint64_t)v;
    }
    if (c->packed_keys) {
        int set_bits = 0;
        while (set_bits < 32 && (uint64_t)(c->sets - 1) >> set_bits != 0)
            set_bits++;
        fbg_cache__sort_keys(c->keys, c->keys_tmp, m, c->key_shift + set_bits);
    } else {
        unpacked_sets = c->sets;
        qsort(c->keys, m, sizeof *c->keys, cmp_unpacked);
    }

    /* unique keys with counts; a segment per set */
    int64_t u = 0, n_seg = 0;
    for (size_t i = 0; i < m; i++) {
        if (u > 0 && c->keys[i] == c->keys[u - 1]) {
            c->counts[u - 1]++;
            continue;
        }
        if (u == 0 || key_set(c, c->keys[i]) != key_set(c, c->keys[u - 1]))
            c->seg[n_seg++] = u;
        c->keys[u] = c->keys[i];
        c->counts[u++] = 1;
    }
    c->seg[n_seg] = u;
    c->pstats.num_unique_indices += u;

    populate_job job = { .c = c, .now = c->timestep };
    atomic_init(&job.unique_misses, 0);
    atomic_init(&job.conflict_unique, 0);
    atomic_init(&job.conflict_misses, 0);
    st = host->parallel_for(NULL, n_seg, SETS_PER_CHUNK, populate_range, &job);
    if (st != LOOM_OK)
        return st;
    c->pstats.num_unique_misses += atomic_load(&job.unique_misses);
    c->pstats.num_conflict_unique_misses += atomic_load(&job.conflict_unique);
    c->pstats.num_conflict_misses += atomic_load(&job.conflict_misses);
    return LOOM_OK;
}
