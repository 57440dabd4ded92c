/* SPDX-License-Identifier: BSD-3-Clause */
/*
** hostcache.c - CPU memory for outputs, scratch blocks and pack
** allocations, with a cache of freed large blocks reused by size class.
**
** Why: a fresh output of a few MB comes from mmap and pays a page fault per
** 4 KB page on first touch; for memory-bound ops that is most of the call
** (a 1-thread jagged copy: 18.8 ms into a fresh output, 5.9 ms into a reused
** one). Keeping freed blocks and handing them out again removes the faults.
**
** Layout: every block starts with a header of HDR bytes (64, or the
** alignment asked for when larger); the caller gets the address after it.
** Blocks up to SMALL bytes are plain posix_memalign memory (malloc is fast
** and faults little there) and are never cached. Larger blocks are rounded
** up to a size class, four per power of two (at most 25% slack), and on free
** go to their class's list while the cache holds at most `cap` bytes
** (LOOM_ALLOC_CACHE, default 1 GiB; 0 disables); beyond that, or for blocks
** larger than the cap, they go back to the system. loom_trim() and
** loom_shutdown release everything cached. One mutex guards the lists: the
** operations are O(1) and rare compared with the work on the memory.
**
** Under AddressSanitizer the cache defaults to off, since a reused block
** would hide a use after free from it; LOOM_ALLOC_CACHE still turns it on.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define HDR            64u
#define SMALL          ((size_t)64 << 10)
#define MAGIC          0x4B4C424C4D4F4F4Cull   /* "LOOMLBLK" */
#define CLASS_STEPS    4
#define MAX_CLASSES    (48 * CLASS_STEPS)

typedef struct block_header {
    uint64_t magic;
    size_t size;                 /* usable bytes (the class size for cached classes) */
    size_t offset;               /* from the system allocation to the user pointer */
    int32_t cls;                 /* size class, -1 for blocks that are never cached */
    int32_t reserved;
    struct block_header *next;   /* free list link while cached */
    char pad[HDR - 32 - sizeof(struct block_header *)];
} block_header;
_Static_assert(sizeof(block_header) == HDR, "the header fills HDR bytes");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block_header *lists[MAX_CLASSES];
static uint64_t cached_bytes, cap, hits, misses;
static bool enabled;

#if defined(__SANITIZE_ADDRESS__)
#  define DEFAULT_ON false
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define DEFAULT_ON false
#  endif
#endif
#ifndef DEFAULT_ON
#  define DEFAULT_ON true
#endif

/* The class of a request of n > SMALL bytes, and the class's size. */
static int32_t class_of(size_t n, size_t *size)
{
    int k = 63 - __builtin_clzll((unsigned long long)n);   /* 2^k <= n < 2^(k+1) */
    size_t base = (size_t)1 << k, step = base / CLASS_STEPS;
    size_t j = (n - base + step - 1) / step;               /* 0..CLASS_STEPS */
    if (j == CLASS_STEPS) {
        k++;
        j = 0;
        base <<= 1;
        step <<= 1;
    }
    *size = base + j * step;
    return (int32_t)(k * CLASS_STEPS + (int)j);
}

void loom__host_cache_configure(bool explicit_setting, uint64_t bytes)
{
    pthread_mutex_lock(&lock);
    enabled = explicit_setting ? bytes > 0 : DEFAULT_ON;
    cap = explicit_setting ? bytes : (uint64_t)1 << 30;
    pthread_mutex_unlock(&lock);
}

void *loom__host_alloc(size_t nbytes, size_t alignment)
{
    size_t hdr, size = nbytes ? nbytes : 1;
    int32_t cls = -1;
    block_header *h = NULL;
    void *base;

    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        alignment = HDR;
    hdr = alignment > HDR ? alignment : HDR;
    if (size > SMALL && hdr == HDR && size <= ((size_t)1 << 46)) {
        cls = class_of(size, &size);
        pthread_mutex_lock(&lock);
        if (enabled && cls < MAX_CLASSES && (h = lists[cls]) != NULL) {
            lists[cls] = h->next;
            cached_bytes -= h->size;
            hits++;
        } else {
            misses++;
        }
        pthread_mutex_unlock(&lock);
        if (h != NULL)
            return (char *)h + HDR;
    }
    if (size > SIZE_MAX - hdr || posix_memalign(&base, hdr, hdr + size) != 0) {
        loom__fail(LOOM_ENOMEM, "out of host memory allocating %zu bytes", nbytes);
        return NULL;
    }
    h = (block_header *)((char *)base + hdr - HDR);
    h->magic = MAGIC;
    h->size = size;
    h->offset = hdr;
    h->cls = cls;
    h->next = NULL;
    return (char *)base + hdr;
}

void loom__host_free(void *p)
{
    block_header *h;

    if (p == NULL)
        return;
    h = (block_header *)((char *)p - HDR);
    if (h->magic != MAGIC) {
        loom__log(0, "loom: freeing %p, which loom did not allocate (or a corrupted block); leaking it", p);
        return;
    }
    if (h->cls >= 0 && h->cls < MAX_CLASSES) {
        pthread_mutex_lock(&lock);
        if (enabled && h->size <= cap && cached_bytes + h->size <= cap) {
            h->next = lists[h->cls];
            lists[h->cls] = h;
            cached_bytes += h->size;
            h = NULL;
        }
        pthread_mutex_unlock(&lock);
        if (h == NULL)
            return;
    }
    h->magic = 0;
    free((char *)p - h->offset);
}

void loom__host_cache_trim(void)
{
    block_header *all[MAX_CLASSES];

    pthread_mutex_lock(&lock);
    memcpy(all, lists, sizeof all);
    memset(lists, 0, sizeof lists);
    cached_bytes = 0;
    pthread_mutex_unlock(&lock);
    for (int c = 0; c < MAX_CLASSES; c++)
        while (all[c] != NULL) {
            block_header *h = all[c];
            all[c] = h->next;
            h->magic = 0;
            free((char *)h + HDR - h->offset);
        }
}

void loom__host_cache_stats(uint64_t *bytes, uint64_t *n_hits, uint64_t *n_misses)
{
    pthread_mutex_lock(&lock);
    *bytes = cached_bytes;
    *n_hits = hits;
    *n_misses = misses;
    pthread_mutex_unlock(&lock);
}

LOOM_API void loom_trim(void)
{
    loom__host_cache_trim();
}
