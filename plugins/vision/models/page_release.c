/* SPDX-License-Identifier: BSD-3-Clause */
/* page_release.c - see page_release.h. */
#include <stdint.h>

#include <sys/mman.h>
#include <unistd.h>

#include "page_release.h"

void model_release_pages(const void *data, size_t bytes)
{
#ifdef MADV_PAGEOUT
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t lo = ((uintptr_t)data + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t hi = ((uintptr_t)data + bytes) & ~((uintptr_t)page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_PAGEOUT);
#else
    (void)data;
    (void)bytes;
#endif
}
