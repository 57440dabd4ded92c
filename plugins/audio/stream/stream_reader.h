/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_reader.h - the media reader behind audio.stream_reader and
** audio.stream_decode, on FFmpeg's libraries, with torchaudio
** StreamReader's model (torchaudio 2.8, src/libtorchaudio/ffmpeg/
** stream_reader):
**   - one demuxer (avformat_open_input + avformat_find_stream_info) over a
**     path or URL, a memory buffer, or a host's read/seek callbacks;
**   - per source stream with outputs, one decoder; per output stream, one
**     libavfilter graph `abuffer|buffer -> filter_desc -> abuffersink|
**     buffersink` and one chunk buffer (stream_buffer.h);
**   - process_packet: one demuxed packet through its decoder and every
**     graph fed by it; at the end of the input every decoder and graph is
**     drained and 1 is returned;
**   - seek: av_seek_frame(-1, t, BACKWARD [| ANY]) then every decoder,
**     graph and buffer flushed; `precise` then discards decoded frames
**     whose pts is before t.
** No loom types here: errors are written to the reader's message (or the
** caller's for open) and returned as -1, so that the pack, the tests and
** the fuzz target share it.
*/
#ifndef LOOM_AUDIO_STREAM_READER_H
#define LOOM_AUDIO_STREAM_READER_H

#include <stddef.h>
#include <stdint.h>

#include "loom/stream_io.h"
#include "stream_buffer.h"

#define SR_ERR_LEN 512

typedef struct sr_reader sr_reader;

typedef struct sr_source {
    const char *url;            /* path or URL ("-": standard input), or NULL */
    const uint8_t *data;        /* or the bytes of a file, borrowed until sr_close */
    size_t size;
    const loom_stream_io *io;   /* or the host's callbacks, borrowed until sr_close */
    const char *format;         /* demuxer / device (-f), NULL: probe */
    const char *option;         /* "key=value;key=value" for the demuxer, or NULL */
    int64_t buffer_size;        /* AVIO buffer of data and io sources, bytes */
} sr_source;

int sr_open(sr_reader **out, const sr_source *src, char err[SR_ERR_LEN]);
void sr_close(sr_reader *r);
/* The last error of r. */
const char *sr_error(const sr_reader *r);
/* Called for every dropped chunk (torchaudio drops silently; loom logs). */
void sr_set_log(sr_reader *r, void (*log)(void *user, const char *msg), void *user);

/* ---- metadata ---- */
typedef struct sr_src_info {
    const char *media_type;     /* "audio", "video", "subtitle", "data", "attachment", "unknown" */
    const char *codec;          /* short name ("aac"), "" when unknown */
    const char *codec_long_name;
    const char *format;         /* sample or pixel format name ("fltp", "yuv420p"), "" if none */
    int64_t bit_rate, num_frames, bits_per_sample;
    double sample_rate;         /* audio; NaN otherwise */
    int64_t num_channels;       /* audio; 0 otherwise */
    int64_t width, height;      /* video; 0 otherwise */
    double frame_rate;          /* video; NaN otherwise */
} sr_src_info;
int sr_num_src_streams(const sr_reader *r);
int sr_src_info_get(sr_reader *r, int index, sr_src_info *out);
/* "key=value\n" lines of the container's metadata (malloc'd); NULL on OOM. */
char *sr_metadata(const sr_reader *r);
/* av_find_best_stream of the media type ("audio"/"video"), or -1. */
int sr_default_stream(const sr_reader *r, int video);

/* ---- output streams ---- */
/* hw_accel=cuda (NVDEC): what the cuda pack (stream_cuda.c) lends an output
** whose pictures stay on the GPU. The reader itself calls no CUDA API: FFmpeg
** decodes into CUDA frames (NV12, on the device's primary context, so the
** CUDA runtime sees the same memory), and these convert them into chunk
** buffers of device memory and copy chunks out. */
typedef struct sr_cuda_ops {
    sb_memory mem;              /* device memory; copy: device to device, finished on return */
    /* host -> device, finished on return: 0, or -1 */
    int (*to_device)(void *user, void *dst, const void *src, size_t nbytes);
    /* One NV12 picture (device planes y, uv with their pitches) to a
    ** [3, height, width] u8 row at dst (device): rgb != 0: RGB planes
    ** (BT.601, or BT.709 when bt709; limited range unless full_range);
    ** else Y, U, V planes, chroma repeated 2x2 (the cpu path's yuv420p
    ** layout). Finished on return (the decoder reuses its surface): 0, or -1. */
    int (*nv12)(void *user, uint8_t *dst, const uint8_t *y, int y_pitch, const uint8_t *uv, int uv_pitch, int width,
                int height, int rgb, int bt709, int full_range);
    int device_id;              /* the CUDA device (ordinal) the reader is on */
} sr_cuda_ops;

typedef struct sr_output_config {
    int video;                  /* 0: audio, 1: video */
    int64_t frames_per_chunk;   /* > 0, or -1: everything buffered at pop */
    int64_t buffer_chunk_size;  /* > 0, or -1: unbounded */
    int stream_index;           /* < 0: the default stream of the type */
    const char *decoder;        /* NULL: the codec's default */
    const char *decoder_option; /* "key=value;..." or NULL */
    const char *filter_desc;    /* NULL: anull / null */
    const char *hw_accel;       /* video: NULL or "cuda" */
    const sr_cuda_ops *cuda;    /* hw_accel=cuda: the cuda pack's; NULL on the cpu (then refused) */
} sr_output_config;
/* The output's index, or -1. */
int sr_add_output(sr_reader *r, const sr_output_config *cfg);
int sr_num_outputs(const sr_reader *r);

/* torchaudio's basic-stream filter descriptions (NULL/<=0 members omitted;
** "" when nothing is asked). */
void sr_audio_filter_desc(char *buf, size_t n, int64_t sample_rate, const char *sample_fmt, int64_t num_channels);
void sr_video_filter_desc(char *buf, size_t n, double frame_rate, int64_t width, int64_t height,
                          const char *pix_fmt);

typedef struct sr_out_info {
    int source_index;
    const char *filter_description;
    int video;
    int dtype;                  /* LOOM_DTYPE_* of the chunks */
    int ndim_frame;             /* 1: [channels]; 3: [C, H, W] */
    int64_t frame_shape[3];
    double time_base;           /* seconds per pts unit */
    int64_t dropped_chunks, dropped_frames;
    int64_t frames_per_chunk, buffer_chunk_size;
    int on_cuda;                /* hw_accel=cuda: chunks in device memory */
} sr_out_info;
int sr_out_info_get(const sr_reader *r, int index, sr_out_info *out);

/* ---- reading ---- */
/* 0: a packet was processed; 1: the input ended (and was drained); -1. */
int sr_process_packet(sr_reader *r);
int sr_process_all_packets(sr_reader *r);
/* Process packets until every output is ready or the input ends: 0, 1, -1. */
int sr_fill_buffer(sr_reader *r);
int sr_is_buffer_ready(const sr_reader *r);
int sr_eof(const sr_reader *r);
/* mode: 0 key, 1 any, 2 precise (torchaudio's numbering). */
int sr_seek(sr_reader *r, double timestamp, int mode);
/* The next chunk of output `index`: its frames (0: none) and pts in
** seconds; then sr_pop_chunk copies it to dst (frames * frame bytes; device
** memory for an on_cuda output): 0, or -1 when that copy failed. */
int64_t sr_peek_chunk(const sr_reader *r, int index, double *pts);
int sr_pop_chunk(sr_reader *r, int index, void *dst);
/* The oldest chunk of output `index` without a copy, when its buffer can
** lend it (host outputs): its memory, now the caller's, to hand back with
** release(*user, memory); *frames frames, *bytes the memory's size. NULL
** when this output cannot lend (pop with sr_pop_chunk). */
uint8_t *sr_take_chunk(sr_reader *r, int index, int64_t *frames, size_t *bytes, sb_release_fn *release, void **user);

#endif /* LOOM_AUDIO_STREAM_READER_H */
