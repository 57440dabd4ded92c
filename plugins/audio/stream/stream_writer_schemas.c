/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_writer_schemas.c - the schemas of audio.stream_writer's methods
** (torchaudio StreamWriter's names: add_audio_stream, add_video_stream,
** set_metadata, open, write_audio_chunk, write_video_chunk, flush, close),
** and bytes, what a memory destination holds.
*/
#include "stream.h"

#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define SAMPLE_DTYPES (U8 | LOOM_DTYPE_BIT(LOOM_DTYPE_I16) | LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | I64 \
                       | LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
#define SW AUDIO_STREAM_WRITER_CLASS

static const loom_arg_def stream_index_out[] = {
    { .name = "stream_index", .dtypes = I64, .ndim = 0, .doc = "index of the new stream (write_*_chunk's i)" },
};
PK_ATTR_TABLE(audio_sw_add_audio, AUDIO_SW_ADD_AUDIO_ATTRS);
PK_SCHEMA(audio_sw_add_audio_schema, "audio.stream_writer_add_audio_stream", 1,
          "StreamWriter.add_audio_stream: chunks [frames, num_channels] of `format` -> filter_desc, aformat -> "
          "encoder (its fixed frame size through asetnsamples)",
          PK_OUTPUTS(stream_index_out), PK_ATTRS(audio_sw_add_audio_attrs), .object_class = SW);
PK_ATTR_TABLE(audio_sw_add_video, AUDIO_SW_ADD_VIDEO_ATTRS);
PK_SCHEMA(audio_sw_add_video_schema, "audio.stream_writer_add_video_stream", 1,
          "StreamWriter.add_video_stream: chunks [frames, C, height, width] u8 of `format` -> filter_desc, scale, "
          "format, fps -> encoder",
          PK_OUTPUTS(stream_index_out), PK_ATTRS(audio_sw_add_video_attrs), .object_class = SW);
PK_ATTR_TABLE(audio_sw_metadata, AUDIO_SW_METADATA_ATTRS);
PK_SCHEMA(audio_sw_set_metadata_schema, "audio.stream_writer_set_metadata", 1, "StreamWriter.set_metadata",
          PK_ATTRS(audio_sw_metadata_attrs), .object_class = SW);
PK_ATTR_TABLE(audio_sw_open, AUDIO_SW_OPEN_ATTRS);
PK_SCHEMA(audio_sw_open_schema, "audio.stream_writer_open", 1,
          "StreamWriter.open(option): open the destination and write the header", PK_ATTRS(audio_sw_open_attrs),
          .object_class = SW);

static const loom_arg_def audio_chunk_in[] = {
    { .name = "chunk", .dtypes = SAMPLE_DTYPES, .ndim = -1,
      .doc = "[frames, num_channels] samples, the dtype of the stream's format (flt: f32, s16: i16, ...)" },
};
PK_ATTR_TABLE(audio_sw_write, AUDIO_SW_WRITE_ATTRS);
PK_SCHEMA(audio_sw_write_audio_schema, "audio.stream_writer_write_audio_chunk", 1,
          "StreamWriter.write_audio_chunk(i, chunk, pts)", PK_INPUTS(audio_chunk_in), PK_ATTRS(audio_sw_write_attrs),
          .object_class = SW);
static const loom_arg_def video_chunk_in[] = {
    { .name = "chunk", .dtypes = U8, .ndim = -1, .doc = "[frames, C, height, width] u8 (C 3, gray: 1)" },
};
PK_SCHEMA(audio_sw_write_video_schema, "audio.stream_writer_write_video_chunk", 1,
          "StreamWriter.write_video_chunk(i, chunk, pts)", PK_INPUTS(video_chunk_in), PK_ATTRS(audio_sw_write_attrs),
          .object_class = SW);
PK_SCHEMA(audio_sw_flush_schema, "audio.stream_writer_flush", 1,
          "StreamWriter.flush: drain every filter graph and encoder into the destination", .object_class = SW);
PK_SCHEMA(audio_sw_close_schema, "audio.stream_writer_close", 1,
          "StreamWriter.close: flush what is left, write the trailer, close the destination", .object_class = SW);

static const loom_arg_def bytes_out[] = {
    { .name = "bytes", .dtypes = U8, .ndim = 1, .doc = "the muxed media (complete after close)" },
};
PK_SCHEMA(audio_sw_bytes_schema, "audio.stream_writer_bytes", 1,
          "the bytes written to a memory destination (no dst)", PK_OUTPUTS(bytes_out), .object_class = SW);
