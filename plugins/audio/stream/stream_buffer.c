/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_buffer.c - the chunk buffer of an output stream (stream_buffer.h).
** Host memory, chunked: frames live in segments of one chunk each, blocks
** of the output's pool, kept in a ring, so a pop hands out the oldest
** without moving the others, and lends its block as it is (sb_pop_take).
** Host memory, unchunked: every frame in one mapped region that grows in
** place; a pop lends the region whole. Device memory (`mem`): segments in
** the ring as well, about 4 MB each when unchunked, growing the buffer
** without copying what it holds; a pop copies them out once.
*/
#include "stream_buffer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SB_SEGMENT_BYTES (4u << 20)

/* Unchunked host buffers: one anonymous mapping (page-aligned) holding
** every buffered frame, grown with mremap, which moves page tables instead
** of bytes; the first region holds 64 KiB, each growth doubles. */
#define SB_REGION_MIN ((size_t)64 << 10)

static int region_mode(const stream_buffer *b) { return b->mem == NULL && b->frames_per_chunk < 0; }

/* One idle region kept for the next (process-wide): a decode's result is
** freed, and the next decode writes the same pages again, without faulting
** them in and zeroing them anew. Kept with MADV_FREE, so the kernel may
** still take its pages back under memory pressure (they fault in as new
** then); never more than SB_REGION_KEEP bytes. */
#define SB_REGION_KEEP ((size_t)1 << 30)
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static void *idle_region;
static size_t idle_cap;

/* Room for `need` bytes in the region. 0, or -1 out of memory. */
static int region_reserve(stream_buffer *b, size_t need)
{
    if (need <= b->region_cap)
        return 0;
    if (b->region == NULL) {
        pthread_mutex_lock(&idle_lock);
        b->region = idle_region;
        b->region_cap = idle_cap;
        idle_region = NULL;
        idle_cap = 0;
        pthread_mutex_unlock(&idle_lock);
        if (need <= b->region_cap)
            return 0;
    }
    size_t cap = b->region_cap ? b->region_cap : SB_REGION_MIN;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    void *p = b->region == NULL ? mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                : mremap(b->region, b->region_cap, cap, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
        return -1;
    b->region = p;
    b->region_cap = cap;
    return 0;
}

/* A region nobody uses any more: the idle one if there is none (the
** larger one wins), else unmapped. */
static void region_retire(void *block, size_t bytes)
{
    if (bytes <= SB_REGION_KEEP) {
        pthread_mutex_lock(&idle_lock);
        if (idle_cap < bytes) {
            void *old = idle_region;
            size_t old_cap = idle_cap;
            madvise(block, bytes, MADV_FREE);
            idle_region = block;
            idle_cap = bytes;
            block = old;
            bytes = old_cap;
        }
        pthread_mutex_unlock(&idle_lock);
    }
    if (block != NULL)
        munmap(block, bytes);
}

/* A lent region: its size. */
typedef struct region_lease { size_t bytes; } region_lease;

static void region_release(void *user, void *block)
{
    region_lease *l = user;
    region_retire(block, l->bytes);
    free(l);
}

void sb_init(stream_buffer *b, int64_t frames_per_chunk, int64_t max_chunks, size_t frame_bytes,
             const sb_memory *mem)
{
    memset(b, 0, sizeof *b);
    b->mem = mem;
    b->frames_per_chunk = frames_per_chunk;
    b->max_chunks = frames_per_chunk > 0 ? max_chunks : -1;
    b->frame_bytes = frame_bytes;
    b->seg_frames = frames_per_chunk > 0 ? frames_per_chunk
                    : frame_bytes >= SB_SEGMENT_BYTES ? 1 : (int64_t)(SB_SEGMENT_BYTES / (frame_bytes ? frame_bytes : 1));
}

static sb_chunk *at(const stream_buffer *b, int64_t i) { return &b->ring[(b->head + i) % b->ring_cap]; }

static void seg_free(const stream_buffer *b, void *p)
{
    if (b->mem != NULL)
        b->mem->release(b->mem->user, p);
    else if (b->pool != NULL)
        sb_pool_put(b->pool, p);
    else
        free(p);
}

static uint8_t *seg_alloc(stream_buffer *b, size_t n)
{
    if (b->mem != NULL)
        return b->mem->alloc(b->mem->user, n);
    if (b->pool == NULL && (b->pool = sb_pool_new(n)) == NULL)
        return NULL;
    return sb_pool_get(b->pool);
}

void sb_flush(stream_buffer *b)
{
    if (region_mode(b)) {
        b->buffered = 0;   /* the region stays for the next frames */
        return;
    }
    for (int64_t i = 0; i < b->count; i++)
        seg_free(b, at(b, i)->data);
    b->head = b->count = b->buffered = 0;
}

void sb_free(stream_buffer *b)
{
    sb_flush(b);
    free(b->ring);
    b->ring = NULL;
    b->ring_cap = 0;
    sb_pool_close(b->pool);   /* blocks callers still hold keep it until they come back */
    b->pool = NULL;
    if (b->region != NULL)
        region_retire(b->region, b->region_cap);
    b->region = NULL;
    b->region_cap = 0;
}

static int ring_push(stream_buffer *b, uint8_t *data, int64_t pts)
{
    if (b->count == b->ring_cap) {
        int64_t cap = b->ring_cap ? 2 * b->ring_cap : 8;
        sb_chunk *r = malloc((size_t)cap * sizeof *r);
        if (r == NULL)
            return -1;
        for (int64_t i = 0; i < b->count; i++)
            r[i] = *at(b, i);
        free(b->ring);
        b->ring = r;
        b->ring_cap = cap;
        b->head = 0;
    }
    sb_chunk *c = &b->ring[(b->head + b->count) % b->ring_cap];
    c->data = data;
    c->pts = pts;
    b->count++;
    return 0;
}

static void ring_pop(stream_buffer *b)
{
    seg_free(b, at(b, 0)->data);
    b->head = (b->head + 1) % b->ring_cap;
    b->count--;
}

/* A new, empty last segment starting at pts; past max_chunks the oldest
** chunk (always full) is dropped and counted. 0, or -1 out of memory. */
static int new_segment(stream_buffer *b, int64_t pts)
{
    size_t n = (size_t)b->seg_frames * b->frame_bytes;
    uint8_t *d = seg_alloc(b, n);
    if (d == NULL)
        return -1;
    if (ring_push(b, d, pts) != 0) {
        seg_free(b, d);
        return -1;
    }
    if (b->max_chunks > 0 && b->count > b->max_chunks) {
        ring_pop(b);
        b->buffered -= b->seg_frames;
        b->dropped_chunks++;
        b->dropped_frames += b->seg_frames;
        if (b->on_drop != NULL)
            b->on_drop(b->drop_user, b->dropped_chunks);
    }
    return 0;
}

int sb_push(stream_buffer *b, const uint8_t *frames, int64_t n, int64_t pts, int64_t step_num, int64_t step_den)
{
    const int64_t seg = b->seg_frames;
    const size_t fb = b->frame_bytes;
    int64_t done = 0;
    if (region_mode(b)) {
        (void)step_num;
        (void)step_den;
        if (region_reserve(b, (size_t)(b->buffered + n) * fb) != 0)
            return -1;
        if (b->buffered == 0)
            b->region_pts = pts;
        memcpy(b->region + (size_t)b->buffered * fb, frames, (size_t)n * fb);
        b->buffered += n;
        return 0;
    }
    while (done < n) {
        int64_t filled = b->buffered % seg;
        if (filled == 0 && new_segment(b, pts + done * step_num / step_den) != 0)
            return -1;
        int64_t take = seg - filled < n - done ? seg - filled : n - done;
        memcpy(at(b, b->count - 1)->data + (size_t)filled * fb, frames + (size_t)done * fb, (size_t)take * fb);
        b->buffered += take;
        done += take;
    }
    return 0;
}

uint8_t *sb_push_one(stream_buffer *b, int64_t pts)
{
    if (region_mode(b)) {
        if (region_reserve(b, (size_t)(b->buffered + 1) * b->frame_bytes) != 0)
            return NULL;
        if (b->buffered == 0)
            b->region_pts = pts;
        return b->region + (size_t)b->buffered++ * b->frame_bytes;
    }
    int64_t filled = b->buffered % b->seg_frames;
    if (filled == 0 && new_segment(b, pts) != 0)
        return NULL;
    b->buffered++;
    return at(b, b->count - 1)->data + (size_t)filled * b->frame_bytes;
}

int sb_ready(const stream_buffer *b)
{
    return b->frames_per_chunk < 0 ? b->buffered > 0 : b->buffered >= b->frames_per_chunk;
}

int64_t sb_peek(const stream_buffer *b, int64_t *pts)
{
    if (b->buffered == 0)
        return 0;
    if (region_mode(b)) {
        *pts = b->region_pts;
        return b->buffered;
    }
    *pts = at(b, 0)->pts;
    if (b->frames_per_chunk < 0)
        return b->buffered;
    return b->buffered < b->frames_per_chunk ? b->buffered : b->frames_per_chunk;
}

int sb_pop_copy(stream_buffer *b, uint8_t *dst)
{
    int64_t pts;
    int64_t n = sb_peek(b, &pts);
    int ret = 0;
    if (region_mode(b)) {
        if (dst != NULL && n > 0)
            memcpy(dst, b->region, (size_t)n * b->frame_bytes);
        b->buffered = 0;
        return 0;
    }
    while (n > 0) {
        int64_t k = n < b->seg_frames ? n : b->seg_frames;
        size_t nbytes = (size_t)k * b->frame_bytes;
        if (dst != NULL) {
            if (b->mem == NULL)
                memcpy(dst, at(b, 0)->data, nbytes);
            else if (b->mem->copy(b->mem->user, dst, at(b, 0)->data, nbytes) != 0)
                ret = -1;
            dst += nbytes;
        }
        ring_pop(b);
        b->buffered -= k;
        n -= k;
    }
    return ret;
}

int sb_can_lend(const stream_buffer *b)
{
    return b->mem == NULL && b->buffered > 0 && (region_mode(b) || b->pool != NULL);
}

uint8_t *sb_pop_take(stream_buffer *b, int64_t *frames, size_t *bytes, sb_release_fn *release, void **user)
{
    int64_t pts;
    int64_t n = sb_peek(b, &pts);
    uint8_t *block;
    if (!sb_can_lend(b))
        return NULL;
    if (region_mode(b)) {
        /* the region leaves whole; the next frame maps a new one */
        region_lease *l = malloc(sizeof *l);
        if (l == NULL)
            return NULL;
        l->bytes = b->region_cap;
        block = b->region;
        *bytes = b->region_cap;
        *release = region_release;
        *user = l;
        b->region = NULL;
        b->region_cap = 0;
    } else {
        /* chunked: the oldest segment is the whole chunk, full or the last partial one */
        block = at(b, 0)->data;
        b->head = (b->head + 1) % b->ring_cap;
        b->count--;
        *bytes = sb_pool_block_bytes(b->pool);
        *release = sb_pool_put;
        *user = b->pool;
    }
    b->buffered -= n;
    *frames = n;
    return block;
}
