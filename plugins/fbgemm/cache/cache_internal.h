/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_internal.h - the state of an fbg_cache and the helpers its files
** share (cache.c: lifetime, sizing, stats; cache_ways.c: set hashing, way
** search, fbgemm's way order; cache_sort.c: key sort; cache_prefetch.c:
** LRU/LFU populate; cache_lookup.c: lookup). Nothing here leaves the pack.
**
** Layout: way w of set s is slot s * assoc + w. tags[slot] is the linear
** index held there or FBG_CACHE_EMPTY; rows + slot * slot_bytes is its
** byte copy of the slow-tier row (only the first row_bytes of the row's
** table are meaningful). LRU keeps a timestamp per slot (lru_time, the
** timestep of the prefetch that last inserted or hit it, 0 = never); LFU a
** count per linear index (lfu_count[total_rows], fbgemm's lfu_state).
*/
#ifndef LOOM_FBGEMM_CACHE_INTERNAL_H
#define LOOM_FBGEMM_CACHE_INTERNAL_H

#include <stdatomic.h>

#include "cache.h"

/* fbgemm's kCacheStateInvalid. */
#define FBG_CACHE_EMPTY ((int64_t)-1)
/* fbgemm supports 32 ways (64 on AMD); the way order network handles up to 64. */
#define FBG_CACHE_MAX_ASSOC 64
#define FBG_CACHE_DEFAULT_ASSOC 32

/* Way search: the first way of `tags[0..assoc)` holding v, or -1. */
typedef int32_t (*fbg_cache_find_fn)(const int64_t *tags, int32_t assoc, int64_t v);

struct fbg_cache {
    const loom_host_api *host;
    int32_t n_tables;
    fbg_cache_table *tables;        /* copy of the config's tables */
    int64_t *row_start;             /* [n_tables + 1]: linear index of each table's row 0 */
    int64_t total_rows;
    size_t slot_bytes;              /* largest row_bytes */

    uint32_t sets;
    int32_t assoc;
    fbg_cache_algo algo;

    int64_t *tags;                  /* [sets * assoc] */
    int64_t *lru_time;              /* [sets * assoc], LRU only */
    int64_t *lfu_count;             /* [total_rows], LFU only */
    uint8_t *rows;                  /* [sets * assoc * slot_bytes] */
    int64_t timestep;               /* advanced once per prefetch; first prefetch uses 1 */
    fbg_cache_find_fn find;
    int avx2;                       /* way order through the AVX2 network */

    /* Prefetch work arrays, grown on demand and kept between calls. */
    uint64_t *keys, *keys_tmp;      /* sortable (set, linear) keys */
    uint32_t *counts;               /* occurrences of each unique key */
    int64_t *seg;                   /* start of each set's run of unique keys */
    size_t work_cap;
    int key_shift;                  /* linear index bits in a key */
    int packed_keys;                /* 1: key = set << key_shift | linear fits 64 bits;
                                    ** 0: keys hold the linear index alone */

    /* Stats: the prefetch counters are written by prefetch only; lookups
    ** may run on several threads. */
    fbg_cache_stats pstats;
    _Atomic int64_t lookups, lookup_hits;
};

/* MurmurHash3's 64-bit finaliser modulo the set count (fbgemm's cache_slot). */
static inline uint32_t fbg_cache__set_of(int64_t linear, uint32_t sets)
{
    uint64_t h = (uint64_t)linear;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return (uint32_t)(h % sets);
}

/* The way search for this machine (AVX2 when present and not capped by
** LOOM_CPU_MAX_ISA, else portable). */
fbg_cache_find_fn fbg_cache__pick_find(void);

/* Order the ways of one set as fbgemm's warp bitonic sort does: ascending
** cost; ties resolved by the network exactly as on the GPU (a compare-
** exchange swaps only on strict inequality). order[k] is the way with the
** k-th smallest cost and sorted_cost[k] its cost. */
void fbg_cache__order_ways(const int64_t *cost, int32_t assoc, int avx2, uint8_t *order, int64_t *sorted_cost);

/* 1 when the AVX2 paths are in use (see fbg_cache__pick_find). */
int fbg_cache__have_avx2(void);

/* Sort keys[0..n) ascending using tmp[0..n) as scratch; key_bits is the
** number of significant low bits. */
void fbg_cache__sort_keys(uint64_t *keys, uint64_t *tmp, size_t n, int key_bits);

#endif /* LOOM_FBGEMM_CACHE_INTERNAL_H */
