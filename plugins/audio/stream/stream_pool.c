/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pool.c - the chunk blocks of an output stream (stream_pool.h).
*/
#include "stream_pool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* Idle blocks kept for reuse: a reader's buffer holds buffer_chunk_size
** chunks (3 by default) and a caller typically one or two, so a few cover
** the steady state of decode-pop-free; more would only hold memory. */
#define SB_POOL_IDLE 4
#define SB_POOL_ALIGN 64   /* LOOM_ADOPT_ALIGNMENT */

struct sb_pool {
    pthread_mutex_t lock;
    size_t block_bytes, alloc_bytes;   /* alloc_bytes: rounded up for aligned_alloc */
    int64_t refs;                      /* the owner's (until closed) + one per block out */
    int closed;
    int n_idle;
    void *idle[SB_POOL_IDLE];
};

sb_pool *sb_pool_new(size_t block_bytes)
{
    sb_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    p->block_bytes = block_bytes;
    p->alloc_bytes = block_bytes > SIZE_MAX - SB_POOL_ALIGN ? 0
                   : (block_bytes + SB_POOL_ALIGN - 1) / SB_POOL_ALIGN * SB_POOL_ALIGN;
    if (p->alloc_bytes == 0)
        p->alloc_bytes = SB_POOL_ALIGN;
    p->refs = 1;
    return p;
}

size_t sb_pool_block_bytes(const sb_pool *p) { return p->block_bytes; }

static void destroy(sb_pool *p)
{
    for (int i = 0; i < p->n_idle; i++)
        free(p->idle[i]);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Drop one reference, under the lock; true when it was the last. */
static int unref_locked(sb_pool *p) { return --p->refs == 0; }

void sb_pool_close(sb_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    for (int i = 0; i < p->n_idle; i++)
        free(p->idle[i]);
    p->n_idle = 0;
    int last = unref_locked(p);
    pthread_mutex_unlock(&p->lock);
    if (last)
        destroy(p);
}

void *sb_pool_get(sb_pool *p)
{
    void *b = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->n_idle > 0)
        b = p->idle[--p->n_idle];
    pthread_mutex_unlock(&p->lock);
    if (b == NULL && (b = aligned_alloc(SB_POOL_ALIGN, p->alloc_bytes)) == NULL)
        return NULL;
    pthread_mutex_lock(&p->lock);
    p->refs++;
    pthread_mutex_unlock(&p->lock);
    return b;
}

void sb_pool_put(void *user, void *block)
{
    sb_pool *p = user;
    pthread_mutex_lock(&p->lock);
    if (!p->closed && p->n_idle < SB_POOL_IDLE) {
        p->idle[p->n_idle++] = block;
        block = NULL;
    }
    int last = unref_locked(p);
    pthread_mutex_unlock(&p->lock);
    free(block);
    if (last)
        destroy(p);
}
