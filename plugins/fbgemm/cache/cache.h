/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache.h - the two-tier row cache behind fbgemm.tbe when cache_load_factor
** is below 1: fbgemm's MANAGED_CACHING emulated on CPU.
**
** Slow tier: each table's rows where they already live (the memory-mapped
** safetensors file on CPU, or a training object's owned copy); the cache
** only reads it. Training keeps the slots current by write-through
** (fbg_cache_refresh after each updated row): no write-back. Fast tier: sets*assoc slots of max_row_bytes each in memory
** the cache owns; a slot holds a byte-exact copy of a slow-tier row, so a
** lookup through the cache is bit-identical to one without it.
**
** Placement is fbgemm's: a row's linear index is cumsum_rows[table] + row;
** its set is MurmurHash3's 64-bit finaliser of the linear index modulo the
** set count; sets = max(1, ceil(floor(total_rows * load_factor) / assoc)).
** LRU and LFU follow fbgemm's populate rules (cache/ implements them and
** documents the details): a prefetch stamps the current timestep, ways
** stamped with it are not evictable within the same prefetch, misses that
** find no evictable way are conflict misses and stay in the slow tier.
**
** Threading: prefetch and lookup of one cache must not run concurrently
** with each other (the TBE object serialises them); lookup is read-only
** and may be split across threads.
*/
#ifndef LOOM_FBGEMM_CACHE_H
#define LOOM_FBGEMM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

/* fbgemm's CacheAlgorithm values. */
typedef enum fbg_cache_algo { FBG_CACHE_LRU = 0, FBG_CACHE_LFU = 1 } fbg_cache_algo;

/* One physical table as the cache sees it: rows of row_bytes bytes each,
** contiguous from `slow` (row r at slow + r * row_bytes). */
typedef struct fbg_cache_table {
    const uint8_t *slow;
    int64_t rows;
    size_t row_bytes;
} fbg_cache_table;

typedef struct fbg_cache_config {
    int32_t n_tables;
    const fbg_cache_table *tables;
    double load_factor;     /* (0, 1]: fraction of all rows that fit in the fast tier */
    int32_t assoc;          /* ways per set; 0 means fbgemm's default, 32 */
    fbg_cache_algo algo;
} fbg_cache_config;

/* fbgemm's UVMCacheStatsIndex counters, summed over calls since creation
** or the last reset. */
typedef struct fbg_cache_stats {
    int64_t num_calls;                 /* prefetches */
    int64_t num_requested_indices;
    int64_t num_unique_indices;
    int64_t num_unique_misses;
    int64_t num_conflict_unique_misses;
    int64_t num_conflict_misses;
    int64_t lookups;                   /* indices looked up by fbg_cache_lookup */
    int64_t lookup_hits;               /* of those, found in the fast tier */
} fbg_cache_stats;

typedef struct fbg_cache fbg_cache;

/* Create a cache (empty: every slot invalid). Fails with a message through
** host->fail on a bad config or when memory is short. */
loom_status fbg_cache_create(const loom_host_api *host, const fbg_cache_config *config,
                           fbg_cache **out);
void fbg_cache_destroy(fbg_cache *cache);

/* The linear index of (table, row); the caller has bounds-checked row. */
int64_t fbg_cache_linear(const fbg_cache *cache, int32_t table, int64_t row);
/* Sets, ways and the effective load factor (sets * assoc / total rows). */
int64_t fbg_cache_sets(const fbg_cache *cache);
int32_t fbg_cache_assoc(const fbg_cache *cache);
double fbg_cache_effective_load_factor(const fbg_cache *cache);

/* Populate: bring the rows of `n` linear indices (duplicates allowed;
** negative values are ignored) into the fast tier as fbgemm's LRU / LFU
** populate does, advancing the timestep once. Updates the stats. */
loom_status fbg_cache_prefetch(fbg_cache *cache, int64_t n, const int64_t *linear);

/* locations[i] = slot holding linear[i], or -1 when it is not cached (read
** the slow tier). Counts lookups and hits in the stats. Thread-safe against
** other lookups only. */
void fbg_cache_lookup(fbg_cache *cache, int64_t n, const int64_t *linear, int32_t *locations);

/* Write-through (cache_refresh.c): when `linear` is cached, copy its
** slow-tier row, just updated by a training step, into its slot; returns 1
** when it was cached, else 0. The slow tier must be writable memory the
** caller owns (the training TBE's copy of its tables). Reads the tags only:
** safe against other refreshes of other rows and against lookups, not
** against a prefetch (the TBE object's lock orders them). */
int fbg_cache_refresh(fbg_cache *cache, int64_t linear);

/* The bytes of the row in `slot` (0 <= slot < sets * assoc). */
const uint8_t *fbg_cache_slot_row(const fbg_cache *cache, int32_t slot);

void fbg_cache_get_stats(const fbg_cache *cache, fbg_cache_stats *stats);
void fbg_cache_reset_stats(fbg_cache *cache);

#endif /* LOOM_FBGEMM_CACHE_H */
