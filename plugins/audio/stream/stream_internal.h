/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_internal.h - the state shared by the files of the reader
** (stream_reader.c: demuxing and decoding; stream_output.c: filter graphs
** and the conversion of filtered frames to chunk rows; stream_avio.c: the
** AVIO contexts of memory and callback sources, and of the writer's memory
** destination; stream_graph.c: option lists and graphs, the writer's too).
*/
#ifndef LOOM_AUDIO_STREAM_INTERNAL_H
#define LOOM_AUDIO_STREAM_INTERNAL_H

#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>

#include "stream_buffer.h"
#include "stream_reader.h"

typedef struct sr_output {
    struct sr_reader *owner;
    int index;
    int source_index;
    int video;
    char *filter_desc;
    AVFilterGraph *graph;
    AVFilterContext *src, *sink;
    AVRational out_tb;
    int out_format;             /* AVSampleFormat / AVPixelFormat of the sink */
    int dtype;                  /* LOOM_DTYPE_* */
    int64_t shape[3];           /* of one frame: [channels] or [C, H, W] */
    int ndim;
    int configured;             /* the sink's format is known (first frame filtered) */
    stream_buffer buf;
    uint8_t *rows;              /* conversion scratch (audio; video: the slice) */
    void (*deinterleave3)(const uint8_t *, size_t, uint8_t *, uint8_t *, uint8_t *);  /* stream_pixels.h */
    size_t rows_cap;
    int64_t frames_per_chunk, buffer_chunk_size;
    /* rgb24 / bgr24 of yuv420p pictures at their own size: the graph stops
    ** before the format conversion (graph_desc: filter_desc without its
    ** final format=pix_fmts=...), and the reader runs the same swscale
    ** conversion itself, 16 rows at a time into an L2-sized slice that is
    ** split into the chunk's planes at once, instead of a whole packed
    ** frame written to memory and read back */
    char *graph_desc;           /* NULL: filter_desc is the whole graph */
    int direct_fmt;             /* AV_PIX_FMT_RGB24 / BGR24 while converting here, else 0 */
    int sink_fmt;               /* the graph's pixel format in that case */
    struct SwsContext *sws;
    int sws_space, sws_range;   /* the colour details sws was last given */
    /* hw_accel=cuda: no graph; CUDA frames converted by cuda.nv12 into a
    ** buffer of device memory (cuda.mem) */
    int on_cuda;
    int cuda_rgb;               /* rgb24, else yuv420p planes */
    sr_cuda_ops cuda;
} sr_output;

typedef struct sr_decoder {
    AVCodecContext *ctx;
    int64_t discard_before_pts; /* stream time base; <= 0: keep every frame */
    int hw_cuda;
} sr_decoder;

struct sr_reader {
    AVFormatContext *fmt;
    AVIOContext *avio;          /* ours for data and io sources, else NULL */
    void *avio_opaque;
    sr_decoder *decoders;       /* one per source stream, ctx NULL when unused */
    sr_output **outs;           /* n_outs, each its own allocation (the drop hook keeps a pointer) */
    int n_outs;
    AVPacket *pkt;
    AVFrame *frame, *filtered;
    int eof;
    char err[SR_ERR_LEN];
    void (*log)(void *user, const char *msg);
    void *log_user;
};

int sr_fail(sr_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *sr_averr(int code, char buf[AV_ERROR_MAX_STRING_SIZE]);

/* stream_graph.c: option lists ("k=v;k=v") into a dictionary (-1 with
** err naming `what` when malformed); a key left unused by FFmpeg is an
** error naming `what` and what it is not an option `of`. */
int stream_parse_options(AVDictionary **d, const char *s, const char *what, char *err, size_t errlen);
int stream_leftover_options(const AVDictionary *d, const char *what, const char *of, char *err, size_t errlen);
/* The ends and `desc` of graph g (threads set by the caller), configured:
** 0; -1 desc does not parse or configure (err says so, naming
** 'filter_desc'); -2 out of memory or bad source arguments. */
int stream_graph_build(AVFilterGraph *g, int video, const char *src_args, const char *desc, AVFilterContext **src,
                       AVFilterContext **sink, char *err, size_t errlen);

/* stream_avio.c: an AVIOContext over memory or the host's callbacks. */
AVIOContext *sr_avio_memory(const uint8_t *data, size_t size, int64_t buffer_size, void **opaque);
AVIOContext *sr_avio_callbacks(const loom_stream_io *io, int64_t buffer_size, void **opaque);
void sr_avio_free(AVIOContext **avio, void **opaque);
/* The writer's memory destination: a seekable AVIOContext over a growing
** buffer (its bytes through sw_mem_sink_bytes until it is freed). */
typedef struct sw_mem_sink sw_mem_sink;
AVIOContext *sw_avio_memory_sink(sw_mem_sink **sink);
const uint8_t *sw_mem_sink_bytes(const sw_mem_sink *m, size_t *n);
int sw_mem_sink_failed(const sw_mem_sink *m);
void sw_avio_memory_sink_free(AVIOContext **avio, sw_mem_sink **sink);

/* stream_output.c */
int sr_output_build_graph(sr_reader *r, sr_output *o, const AVStream *st, const AVCodecContext *dec);
/* Set graph_desc when filter_desc ends in a plain format=pix_fmts=rgb24 or
** bgr24 and scales nothing (see direct_fmt). */
void sr_output_split_format(sr_output *o);
/* hw_accel=cuda: set o's format from filter_desc (null, format=pix_fmts=
** rgb24 or yuv420p: frames stay on the GPU, so nothing else applies) and
** its [3, H, W] buffer in device memory. */
int sr_output_cuda_configure(sr_reader *r, sr_output *o, const AVStream *st, const AVCodecContext *dec);
/* Send frame (NULL: drain) through o's graph into its buffer. */
int sr_output_send(sr_reader *r, sr_output *o, AVFrame *frame);
void sr_output_free(sr_output *o);

/* The decoder's (video: CUDA hw frames) sample/pixel format name. */
int sr_dtype_of_sample_fmt(int fmt);

#endif /* LOOM_AUDIO_STREAM_INTERNAL_H */
