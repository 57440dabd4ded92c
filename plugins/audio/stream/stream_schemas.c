/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_schemas.c - the schemas of audio.stream_reader's methods and of
** audio.stream_decode (torchaudio StreamReader's names; results as
** tensors: strings as u8 [n] text, counts as i64 scalars).
*/
#include "stream.h"

#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define F64 LOOM_DTYPE_BIT(LOOM_DTYPE_F64)
#define CHUNK_DTYPES (U8 | LOOM_DTYPE_BIT(LOOM_DTYPE_I16) | LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | I64 \
                      | LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | F64)
#define SR AUDIO_STREAM_READER_CLASS

static const loom_arg_def num_src_out[] = {
    { .name = "num_src_streams", .dtypes = I64, .ndim = 0, .doc = "streams of the source" },
};
PK_SCHEMA(audio_sr_num_src_streams_schema, "audio.stream_reader_num_src_streams", 1,
          "StreamReader.num_src_streams", PK_OUTPUTS(num_src_out), .object_class = SR);

static const loom_arg_def src_info_out[] = {
    { .name = "media_type", .dtypes = U8, .ndim = 1, .doc = "audio, video, subtitle, data, attachment, unknown" },
    { .name = "codec", .dtypes = U8, .ndim = 1, .doc = "codec's short name (aac, h264, ...)" },
    { .name = "format", .dtypes = U8, .ndim = 1, .doc = "sample or pixel format (fltp, yuv420p, ...)" },
    { .name = "sample_rate", .dtypes = F64, .ndim = 0, .doc = "Hz (audio; NaN otherwise)" },
    { .name = "num_channels", .dtypes = I64, .ndim = 0, .doc = "audio; 0 otherwise" },
    { .name = "width", .dtypes = I64, .ndim = 0, .doc = "video; 0 otherwise" },
    { .name = "height", .dtypes = I64, .ndim = 0, .doc = "video; 0 otherwise" },
    { .name = "frame_rate", .dtypes = F64, .ndim = 0, .doc = "video average frame rate; NaN otherwise" },
    { .name = "bit_rate", .dtypes = I64, .ndim = 0, .doc = "bits/s, 0 when unknown" },
    { .name = "num_frames", .dtypes = I64, .ndim = 0, .doc = "as the container says, 0 when unknown" },
    { .name = "bits_per_sample", .dtypes = I64, .ndim = 0, .doc = "bits_per_raw_sample, 0 when unknown" },
};
PK_ATTR_TABLE(audio_sr_index, AUDIO_SR_INDEX_ATTRS);
PK_SCHEMA(audio_sr_src_stream_info_schema, "audio.stream_reader_src_stream_info", 1,
          "StreamReader.get_src_stream_info(i)", PK_OUTPUTS(src_info_out), PK_ATTRS(audio_sr_index_attrs),
          .object_class = SR);

static const loom_arg_def metadata_out[] = {
    { .name = "metadata", .dtypes = U8, .ndim = 1, .doc = "the container's tags as key=value lines" },
};
PK_SCHEMA(audio_sr_metadata_schema, "audio.stream_reader_metadata", 1, "StreamReader.get_metadata()",
          PK_OUTPUTS(metadata_out), .object_class = SR);

static const loom_arg_def out_index[] = {
    { .name = "output", .dtypes = I64, .ndim = 0, .doc = "index of the new output stream" },
};
PK_ATTR_TABLE(audio_sr_add_audio, AUDIO_SR_ADD_AUDIO_ATTRS);
PK_SCHEMA(audio_sr_add_audio_schema, "audio.stream_reader_add_audio_stream", 1,
          "StreamReader.add_audio_stream: decoder -> abuffer -> filter_desc -> abuffersink -> chunks",
          PK_OUTPUTS(out_index), PK_ATTRS(audio_sr_add_audio_attrs), .object_class = SR);
PK_ATTR_TABLE(audio_sr_add_basic_audio, AUDIO_SR_ADD_BASIC_AUDIO_ATTRS);
PK_SCHEMA(audio_sr_add_basic_audio_schema, "audio.stream_reader_add_basic_audio_stream", 1,
          "StreamReader.add_basic_audio_stream: aresample=<sample_rate>,aformat=sample_fmts=<format>:"
          "channel_layouts=<num_channels>c",
          PK_OUTPUTS(out_index), PK_ATTRS(audio_sr_add_basic_audio_attrs), .object_class = SR);
PK_ATTR_TABLE(audio_sr_add_video, AUDIO_SR_ADD_VIDEO_ATTRS);
PK_SCHEMA(audio_sr_add_video_schema, "audio.stream_reader_add_video_stream", 1,
          "StreamReader.add_video_stream: decoder -> buffer -> filter_desc -> buffersink -> [frames, C, H, W] u8",
          PK_OUTPUTS(out_index), PK_ATTRS(audio_sr_add_video_attrs), .object_class = SR);
PK_ATTR_TABLE(audio_sr_add_basic_video, AUDIO_SR_ADD_BASIC_VIDEO_ATTRS);
PK_SCHEMA(audio_sr_add_basic_video_schema, "audio.stream_reader_add_basic_video_stream", 1,
          "StreamReader.add_basic_video_stream: fps=<frame_rate>,scale=width=<w>:height=<h>,format=pix_fmts=<format>",
          PK_OUTPUTS(out_index), PK_ATTRS(audio_sr_add_basic_video_attrs), .object_class = SR);

static const loom_arg_def out_info_out[] = {
    { .name = "source_index", .dtypes = I64, .ndim = 0, .doc = "the source stream it decodes" },
    { .name = "filter_description", .dtypes = U8, .ndim = 1, .doc = "its filter graph" },
    { .name = "num_dropped_chunks", .dtypes = I64, .ndim = 0, .doc = "chunks dropped on overflow" },
    { .name = "num_dropped_frames", .dtypes = I64, .ndim = 0, .doc = "frames in them" },
};
PK_SCHEMA(audio_sr_out_stream_info_schema, "audio.stream_reader_out_stream_info", 1,
          "StreamReader.get_out_stream_info(i), with the drop counters", PK_OUTPUTS(out_info_out),
          PK_ATTRS(audio_sr_index_attrs), .object_class = SR);

static const loom_arg_def eof_out[] = {
    { .name = "eof", .dtypes = I64, .ndim = 0, .doc = "1 when the source has ended (and was drained), else 0" },
};
PK_SCHEMA(audio_sr_process_packet_schema, "audio.stream_reader_process_packet", 1,
          "StreamReader.process_packet: demux one packet, decode and filter it into its outputs' buffers",
          PK_OUTPUTS(eof_out), .object_class = SR);
PK_SCHEMA(audio_sr_process_all_packets_schema, "audio.stream_reader_process_all_packets", 1,
          "StreamReader.process_all_packets: to the end of the source", .object_class = SR);
PK_SCHEMA(audio_sr_fill_buffer_schema, "audio.stream_reader_fill_buffer", 1,
          "StreamReader.fill_buffer: process packets until every output has a chunk or the source ends",
          PK_OUTPUTS(eof_out), .object_class = SR);

static const loom_arg_def ready_out[] = {
    { .name = "ready", .dtypes = I64, .ndim = 0, .doc = "1 when every output has a full chunk" },
};
PK_SCHEMA(audio_sr_is_buffer_ready_schema, "audio.stream_reader_is_buffer_ready", 1,
          "StreamReader.is_buffer_ready", PK_OUTPUTS(ready_out), .object_class = SR);

static const char *const seek_modes[] = { "precise", "key", "any", NULL };
static const loom_attr_choices seek_choices[] = { { PK_ATTR(audio_sr_seek, mode), seek_modes } };
PK_ATTR_TABLE(audio_sr_seek, AUDIO_SR_SEEK_ATTRS);
PK_SCHEMA(audio_sr_seek_schema, "audio.stream_reader_seek", 1,
          "StreamReader.seek(timestamp, mode): key frame before it (key), any packet (any), or decode and "
          "discard up to it (precise)",
          PK_ATTRS(audio_sr_seek_attrs), PK_CHOICES(seek_choices), .object_class = SR);

static const loom_arg_def pop_out[] = {
    { .name = "chunk", .dtypes = CHUNK_DTYPES, .ndim = -1,
      .doc = "audio [frames, channels], video [frames, C, H, W] u8; 0 frames: none buffered (torchaudio's None)" },
    { .name = "pts", .dtypes = F64, .ndim = 0, .doc = "presentation time of its first frame, s (NaN when none)" },
};
PK_ATTR_TABLE(audio_sr_pop, AUDIO_SR_POP_ATTRS);
PK_SCHEMA(audio_sr_pop_chunk_schema, "audio.stream_reader_pop_chunk", 1,
          "StreamReader.pop_chunks()[output]: the oldest chunk of one output stream", PK_OUTPUTS(pop_out),
          PK_ATTRS(audio_sr_pop_attrs), .object_class = SR);

static const char *const media_types[] = { "audio", "video", NULL };
static const loom_attr_choices decode_choices[] = { { PK_ATTR(audio_stream_decode, media_type), media_types } };
static const loom_arg_def decode_in[] = {
    { .name = "src", .dtypes = U8, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "the media's bytes (instead of src)" },
};
static const loom_arg_def decode_out[] = {
    { .name = "output", .dtypes = CHUNK_DTYPES, .ndim = -1,
      .doc = "audio [frames, channels] (f32 by default), video [frames, C, H, W] u8" },
    { .name = "pts", .dtypes = F64, .ndim = 0, .doc = "presentation time of the first frame, s" },
};
PK_ATTR_TABLE(audio_stream_decode, AUDIO_STREAM_DECODE_ATTRS);
PK_SCHEMA(audio_stream_decode_schema, "audio.stream_decode", 1,
          "decode one stream of a media source to one tensor (StreamReader with frames_per_chunk=-1)",
          PK_INPUTS(decode_in), PK_OUTPUTS(decode_out), PK_ATTRS(audio_stream_decode_attrs), PK_CHOICES(decode_choices));

PK_OPS_DEFINE(audio_stream_ops, AUDIO_STREAM_OPS);
