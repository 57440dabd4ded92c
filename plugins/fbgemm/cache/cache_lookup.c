/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_lookup.c - fbgemm's lxu_cache_lookup: the slot holding each linear
** index, or -1. Read-only on the cache state, so several threads may look
** up at once (each call adds its counts to the atomic lookup stats once).
** Values outside [0, total_rows) get -1 and are not counted, as fbgemm
** skips its sentinel. The tags of the set eight indices ahead are
** prefetched: with a benchmark-sized cache the tag array lives in L3.
** A large call splits itself over host->parallel_for (which runs inline
** when the caller is already inside a parallel job).
*/
#include "cache_internal.h"

#define LOOKAHEAD 8   /* a power of two */
#define PARALLEL_GRAIN 16384

/* First slot of the set of v, or -1 for a value outside the cache; the
** set's tags are prefetched. */
static inline int64_t set_base(const fbg_cache *c, int64_t v)
{
    if ((uint64_t)v >= (uint64_t)c->total_rows)
        return -1;
    int64_t base = (int64_t)fbg_cache__set_of(v, c->sets) * c->assoc;
    __builtin_prefetch(c->tags + base);
    __builtin_prefetch(c->tags + base + c->assoc - 1);
    return base;
}

static void lookup_range(fbg_cache *c, int64_t n, const int64_t *linear, int32_t *locations)
{
    const int32_t assoc = c->assoc;
    const fbg_cache_find_fn find = c->find;
    int64_t ring[LOOKAHEAD];
    int64_t looked = 0, hits = 0;

    for (int64_t i = 0; i < n && i < LOOKAHEAD; i++)
        ring[i] = set_base(c, linear[i]);
    for (int64_t i = 0; i < n; i++) {
        int64_t base = ring[i & (LOOKAHEAD - 1)];
        if (i + LOOKAHEAD < n)
            ring[i & (LOOKAHEAD - 1)] = set_base(c, linear[i + LOOKAHEAD]);
        if (base < 0) {
            locations[i] = -1;
            continue;
        }
        looked++;
        int32_t w = find(c->tags + base, assoc, linear[i]);
        locations[i] = w < 0 ? -1 : (int32_t)(base + w);
        hits += w >= 0;
    }
    atomic_fetch_add(&c->lookups, looked);
    atomic_fetch_add(&c->lookup_hits, hits);
}

typedef struct lookup_job {
    fbg_cache *c;
    const int64_t *linear;
    int32_t *locations;
} lookup_job;

static void lookup_chunk(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const lookup_job *j = user;
    (void)thread_index;
    lookup_range(j->c, end - begin, j->linear + begin, j->locations + begin);
}

void fbg_cache_lookup(fbg_cache *c, int64_t n, const int64_t *linear, int32_t *locations)
{
    lookup_job j = { c, linear, locations };
    if (n < 2 * PARALLEL_GRAIN || c->host->parallel_for(NULL, n, PARALLEL_GRAIN, lookup_chunk, &j) != LOOM_OK)
        lookup_range(c, n, linear, locations);
}
