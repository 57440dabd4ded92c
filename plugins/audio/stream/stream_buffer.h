/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_buffer.h - the chunk buffer of one output stream of
** audio.stream_reader, with torchaudio StreamReader's semantics
** (ChunkedBuffer / UnchunkedBuffer):
**   - frames_per_chunk > 0: frames are packed into chunks of exactly that
**     many frames; a chunk is ready once it is full; the last one may be
**     short when popped. Each chunk keeps the presentation timestamp of its
**     first frame.
**   - buffer_chunk_size > 0: when more chunks than that are buffered, the
**     oldest is dropped (torchaudio's policy); every drop is counted and
**     reported through the drop hook. -1: never drop (unbounded).
**   - frames_per_chunk == -1: every buffered frame is popped at once, with
**     the timestamp of the first.
** A "frame" is one row of the chunk: a sample of every channel (audio) or
** one picture [C, H, W] (video), frame_bytes bytes.
** Host memory: chunked, each chunk is a block of the output's pool
** (stream_pool.h); unchunked, the frames are one mapped region that grows
** in place (mremap: no copy, no page touched twice). Either way a pop can
** lend the chunk's memory itself to the caller (sb_pop_take), which
** pop_chunk and stream_decode adopt as the output tensor. Or, with `mem`
** set, the memory it allocates (hw_accel=cuda: device memory; nothing here
** reads it: sb_push is then not used, sb_push_one hands out device
** addresses and pops copy through mem->copy).
*/
#ifndef LOOM_AUDIO_STREAM_BUFFER_H
#define LOOM_AUDIO_STREAM_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "stream_pool.h"

typedef struct sb_chunk {
    uint8_t *data;              /* seg_frames * frame_bytes */
    int64_t pts;                /* of the first frame, in the stream's output time base */
} sb_chunk;

typedef struct sb_memory {
    void *(*alloc)(void *user, size_t nbytes);             /* NULL: out of memory */
    void (*release)(void *user, void *p);
    int (*copy)(void *user, void *dst, const void *src, size_t nbytes);   /* 0, or -1 */
    void *user;
} sb_memory;

typedef struct stream_buffer {
    int64_t frames_per_chunk;   /* > 0, or -1: unchunked */
    int64_t max_chunks;         /* > 0, or -1: unbounded */
    size_t frame_bytes;
    int64_t seg_frames;         /* frames of one allocation: frames_per_chunk, or (unchunked) ~4 MB */
    sb_chunk *ring;             /* segments head..head+count-1 (mod cap), all full but the last */
    int64_t ring_cap, head, count;
    int64_t buffered;           /* frames held */
    int64_t dropped_chunks, dropped_frames;
    void (*on_drop)(void *user, int64_t dropped_chunks);
    void *drop_user;
    const sb_memory *mem;       /* NULL: host memory */
    sb_pool *pool;              /* host and chunked: the segments' blocks, made with the first */
    uint8_t *region;            /* host and unchunked: the buffered frames, mapped, region_cap bytes */
    size_t region_cap;
    int64_t region_pts;         /* of its first frame */
} stream_buffer;

/* Gives lent memory back (sb_pop_take); the signature of loom_buffer_release. */
typedef void (*sb_release_fn)(void *user, void *block);

/* mem: NULL (host memory) or the segments' allocator, borrowed. */
void sb_init(stream_buffer *b, int64_t frames_per_chunk, int64_t max_chunks, size_t frame_bytes,
             const sb_memory *mem);
void sb_free(stream_buffer *b);
/* Forget every buffered frame (a seek); the drop counters stay. */
void sb_flush(stream_buffer *b);
/* Append n frames (n * frame_bytes bytes) whose first has pts; the frame i
** has pts + i * pts_step_num / pts_step_den. 0, or -1 out of memory. */
int sb_push(stream_buffer *b, const uint8_t *frames, int64_t n, int64_t pts, int64_t pts_step_num,
            int64_t pts_step_den);
/* Room for one frame with this pts, counted as buffered: the caller writes
** its frame_bytes there (a converter writing in place); NULL out of memory. */
uint8_t *sb_push_one(stream_buffer *b, int64_t pts);
/* torchaudio's is_ready: a full chunk is buffered (unchunked: any frame). */
int sb_ready(const stream_buffer *b);
/* The oldest chunk: *frames frames (0: none buffered) copied to dst by
** sb_pop_copy; sb_peek gives the size first so that the caller can
** allocate. */
int64_t sb_peek(const stream_buffer *b, int64_t *pts);
/* 0, or -1 when mem->copy failed (the chunk is popped all the same). */
int sb_pop_copy(stream_buffer *b, uint8_t *dst);
/* True when the oldest chunk can leave as its own memory (sb_pop_take):
** a host buffer holding a chunk. */
int sb_can_lend(const stream_buffer *b);
/* Pop the oldest chunk without a copy: its memory (*frames frames written
** from its start, pts as sb_peek says; 64-byte aligned), now the caller's,
** to give back with release(*user, memory) once nothing reads it, from any
** thread. *bytes is the memory's size. NULL out of memory, or when not
** sb_can_lend. */
uint8_t *sb_pop_take(stream_buffer *b, int64_t *frames, size_t *bytes, sb_release_fn *release, void **user);

#endif /* LOOM_AUDIO_STREAM_BUFFER_H */
