/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_audio_stream.c - the audio pack's media stream ops (the
** audio.stream_reader and audio.stream_writer methods and
** audio.stream_decode): they demux, decode, encode and mux on the host
** through FFmpeg and have one cpu kernel each, so there is no second
** backend to compare; tests/audio/stream checks the reader against the
** ffmpeg CLI's decode of the same media, and the writer's files through
** the reader and the CLI. The reader's video outputs and pop_chunk have a
** cuda kernel too (NVDEC, on a reader made on cuda), checked against the
** cpu reader by tests/audio/stream/test_stream_nvdec.c (suite gpu).
*/
#include "conformance.h"

#define STREAM_TESTED(op) { op, 0, 0, NULL, "tests/audio/stream/test_stream.c: host-only FFmpeg decoding (cpu kernel only)" }
#define NVDEC_TESTED(op) \
    { op, 0, 0, NULL, "tests/audio/stream/test_stream_nvdec.c: NVDEC on a reader made on cuda against the cpu reader" }
#define WRITER_TESTED(op) \
    { op, 0, 0, NULL, "tests/audio/stream/test_stream_writer.c: host-only FFmpeg encoding (cpu kernel only)" }

const cf_gen cf_audio_stream_gens[] = {
    STREAM_TESTED("audio.stream_decode"),
    STREAM_TESTED("audio.stream_reader_num_src_streams"),
    STREAM_TESTED("audio.stream_reader_src_stream_info"),
    STREAM_TESTED("audio.stream_reader_metadata"),
    STREAM_TESTED("audio.stream_reader_add_audio_stream"),
    STREAM_TESTED("audio.stream_reader_add_basic_audio_stream"),
    NVDEC_TESTED("audio.stream_reader_add_video_stream"),
    NVDEC_TESTED("audio.stream_reader_add_basic_video_stream"),
    STREAM_TESTED("audio.stream_reader_out_stream_info"),
    STREAM_TESTED("audio.stream_reader_process_packet"),
    STREAM_TESTED("audio.stream_reader_process_all_packets"),
    STREAM_TESTED("audio.stream_reader_fill_buffer"),
    STREAM_TESTED("audio.stream_reader_is_buffer_ready"),
    STREAM_TESTED("audio.stream_reader_seek"),
    NVDEC_TESTED("audio.stream_reader_pop_chunk"),
    WRITER_TESTED("audio.stream_writer_add_audio_stream"),
    WRITER_TESTED("audio.stream_writer_add_video_stream"),
    WRITER_TESTED("audio.stream_writer_set_metadata"),
    WRITER_TESTED("audio.stream_writer_open"),
    WRITER_TESTED("audio.stream_writer_write_audio_chunk"),
    WRITER_TESTED("audio.stream_writer_write_video_chunk"),
    WRITER_TESTED("audio.stream_writer_flush"),
    WRITER_TESTED("audio.stream_writer_close"),
    WRITER_TESTED("audio.stream_writer_bytes"),
};
const size_t cf_audio_stream_n_gens = sizeof cf_audio_stream_gens / sizeof cf_audio_stream_gens[0];
