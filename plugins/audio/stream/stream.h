/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream.h - the stream module of audio.so: torchaudio's StreamReader on
** FFmpeg's libraries (libavformat, libavcodec, libavfilter, libavdevice).
**   audio.stream_reader           the object class: one opened source
**   audio.stream_reader_*         its methods (torchaudio's names)
**   audio.stream_decode           one stream of a source to one tensor
**   audio.stream_writer           torchaudio's StreamWriter: encode and mux
**                                 chunks into a file or memory
**   audio.stream_writer_*         its methods
** Sources: `src` a path or URL ("-": standard input), `format` the demuxer
** or input device (-f: lavfi, alsa, v4l2...), `option` its options as
** "key=value;key=value"; instead of `src`, a u8 tensor named "src"
** (loom_object_options.tensors: the bytes of a file), a file named "src"
** (loom_object_options.files) or read/seek callbacks (LOOM_STREAM_IO_V1,
** loom/stream_io.h).
*/
#ifndef LOOM_AUDIO_STREAM_H
#define LOOM_AUDIO_STREAM_H

#include "pack.h"

#define AUDIO_STREAM_READER_CLASS "audio.stream_reader"

/* StreamReader(src, format=None, option=None, buffer_size=4096) */
#define AUDIO_SR_CLASS_ATTRS(A, op)                                                                            \
    A(op, src, STRING, LOOM_DEFAULT_NONE, 0, "path or URL ('-': stdin); or a tensor, file or callbacks named src", ) \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "demuxer or input device (ffmpeg -f): lavfi, alsa, v4l2, ...", ) \
    A(op, option, STRING, LOOM_DEFAULT_NONE, 0, "demuxer / device options, key=value;key=value", )             \
    A(op, buffer_size, INT, LOOM_DEFAULT_INT(4096), LOOM_ATTR_POSITIVE, "bytes read at a time from memory or callbacks", )
PK_ATTR_ENUM(audio_sr_class, AUDIO_SR_CLASS_ATTRS);

/* The attributes every add_*_stream shares. */
#define AUDIO_SR_OUT_COMMON(A, op)                                                                             \
    A(op, frames_per_chunk, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "frames of a chunk; -1: all buffered frames", ) \
    A(op, buffer_chunk_size, INT, LOOM_DEFAULT_INT(3), 0, "chunks kept; beyond that the oldest is dropped; -1: unbounded", ) \
    A(op, stream_index, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "source stream (default: the best one of the type)", ) \
    A(op, decoder, STRING, LOOM_DEFAULT_NONE, 0, "decoder name (default: the codec's)", )                      \
    A(op, decoder_option, STRING, LOOM_DEFAULT_NONE, 0, "decoder options, key=value;key=value (threads=2, ...)", )

#define AUDIO_SR_ADD_AUDIO_ATTRS(A, op)                                                                        \
    AUDIO_SR_OUT_COMMON(A, op)                                                                                 \
    A(op, filter_desc, STRING, LOOM_DEFAULT_NONE, 0, "libavfilter graph (default anull)", )
PK_ATTR_ENUM(audio_sr_add_audio, AUDIO_SR_ADD_AUDIO_ATTRS);

#define AUDIO_SR_ADD_BASIC_AUDIO_ATTRS(A, op)                                                                  \
    AUDIO_SR_OUT_COMMON(A, op)                                                                                 \
    A(op, format, STRING, LOOM_DEFAULT_STRING("fltp"), 0, "sample format: u8p s16p s32p s64p fltp dblp (u8 ... f64)", ) \
    A(op, sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "resample to this rate, Hz", )              \
    A(op, num_channels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "mix to this many channels", )
PK_ATTR_ENUM(audio_sr_add_basic_audio, AUDIO_SR_ADD_BASIC_AUDIO_ATTRS);

#define AUDIO_SR_ADD_VIDEO_ATTRS(A, op)                                                                        \
    AUDIO_SR_OUT_COMMON(A, op)                                                                                 \
    A(op, filter_desc, STRING, LOOM_DEFAULT_NONE, 0, "libavfilter graph (default null)", )                     \
    A(op, hw_accel, STRING, LOOM_DEFAULT_NONE, 0, "cuda: decode on NVDEC", )
PK_ATTR_ENUM(audio_sr_add_video, AUDIO_SR_ADD_VIDEO_ATTRS);

#define AUDIO_SR_ADD_BASIC_VIDEO_ATTRS(A, op)                                                                  \
    AUDIO_SR_OUT_COMMON(A, op)                                                                                 \
    A(op, format, STRING, LOOM_DEFAULT_STRING("rgb24"), 0, "pixel format: rgb24 bgr24 yuv420p yuv444p gray", ) \
    A(op, frame_rate, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "change the frame rate (fps filter)", )   \
    A(op, width, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "scale to this width", )                          \
    A(op, height, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "scale to this height", )                        \
    A(op, hw_accel, STRING, LOOM_DEFAULT_NONE, 0, "cuda: decode on NVDEC", )
PK_ATTR_ENUM(audio_sr_add_basic_video, AUDIO_SR_ADD_BASIC_VIDEO_ATTRS);

#define AUDIO_SR_INDEX_ATTRS(A, op) \
    A(op, i, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "stream index", )
PK_ATTR_ENUM(audio_sr_index, AUDIO_SR_INDEX_ATTRS);

#define AUDIO_SR_SEEK_ATTRS(A, op)                                                                             \
    A(op, timestamp, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG | LOOM_ATTR_FINITE, "seconds", ) \
    A(op, mode, STRING, LOOM_DEFAULT_STRING("precise"), 0, "precise, key or any", )
PK_ATTR_ENUM(audio_sr_seek, AUDIO_SR_SEEK_ATTRS);

#define AUDIO_SR_POP_ATTRS(A, op) \
    A(op, output, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "output stream, in the order added", )
PK_ATTR_ENUM(audio_sr_pop, AUDIO_SR_POP_ATTRS);

/* audio.stream_decode: the class's source attributes, one output stream's
** options (audio: add_basic_audio_stream's, video: add_basic_video_stream's),
** everything decoded to one tensor. */
#define AUDIO_STREAM_DECODE_ATTRS(A, op)                                                                       \
    A(op, src, STRING, LOOM_DEFAULT_NONE, 0, "path or URL ('-': stdin), or give the bytes as input src", )    \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "demuxer or input device (ffmpeg -f)", )                       \
    A(op, option, STRING, LOOM_DEFAULT_NONE, 0, "demuxer options, key=value;key=value", )                     \
    A(op, media_type, STRING, LOOM_DEFAULT_STRING("audio"), 0, "audio or video", )                              \
    A(op, stream_index, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "source stream (default: the best one)", )  \
    A(op, decoder, STRING, LOOM_DEFAULT_NONE, 0, "decoder name", )                                             \
    A(op, decoder_option, STRING, LOOM_DEFAULT_NONE, 0, "decoder options, key=value;key=value", )             \
    A(op, sample_format, STRING, LOOM_DEFAULT_NONE, 0, "audio: fltp (default) s16p ...; video: rgb24 (default) ...", ) \
    A(op, sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "audio: resample to this rate, Hz", )       \
    A(op, num_channels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "audio: mix to this many channels", )     \
    A(op, frame_rate, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "video: frames per second", )             \
    A(op, width, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "video: width", )                                 \
    A(op, height, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "video: height", )                               \
    A(op, filter_desc, STRING, LOOM_DEFAULT_NONE, 0, "a libavfilter graph instead of the options above", )
PK_ATTR_ENUM(audio_stream_decode, AUDIO_STREAM_DECODE_ATTRS);

/* ---- audio.stream_writer: StreamWriter(dst, format=None) ---- */
#define AUDIO_STREAM_WRITER_CLASS "audio.stream_writer"

#define AUDIO_SW_CLASS_ATTRS(A, op)                                                                            \
    A(op, dst, STRING, LOOM_DEFAULT_NONE, 0, "path or URL; left out: write to memory (then give format)", )   \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "muxer (ffmpeg -f): wav, flac, mp4, ogg, webm, ... (default: from dst)", )
PK_ATTR_ENUM(audio_sw_class, AUDIO_SW_CLASS_ATTRS);

/* The attributes both add_*_stream share (torchaudio's CodecConfig and the
** encoder's names), first and in this order in both tables. */
#define AUDIO_SW_ADD_COMMON(A, op)                                                                             \
    A(op, encoder, STRING, LOOM_DEFAULT_NONE, 0, "encoder name (default: the container's codec)", )            \
    A(op, encoder_option, STRING, LOOM_DEFAULT_NONE, 0, "encoder options, key=value;key=value", )             \
    A(op, encoder_format, STRING, LOOM_DEFAULT_NONE, 0, "sample / pixel format of the encoder (default: its first)", ) \
    A(op, filter_desc, STRING, LOOM_DEFAULT_NONE, 0, "libavfilter graph applied before the encoder", )         \
    A(op, bit_rate, INT, LOOM_DEFAULT_INT(-1), 0, "CodecConfig.bit_rate, bits/s (-1: the encoder's)", )       \
    A(op, compression_level, INT, LOOM_DEFAULT_INT(-1), 0, "CodecConfig.compression_level (-1: the encoder's)", ) \
    A(op, qscale, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_FINITE, "CodecConfig.qscale (fixed quality)", )

#define AUDIO_SW_ADD_AUDIO_ATTRS(A, op)                                                                        \
    AUDIO_SW_ADD_COMMON(A, op)                                                                                 \
    A(op, sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "of the chunks, Hz", ) \
    A(op, num_channels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "of the chunks", )  \
    A(op, format, STRING, LOOM_DEFAULT_STRING("flt"), 0, "the chunks' samples: u8 s16 s32 s64 flt dbl", )     \
    A(op, encoder_sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "encode at this rate (resampled)", ) \
    A(op, encoder_num_channels, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "encode this many channels (remixed)", )
PK_ATTR_ENUM(audio_sw_add_audio, AUDIO_SW_ADD_AUDIO_ATTRS);

#define AUDIO_SW_ADD_VIDEO_ATTRS(A, op)                                                                        \
    AUDIO_SW_ADD_COMMON(A, op)                                                                                 \
    A(op, frame_rate, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE | LOOM_ATTR_FINITE,    \
      "of the chunks, frames/s", )                                                                             \
    A(op, width, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "of the chunks", )         \
    A(op, height, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "of the chunks", )        \
    A(op, format, STRING, LOOM_DEFAULT_STRING("rgb24"), 0, "the chunks' pictures: rgb24 bgr24 yuv444p yuv420p gray", ) \
    A(op, encoder_frame_rate, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE | LOOM_ATTR_FINITE, "encode at this rate (fps filter)", ) \
    A(op, encoder_width, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "encode at this width (scaled)", )        \
    A(op, encoder_height, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "encode at this height (scaled)", )      \
    A(op, hw_accel, STRING, LOOM_DEFAULT_NONE, 0, "cuda: encode on the GPU (not in this build)", )             \
    A(op, gop_size, INT, LOOM_DEFAULT_INT(-1), 0, "CodecConfig.gop_size (-1: the encoder's)", )               \
    A(op, max_b_frames, INT, LOOM_DEFAULT_INT(-1), 0, "CodecConfig.max_b_frames (-1: the encoder's)", )
PK_ATTR_ENUM(audio_sw_add_video, AUDIO_SW_ADD_VIDEO_ATTRS);

#define AUDIO_SW_METADATA_ATTRS(A, op) \
    A(op, metadata, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the container's tags, key=value;key=value", )
PK_ATTR_ENUM(audio_sw_metadata, AUDIO_SW_METADATA_ATTRS);

#define AUDIO_SW_OPEN_ATTRS(A, op) \
    A(op, option, STRING, LOOM_DEFAULT_NONE, 0, "muxer / protocol options, key=value;key=value", )
PK_ATTR_ENUM(audio_sw_open, AUDIO_SW_OPEN_ATTRS);

#define AUDIO_SW_WRITE_ATTRS(A, op)                                                                            \
    A(op, i, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, "stream index, in the order added", ) \
    A(op, pts, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG | LOOM_ATTR_FINITE, "presentation time of the chunk's first frame, s", )
PK_ATTR_ENUM(audio_sw_write, AUDIO_SW_WRITE_ATTRS);

#define AUDIO_STREAM_OPS(X)                                                                                    \
    X(audio_sr_num_src_streams_schema) X(audio_sr_src_stream_info_schema) X(audio_sr_metadata_schema)          \
    X(audio_sr_add_audio_schema) X(audio_sr_add_basic_audio_schema) X(audio_sr_add_video_schema)               \
    X(audio_sr_add_basic_video_schema) X(audio_sr_out_stream_info_schema) X(audio_sr_process_packet_schema)    \
    X(audio_sr_process_all_packets_schema) X(audio_sr_fill_buffer_schema) X(audio_sr_is_buffer_ready_schema)   \
    X(audio_sr_seek_schema) X(audio_sr_pop_chunk_schema) X(audio_stream_decode_schema)                         \
    X(audio_sw_add_audio_schema) X(audio_sw_add_video_schema) X(audio_sw_set_metadata_schema)                  \
    X(audio_sw_open_schema) X(audio_sw_write_audio_schema) X(audio_sw_write_video_schema)                      \
    X(audio_sw_flush_schema) X(audio_sw_close_schema) X(audio_sw_bytes_schema)
PK_OPS_DECLARE(audio_stream_ops, AUDIO_STREAM_OPS);

extern const loom_object_class audio_stream_reader_class;
extern const loom_object_class audio_stream_writer_class;

/* The writer's methods (stream_writer_cpu.c), in the module's kernel table. */
loom_status audio_sw_add_audio_run(loom_call *call);
loom_status audio_sw_add_video_run(loom_call *call);
loom_status audio_sw_set_metadata_run(loom_call *call);
loom_status audio_sw_open_run(loom_call *call);
loom_status audio_sw_write_audio_run(loom_call *call);
loom_status audio_sw_write_video_run(loom_call *call);
loom_status audio_sw_flush_run(loom_call *call);
loom_status audio_sw_close_run(loom_call *call);
loom_status audio_sw_bytes_run(loom_call *call);
extern const pk_module audio_stream_cpu, audio_stream_cuda;

/* The reader's methods that the cuda pack (stream_cuda.c) also runs, on a
** reader made on a cuda device (ABI 1.5 routes them there): cuda NULL is
** the cpu kernel; else NVDEC outputs are allowed and every output of the
** call is device memory. */
struct sr_cuda_ops;
loom_status audio_sr_add_video_on(loom_call *call, const struct sr_cuda_ops *cuda);
loom_status audio_sr_add_basic_video_on(loom_call *call, const struct sr_cuda_ops *cuda);
loom_status audio_sr_pop_chunk_on(loom_call *call, const struct sr_cuda_ops *cuda);
/* Output `out_index` of call made of the oldest chunk of reader output
** `index` itself, without a copy (host->adopt_output, ABI 1.6): shape
** [frames, frame dims...]. *lent is 0 when the chunk cannot be lent (a core
** before 1.6, device memory, nothing buffered): allocate and pop it then;
** when 1, the status is adopt_output's (the chunk is popped either way). */
struct sr_reader;
loom_status audio_sr_lend_chunk(loom_call *call, struct sr_reader *r, int index, int32_t out_index, loom_dtype dtype,
                                int32_t ndim, const int64_t *shape, loom_tensor **t, int *lent);

#endif /* LOOM_AUDIO_STREAM_H */
