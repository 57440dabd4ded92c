/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_buffer.c - the chunk buffer of an output stream (stream_buffer.h).
** Chunks are whole allocations of frames_per_chunk frames kept in a ring,
** so a pop hands out the oldest one without moving the others.
*/
#include "stream_buffer.h"

#include <stdlib.h>
#include <string.h>

void sb_init(stream_buffer *b, int64_t frames_per_chunk, int64_t max_chunks, size_t frame_bytes)
{
    memset(b, 0, sizeof *b);
    b->frames_per_chunk = frames_per_chunk;
    b->max_chunks = max_chunks;
    b->frame_bytes = frame_bytes;
}

static sb_chunk *at(const stream_buffer *b, int64_t i) { return &b->ring[(b->head + i) % b->ring_cap]; }

void sb_flush(stream_buffer *b)
{
    for (int64_t i = 0; i < b->count; i++)
        free(at(b, i)->data);
    b->head = b->count = b->buffered = 0;
    b->unchunked_cap = 0;
}

void sb_free(stream_buffer *b)
{
    sb_flush(b);
    free(b->ring);
    b->ring = NULL;
    b->ring_cap = 0;
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
    b->head = (b->head + 1) % b->ring_cap;
    b->count--;
}

static int push_unchunked(stream_buffer *b, const uint8_t *frames, int64_t n, int64_t pts)
{
    size_t need = (size_t)(b->buffered + n) * b->frame_bytes;
    if (b->count == 0) {
        if (ring_push(b, NULL, pts) != 0)
            return -1;
        b->unchunked_cap = 0;
    }
    sb_chunk *c = at(b, 0);
    if (need > (size_t)b->unchunked_cap) {
        size_t cap = need > 2 * (size_t)b->unchunked_cap ? need : 2 * (size_t)b->unchunked_cap;
        uint8_t *d = realloc(c->data, cap);
        if (d == NULL)
            return -1;
        c->data = d;
        b->unchunked_cap = (int64_t)cap;
    }
    memcpy(c->data + (size_t)b->buffered * b->frame_bytes, frames, (size_t)n * b->frame_bytes);
    b->buffered += n;
    return 0;
}

int sb_push(stream_buffer *b, const uint8_t *frames, int64_t n, int64_t pts, int64_t step_num, int64_t step_den)
{
    if (n <= 0)
        return 0;
    if (b->frames_per_chunk < 0)
        return push_unchunked(b, frames, n, pts);
    const int64_t fpc = b->frames_per_chunk;
    const size_t fb = b->frame_bytes;
    int64_t done = 0;
    /* 1. top up the last, partly filled chunk */
    int64_t filled = b->buffered % fpc;
    if (filled != 0 && b->count > 0) {
        int64_t take = fpc - filled < n ? fpc - filled : n;
        memcpy(at(b, b->count - 1)->data + (size_t)filled * fb, frames, (size_t)take * fb);
        b->buffered += take;
        done = take;
    }
    /* 2. new chunks for the rest, dropping the oldest past max_chunks */
    while (done < n) {
        int64_t take = n - done < fpc ? n - done : fpc;
        uint8_t *d = malloc((size_t)fpc * fb);
        if (d == NULL)
            return -1;
        memcpy(d, frames + (size_t)done * fb, (size_t)take * fb);
        if (ring_push(b, d, pts + done * step_num / step_den) != 0) {
            free(d);
            return -1;
        }
        b->buffered += take;
        done += take;
        if (b->max_chunks > 0 && b->count > b->max_chunks) {
            free(at(b, 0)->data);
            ring_pop(b);
            b->buffered -= fpc;     /* the oldest chunk is always full */
            b->dropped_chunks++;
            b->dropped_frames += fpc;
            if (b->on_drop != NULL)
                b->on_drop(b->drop_user, b->dropped_chunks);
        }
    }
    return 0;
}

int sb_ready(const stream_buffer *b)
{
    return b->frames_per_chunk < 0 ? b->buffered > 0 : b->buffered >= b->frames_per_chunk;
}

int64_t sb_peek(const stream_buffer *b, int64_t *pts)
{
    if (b->buffered == 0)
        return 0;
    *pts = at(b, 0)->pts;
    if (b->frames_per_chunk < 0)
        return b->buffered;
    return b->buffered < b->frames_per_chunk ? b->buffered : b->frames_per_chunk;
}

void sb_pop_copy(stream_buffer *b, uint8_t *dst)
{
    int64_t pts;
    int64_t n = sb_peek(b, &pts);
    if (n == 0)
        return;
    sb_chunk *c = at(b, 0);
    if (dst != NULL)
        memcpy(dst, c->data, (size_t)n * b->frame_bytes);
    free(c->data);
    ring_pop(b);
    b->buffered -= n;
    if (b->frames_per_chunk < 0)
        b->unchunked_cap = 0;
}
