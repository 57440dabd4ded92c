/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pool.h - the chunk blocks of one output stream of
** audio.stream_reader: fixed-size host blocks that the chunk buffer fills
** and that pop_chunk lends to the caller as the chunk tensor's own memory
** (host->adopt_output), with no copy.
** A block is in exactly one place: idle in the pool, in the buffer (being
** filled or waiting to be popped), or held by a caller's tensor. So the
** decoder never writes into memory a caller still holds: a popped block
** comes back to the pool only when its tensor is freed.
** The pool is refcounted: the buffer holds one reference and every block
** out of the pool one more, so a caller may free a chunk on any thread,
** after the reader was destroyed. Blocks are 64-byte aligned
** (LOOM_ADOPT_ALIGNMENT).
*/
#ifndef LOOM_AUDIO_STREAM_POOL_H
#define LOOM_AUDIO_STREAM_POOL_H

#include <stddef.h>

typedef struct sb_pool sb_pool;

/* A pool of blocks of block_bytes; NULL out of memory. */
sb_pool *sb_pool_new(size_t block_bytes);
/* The owner's reference goes: idle blocks are freed now, the pool itself
** when the last block out of it comes back. */
void sb_pool_close(sb_pool *p);
/* A block (an idle one, else a new one); NULL out of memory. */
void *sb_pool_get(sb_pool *p);
/* Give a block back (user is the pool): kept idle for reuse, up to a few,
** else freed. Thread-safe; the signature of loom_buffer_release. */
void sb_pool_put(void *user, void *block);
size_t sb_pool_block_bytes(const sb_pool *p);

#endif /* LOOM_AUDIO_STREAM_POOL_H */
