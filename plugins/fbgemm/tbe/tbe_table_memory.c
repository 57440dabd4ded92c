/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_table_memory.c - the memory the tables of an inference fbgemm.tbe
** object are read from (the class attribute table_memory):
**  - "map" (the default): the rows stay in the mapped weights file. Nothing
**    is copied, the pages are the page cache's (shared with every process
**    that maps the file), 4 KB each.
**  - "hugepage": create copies the tables into one anonymous mapping
**    advised MADV_HUGEPAGE (transparent huge pages, 2 MB on x86-64), each
**    table starting on a 2 MB boundary. Why: a lookup reads rows at random
**    from tables far larger than the TLB's reach with 4 KB pages (a 2048-
**    entry TLB covers 8 MB), so every row costs a page walk whose page-table
**    entries themselves miss the caches once the tables pass the LLC's
**    share of page tables (13 GB of tables need 26 MB of them); with 2 MB
**    pages the walks mostly hit. A 64-byte-aligned table also puts a row
**    whose size is a multiple of 64 on whole cache lines (a 512-byte row of
**    the file, whose data need not be aligned, spans 9 lines). The price:
**    the tables' bytes once more in private memory, and create's copy.
**    THP is advice: with THP "never" (or memory too fragmented to find 2 MB
**    pages) the copy gets 4 KB pages and only the alignment helps.
**
** Contract: on success every tables[t].base points into the copy, which
** lives until fbg_table_memory_free; the rows are bit-identical to the
** file's, so results do not depend on the choice.
*/
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "tbe_internal.h"

#define HUGE_PAGE_BYTES ((size_t)2 << 20)

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

loom_status fbg_table_memory_from_name(const char *name, int *kind)
{
    if (strcmp(name, "map") == 0)
        *kind = FBG_TABLES_MAP;
    else if (strcmp(name, "hugepage") == 0)
        *kind = FBG_TABLES_HUGEPAGE;
    else
        return pk_host->fail(LOOM_EINVAL, "%s: table_memory '%s' is not map or hugepage", FBG_TBE_CLASS, name);
    return LOOM_OK;
}

loom_status fbg_table_memory_copy(fbg_tbe_table *tables, int32_t n, void **region, size_t *region_bytes)
{
    *region = NULL;
    *region_bytes = 0;
    size_t total = 0;
    for (int32_t t = 0; t < n; t++) {
        size_t bytes = (size_t)tables[t].rows * (size_t)tables[t].row_stride;
        if (bytes > SIZE_MAX / 2 || total > SIZE_MAX / 2 - round_up(bytes, HUGE_PAGE_BYTES))
            return pk_host->fail(LOOM_ENOMEM, "%s: table_memory hugepage: the tables do not fit the address space",
                                 FBG_TBE_CLASS);
        total += round_up(bytes, HUGE_PAGE_BYTES);
    }
    if (total == 0)
        return LOOM_OK;
    /* one huge page more than needed, so that the start can be aligned to it */
    const size_t mapped = total + HUGE_PAGE_BYTES;
    uint8_t *raw = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return pk_host->fail(LOOM_ENOMEM, "%s: table_memory hugepage: no %.1f MB of anonymous memory for the "
                             "tables' copy", FBG_TBE_CLASS, (double)mapped / 1e6);
    uint8_t *base = (uint8_t *)round_up((size_t)(uintptr_t)raw, HUGE_PAGE_BYTES);
    /* the unaligned head and the tail are given back; what stays is `total` from `base` */
    if (base > raw)
        (void)munmap(raw, (size_t)(base - raw));
    if ((size_t)(base - raw) < HUGE_PAGE_BYTES)
        (void)munmap(base + total, HUGE_PAGE_BYTES - (size_t)(base - raw));
#ifdef MADV_HUGEPAGE
    (void)madvise(base, total, MADV_HUGEPAGE);   /* advice: refused where THP is off */
#endif
    size_t off = 0;
    for (int32_t t = 0; t < n; t++) {
        size_t bytes = (size_t)tables[t].rows * (size_t)tables[t].row_stride;
        if (bytes > 0)
            memcpy(base + off, tables[t].base, bytes);
        tables[t].base = base + off;
        off += round_up(bytes, HUGE_PAGE_BYTES);
    }
    *region = base;
    *region_bytes = total;
    return LOOM_OK;
}

void fbg_table_memory_free(void *region, size_t region_bytes)
{
    if (region != NULL && region_bytes > 0)
        (void)munmap(region, region_bytes);
}
