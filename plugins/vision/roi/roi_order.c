/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_order.c - the order in which forward roi_align visits the rois: by
** image, then by band of map rows, then along the band. Rois that read the
** same part of the map then run one after another, and on one thread (the
** pool hands out contiguous ranges), while that part is still in cache.
** The order changes no result: each roi's outputs depend on that roi alone.
*/
#include <stdlib.h>

#include "roi_cpu.h"

static int key_cmp(const void *pa, const void *pb)
{
    const roi_key *a = pa, *b = pb;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    if (a->band != b->band)
        return a->band < b->band ? -1 : 1;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

void roi_visit_order(roi_key *keys, int64_t k)
{
    if (k > 1)
        qsort(keys, (size_t)k, sizeof *keys, key_cmp);
}
