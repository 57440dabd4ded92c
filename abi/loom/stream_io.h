/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loom/stream_io.h - the callback table a host hands to audio.stream_reader
** (loom_object_options.callbacks, callbacks_name LOOM_STREAM_IO_V1) to read
** media from a file-like object of its own instead of a path or a buffer:
** torchaudio's StreamReader(src=fileobj), which calls src.read(n) and, when
** present, src.seek(offset, whence).
**
** The table and `user` are borrowed: they must stay valid until the reader
** object is freed. The callbacks run on the thread of the reader's method
** calls (one at a time per reader). Frozen for ABI major 1.
*/
#ifndef LOOM_STREAM_IO_H
#define LOOM_STREAM_IO_H

#include <stdint.h>

#define LOOM_STREAM_IO_V1 "loom.stream_io.v1"

/* seek's whence beyond SEEK_SET (0), SEEK_CUR (1) and SEEK_END (2): return
** the total size in bytes, or a negative value when it is unknown. */
#define LOOM_STREAM_IO_SIZE 0x10000

typedef struct loom_stream_io {
    uint32_t struct_size;       /* sizeof(loom_stream_io) */
    void *user;                 /* passed to both callbacks */
    /* Copy up to `size` bytes into buf: the number copied, 0 at the end of
    ** the data, or a negative value on error (the reader then fails naming
    ** the callback and the value). */
    int64_t (*read)(void *user, uint8_t *buf, int64_t size);
    /* Optional (NULL: the source is not seekable, as a pipe): move to
    ** offset from whence and return the new position, or LOOM_STREAM_IO_SIZE's
    ** answer; negative on error. */
    int64_t (*seek)(void *user, int64_t offset, int whence);
} loom_stream_io;

#endif /* LOOM_STREAM_IO_H */
