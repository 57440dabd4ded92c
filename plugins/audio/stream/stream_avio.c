/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_avio.c - AVIOContexts for the reader's two non-URL sources: a
** borrowed memory buffer (a u8 tensor or a named file's bytes) and the
** host's read/seek callbacks (loom/stream_io.h). Both answer AVSEEK_SIZE
** so that demuxers that need the size (MP4's moov at the end) work; a
** callback source without seek is a stream (a pipe), as FFmpeg's pipe:.
** And the writer's memory destination: a buffer that grows as the muxer
** writes, seekable (the WAV, FLAC and MP4 muxers go back to fill in sizes
** and indexes), so that its bytes equal those the muxer writes to a file.
*/
#include <errno.h>
#include <string.h>

#include <libavutil/mem.h>

#include "stream_internal.h"

typedef struct mem_src {
    const uint8_t *data;
    size_t size, pos;
} mem_src;

static int mem_read(void *opaque, uint8_t *buf, int n)
{
    mem_src *m = opaque;
    size_t left = m->size - m->pos;
    if (left == 0)
        return AVERROR_EOF;
    size_t k = (size_t)n < left ? (size_t)n : left;
    memcpy(buf, m->data + m->pos, k);
    m->pos += k;
    return (int)k;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
    mem_src *m = opaque;
    if (whence & AVSEEK_SIZE)
        return (int64_t)m->size;
    int64_t base = 0;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)m->pos; break;
    case SEEK_END: base = (int64_t)m->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base)
        return AVERROR(EINVAL);
    int64_t p = base + offset;
    if (p < 0 || p > (int64_t)m->size)
        return AVERROR(EINVAL);
    m->pos = (size_t)p;
    return p;
}

static AVIOContext *make(void *opaque, int64_t buffer_size, int (*rd)(void *, uint8_t *, int),
                         int64_t (*sk)(void *, int64_t, int))
{
    int bs = buffer_size > 0 && buffer_size < (1 << 26) ? (int)buffer_size : 4096;
    uint8_t *buf = av_malloc((size_t)bs);
    if (buf == NULL)
        return NULL;
    AVIOContext *a = avio_alloc_context(buf, bs, 0, opaque, rd, NULL, sk);
    if (a == NULL)
        av_free(buf);
    else if (sk == NULL)
        a->seekable = 0;
    return a;
}

AVIOContext *sr_avio_memory(const uint8_t *data, size_t size, int64_t buffer_size, void **opaque)
{
    mem_src *m = av_mallocz(sizeof *m);
    if (m == NULL)
        return NULL;
    m->data = data;
    m->size = size;
    AVIOContext *a = make(m, buffer_size, mem_read, mem_seek);
    if (a == NULL)
        av_free(m);
    else
        *opaque = m;
    return a;
}

typedef struct cb_src {
    const loom_stream_io *io;
} cb_src;

static int cb_read(void *opaque, uint8_t *buf, int n)
{
    cb_src *c = opaque;
    int64_t k = c->io->read(c->io->user, buf, n);
    if (k == 0)
        return AVERROR_EOF;
    if (k < 0 || k > n)     /* an error, or a callback that claims more than it was given room for */
        return AVERROR_EXTERNAL;
    return (int)k;
}

static int64_t cb_seek(void *opaque, int64_t offset, int whence)
{
    cb_src *c = opaque;
    if (whence & AVSEEK_SIZE) {
        int64_t s = c->io->seek(c->io->user, 0, LOOM_STREAM_IO_SIZE);
        return s < 0 ? AVERROR(ENOSYS) : s;
    }
    int64_t p = c->io->seek(c->io->user, offset, whence & ~AVSEEK_FORCE);
    return p < 0 ? AVERROR(EIO) : p;
}

AVIOContext *sr_avio_callbacks(const loom_stream_io *io, int64_t buffer_size, void **opaque)
{
    cb_src *c = av_mallocz(sizeof *c);
    if (c == NULL)
        return NULL;
    c->io = io;
    AVIOContext *a = make(c, buffer_size, cb_read, io->seek != NULL ? cb_seek : NULL);
    if (a == NULL)
        av_free(c);
    else
        *opaque = c;
    return a;
}

void sr_avio_free(AVIOContext **avio, void **opaque)
{
    if (*avio != NULL) {
        av_freep(&(*avio)->buffer);
        avio_context_free(avio);
    }
    av_freep(opaque);
}

/* ------------------------------------------------------ memory destination */

struct sw_mem_sink {
    uint8_t *data;
    size_t size, cap, pos;
    int failed;                 /* out of memory: the muxer is told, and the writer says so */
};

#if LIBAVFORMAT_VERSION_MAJOR >= 61
#define SW_WRITE_CONST const
#else
#define SW_WRITE_CONST
#endif

static int sink_write(void *opaque, SW_WRITE_CONST uint8_t *buf, int n)
{
    sw_mem_sink *m = opaque;
    if (n <= 0)
        return 0;
    size_t end = m->pos + (size_t)n;
    if (end > m->cap) {
        size_t cap = m->cap ? m->cap : 1 << 16;
        while (cap < end)
            cap *= 2;
        uint8_t *p = av_realloc(m->data, cap);
        if (p == NULL) {
            m->failed = 1;
            return AVERROR(ENOMEM);
        }
        m->data = p;
        m->cap = cap;
    }
    if (m->pos > m->size)       /* a seek past the end leaves zeros, as a file's hole reads */
        memset(m->data + m->size, 0, m->pos - m->size);
    memcpy(m->data + m->pos, buf, (size_t)n);
    m->pos = end;
    if (end > m->size)
        m->size = end;
    return n;
}

static int64_t sink_seek(void *opaque, int64_t offset, int whence)
{
    sw_mem_sink *m = opaque;
    if (whence & AVSEEK_SIZE)
        return (int64_t)m->size;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)m->pos; break;
    case SEEK_END: base = (int64_t)m->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base || base + offset < 0 || base + offset > (int64_t)1 << 40)
        return AVERROR(EINVAL);
    m->pos = (size_t)(base + offset);
    return (int64_t)m->pos;
}

AVIOContext *sw_avio_memory_sink(sw_mem_sink **sink)
{
    sw_mem_sink *m = av_mallocz(sizeof *m);
    if (m == NULL)
        return NULL;
    const int bs = 1 << 16;
    uint8_t *buf = av_malloc(bs);
    AVIOContext *a = buf != NULL ? avio_alloc_context(buf, bs, 1, m, NULL, sink_write, sink_seek) : NULL;
    if (a == NULL) {
        av_free(buf);
        av_free(m);
        return NULL;
    }
    *sink = m;
    return a;
}

const uint8_t *sw_mem_sink_bytes(const sw_mem_sink *m, size_t *n)
{
    *n = m->size;
    return m->data;
}

int sw_mem_sink_failed(const sw_mem_sink *m) { return m->failed; }

void sw_avio_memory_sink_free(AVIOContext **avio, sw_mem_sink **sink)
{
    if (*avio != NULL) {
        av_freep(&(*avio)->buffer);
        avio_context_free(avio);
    }
    if (*sink != NULL) {
        av_freep(&(*sink)->data);
        av_freep(sink);
    }
}
