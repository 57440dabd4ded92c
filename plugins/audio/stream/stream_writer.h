/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_writer.h - the media writer behind audio.stream_writer, on
** FFmpeg's libraries, with torchaudio StreamWriter's model (torchaudio 2.8,
** src/libtorchaudio/ffmpeg/stream_writer: encode_process.cpp):
**   - one muxer (avformat_alloc_output_context2) writing to a path or URL
**     (the format guessed from its name unless given) or to memory (a
**     growing buffer behind AVIO write/seek callbacks; `format` required);
**   - per stream: the chunks, [frames, channels] samples or [frames, C, H,
**     W] u8 pictures, cut into source frames (audio: the encoder's frame
**     size, 4096 samples when it takes any), a libavfilter graph
**     `abuffer|buffer -> [filter_desc,] conversion -> abuffersink|
**     buffersink` and one encoder. Audio graphs end in
**     `asetnsamples=n=<frame_size>:p=0` when the encoder needs frames of a
**     fixed size (AAC: 1024, Opus: 960), as torchaudio's do;
**   - the encoder's defaults are torchaudio's: the container's default
**     codec, the encoder's first sample/pixel format, the source rate when
**     the encoder takes it (else its first supported one), one thread;
**   - pts: the source frames count from 0 in the source time base (1 /
**     sample_rate, 1 / frame_rate); a chunk's pts (seconds) moves the count
**     to round(pts / time base) (torchaudio's warning when it goes back is
**     logged);
**   - flush sends the end of stream through every graph and encoder; close
**     flushes what was not flushed, writes the trailer and closes the file.
** No loom types here: errors are written to the writer's message and
** returned as -1 (messages about an argument start with its name in quotes).
*/
#ifndef LOOM_AUDIO_STREAM_WRITER_H
#define LOOM_AUDIO_STREAM_WRITER_H

#include <stddef.h>
#include <stdint.h>

#define SW_ERR_LEN 512

typedef struct sw_writer sw_writer;

/* dst a path or URL, or NULL: write to memory (format must be given). */
int sw_create(sw_writer **out, const char *dst, const char *format, char err[SW_ERR_LEN]);
void sw_free(sw_writer *w);
const char *sw_error(const sw_writer *w);
void sw_set_log(sw_writer *w, void (*log)(void *user, const char *msg), void *user);

/* torchaudio's CodecConfig: unset members are <= 0 (bit_rate, gop_size:
** -1 unset), compression_level and max_b_frames -1, qscale NaN. */
typedef struct sw_codec_config {
    int64_t bit_rate;
    int compression_level;
    double qscale;
    int gop_size, max_b_frames;
} sw_codec_config;

typedef struct sw_audio_config {
    int sample_rate, num_channels;      /* of the chunks, > 0 */
    const char *format;                 /* the chunks' samples: u8 s16 s32 s64 flt dbl */
    const char *encoder;                /* NULL: the container's default audio codec */
    const char *encoder_option;         /* "key=value;..." or NULL */
    const char *encoder_format;         /* NULL: the encoder's first */
    int encoder_sample_rate;            /* <= 0: the source's (or the encoder's first supported) */
    int encoder_num_channels;           /* <= 0: the source's */
    const char *filter_desc;            /* NULL: none */
    sw_codec_config codec;
} sw_audio_config;

typedef struct sw_video_config {
    double frame_rate;                  /* of the chunks, > 0 */
    int width, height;                  /* > 0 */
    const char *format;                 /* the chunks' pictures: rgb24 bgr24 yuv444p yuv420p gray */
    const char *encoder, *encoder_option, *encoder_format;
    double encoder_frame_rate;          /* <= 0: the source's */
    int encoder_width, encoder_height;  /* <= 0: the source's */
    const char *filter_desc;
    const char *hw_accel;               /* NULL; "cuda" is refused in this build */
    sw_codec_config codec;
} sw_video_config;

/* The new stream's index, or -1. Before sw_open only. */
int sw_add_audio(sw_writer *w, const sw_audio_config *cfg);
int sw_add_video(sw_writer *w, const sw_video_config *cfg);
/* The container's tags, "key=value;key=value" (replaces earlier ones). */
int sw_set_metadata(sw_writer *w, const char *kv);
/* avio_open (files) and the header; option "key=value;..." for both. */
int sw_open(sw_writer *w, const char *option);

/* What stream i takes: video 0/1, the chunk's dtype (LOOM_DTYPE_*) and the
** shape of one frame ([channels] or [C, H, W]); -1 when i is not a stream. */
int sw_stream_shape(const sw_writer *w, int i, int *video, int *dtype, int64_t shape[3]);
int sw_num_streams(const sw_writer *w);
/* frames rows of the stream's frame shape at data; pts in seconds, NaN:
** continue from the previous chunk. */
int sw_write_audio(sw_writer *w, int i, const void *data, int64_t frames, double pts);
int sw_write_video(sw_writer *w, int i, const uint8_t *data, int64_t frames, double pts);
int sw_flush(sw_writer *w);
int sw_close(sw_writer *w);
int sw_is_open(const sw_writer *w);
int sw_is_closed(const sw_writer *w);

/* The bytes written to memory so far (complete after sw_close); NULL and 0
** for a path destination (*is_memory 0). */
const uint8_t *sw_bytes(const sw_writer *w, size_t *n, int *is_memory);

#endif /* LOOM_AUDIO_STREAM_WRITER_H */
