/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache_refresh.c - write-through for a training TBE with a cache: after
** fbgemm.tbe_backward has updated a row of the slow tier (the object's
** owned copy of its tables), the slot holding that row, if any, gets the
** new bytes. The fast tier therefore stays a byte copy of the slow tier,
** every lookup through the cache reads the same bits as one without it,
** and an eviction needs no write-back.
**
** fbgemm's training cache is write-back instead (the slot is the row's only
** up-to-date copy until it is evicted and flushed to UVM); both give the
** same rows to every lookup and the same tables at the end. Write-through
** costs one way search per updated row, and keeps eviction a plain
** overwrite, so that a prefetch may run whenever the object's lock is free
** (fbgemm's pipeline needs a locking counter for the in-flight batch's
** rows; here a miss of the in-flight batch reads the slow tier, which the
** backward keeps current).
*/
#include <string.h>

#include "cache_internal.h"

/* The table of `linear` (the last whose first row is at or before it). */
static int32_t table_of(const fbg_cache *c, int64_t linear)
{
    int32_t lo = 0, hi = c->n_tables - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (c->row_start[mid] <= linear)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int fbg_cache_refresh(fbg_cache *c, int64_t linear)
{
    if ((uint64_t)linear >= (uint64_t)c->total_rows)
        return 0;
    const int64_t base = (int64_t)fbg_cache__set_of(linear, c->sets) * c->assoc;
    const int32_t w = c->find(c->tags + base, c->assoc, linear);
    if (w < 0)
        return 0;
    const int32_t t = table_of(c, linear);
    const fbg_cache_table *tab = &c->tables[t];
    memcpy(c->rows + (size_t)(base + w) * c->slot_bytes,
           tab->slow + (size_t)(linear - c->row_start[t]) * tab->row_bytes, tab->row_bytes);
    return 1;
}
