/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_audio_empty.c - every op of the audio pack on inputs without
** elements (no signals, no channels, an empty file): torch's and
** torchaudio's output shapes, no error, no read of the (NULL) data of an
** empty tensor. The walk over the registry fails for any audio op without
** a case here. Where torchaudio raises, loom refuses with LOOM_EINVAL.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T

static const oc_case cases[] = {
    /* n_fft 16, hop 4 (n_fft // 4), 100 samples centred: 26 frames of 9 bins */
    { "audio.stft", "no signals", { T(F32, 2, 0, 100) }, "n_fft=16", { T(C64, 3, 0, 9, 26) } },
    { "audio.stft", "no signals, batch dims", { T(F64, 3, 3, 0, 100) }, "n_fft=16;return_complex=false",
      { T(F64, 5, 3, 0, 9, 26, 2) } },
    /* a signal without samples cannot be reflect-padded (torch: "Padding size should be less than ...") */
    { "audio.stft", "no samples", { T(F32, 2, 2, 0) }, "n_fft=16", .expect = LOOM_EINVAL, .message = "reflect" },
    { "audio.istft", "no spectra", { T(C64, 3, 0, 9, 26) }, "n_fft=16", { T(F32, 2, 0, 100) } },
    { "audio.istft", "no frames", { T(C64, 3, 2, 9, 0) }, "n_fft=16", .expect = LOOM_EINVAL, .message = "frames" },
    /* hop = win_length // 2 = 8: 1 + 500 / 8 = 63 frames */
    { "audio.spectrogram", "no signals", { T(F32, 2, 0, 500) }, "n_fft=16;power=2", { T(F32, 3, 0, 9, 63) } },
    { "audio.inverse_spectrogram", "no spectra", { T(C128, 3, 0, 9, 63) }, "n_fft=16", { T(F64, 2, 0, 496) } },
    { "audio.melscale_fbanks", "two filters", { { 0 } }, "n_freqs=5;f_min=0;f_max=4000;n_mels=2;sample_rate=8000",
      { T(F32, 2, 5, 2) } },
    { "audio.create_dct", "3 mels", { { 0 } }, "n_mfcc=2;n_mels=3", { T(F32, 2, 3, 2) } },
    { "audio.mel_spectrogram", "no signals", { T(F32, 2, 0, 100) }, "n_fft=16;n_mels=4", { T(F32, 3, 0, 4, 13) } },
    { "audio.mfcc", "no signals", { T(F64, 3, 2, 0, 100) }, "n_fft=16;n_mels=4;n_mfcc=3", { T(F64, 4, 2, 0, 3, 13) } },
#ifndef AUDIO_TEST_NO_FILES     /* the files module is built with libsndfile */
    { "audio.load", "an empty file", { T(U8, 1, 0) }, NULL, .expect = LOOM_EINVAL, .message = "empty" },
    { "audio.load", "no file", { { 0 } }, NULL, .expect = LOOM_EINVAL, .message = "uri" },
    { "audio.info", "an empty file", { T(U8, 1, 0) }, NULL, .expect = LOOM_EINVAL, .message = "empty" },
    { "audio.save", "no channels", { T(I16, 2, 0, 10) }, "uri=/tmp/loom-audio-empty.wav;sample_rate=8000",
      .expect = LOOM_EINVAL, .message = "channels" },
    { "audio.save", "no frames", { T(I16, 2, 2, 0) }, "uri=/tmp/loom-audio-empty.wav;sample_rate=8000",
      { T(I64, 0, 0) }, .zeros = 1 },
#endif
    /* beamforming: no bins, no frames (sums over nothing are zeros), a batch of 0 */
    { "audio.psd", "no bins", { T(C64, 3, 3, 0, 7), T(F32, 2, 0, 7) }, NULL, { T(C64, 3, 0, 3, 3) } },
    { "audio.psd", "no frames", { T(C128, 3, 2, 4, 0) }, NULL, { T(C128, 3, 4, 2, 2) }, .zeros = 1 },
    { "audio.mvdr_weights_souden", "no bins", { T(C64, 3, 0, 3, 3), T(C64, 3, 0, 3, 3) }, "reference_channel=0",
      { T(C64, 2, 0, 3) } },
    { "audio.mvdr_weights_rtf", "batch of 0", { T(C128, 3, 0, 5, 3), T(C128, 4, 0, 5, 3, 3) }, NULL,
      { T(C128, 3, 0, 5, 3) } },
    { "audio.rtf_evd", "no bins", { T(C64, 3, 0, 2, 2) }, NULL, { T(C64, 2, 0, 2) } },
    { "audio.rtf_power", "no bins", { T(C64, 3, 0, 2, 2), T(C64, 3, 0, 2, 2) }, "reference_channel=1",
      { T(C64, 2, 0, 2) } },
    { "audio.apply_beamforming", "no frames", { T(C64, 2, 5, 3), T(C64, 3, 3, 5, 0) }, NULL, { T(C64, 2, 5, 0) } },
    { "audio.PSD", "no frames", { T(C64, 3, 2, 3, 0), T(F32, 2, 3, 0) }, NULL, { T(C64, 3, 3, 2, 2) }, .zeros = 1,
      .object = 1 },
    { "audio.SoudenMVDR", "no bins", { T(C64, 3, 3, 0, 4), T(C64, 3, 0, 3, 3), T(C64, 3, 0, 3, 3) },
      "reference_channel=0", { T(C64, 2, 0, 4) }, .object = 2 },
    { "audio.RTFMVDR", "no bins", { T(C64, 3, 3, 0, 4), T(C64, 2, 0, 3), T(C64, 3, 0, 3, 3) }, "reference_channel=0",
      { T(C64, 2, 0, 4) }, .object = 3 },
    { "audio.MVDR", "no frames", { T(C64, 3, 3, 5, 0), T(F32, 2, 5, 0) }, NULL, { T(C64, 2, 5, 0) }, .object = 4 },
    { "audio.ctc_lm_score", "no sentences", { T(U8, 1, 0), T(I64, 1, 1) }, NULL, { T(F64, 1, 0) }, .object = 5 },
    { "audio.ctc_lm_save", "no such directory", { { 0 } }, "path=/nonexistent-dir/lm.bin", .expect = LOOM_EIO,
      .message = "'path'", .object = 5 },
    /* tokens, timesteps, offsets [H+1], words, words_offsets [H+1], score [H], hypotheses [B+1] */
    { "audio.ctc_decoder", "no utterances", { T(F32, 3, 0, 5, 29) }, NULL,
      { T(I64, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(U8, 1, 0), T(I64, 1, 1), T(F64, 1, 0), T(I64, 1, 1) },
      .zeros = OC_ALL, .object = 6 },
    { "audio.ctc_decoder", "no frames", { T(F32, 3, 1, 0, 29) }, NULL,
      { T(I64, 1, 1), T(I64, 1, 1), T(I64, 1, 2), T(U8, 1, 0), T(I64, 1, 2), T(F64, 1, 1), T(I64, 1, 2) },
      .object = 6 },
    { "audio.ctc_greedy_decoder", "no utterances", { T(F32, 3, 0, 5, 29) }, NULL, { T(I64, 1, 0), T(I64, 1, 1) },
      .zeros = OC_ALL },
    { "audio.ctc_greedy_decoder", "no frames", { T(F32, 3, 2, 0, 29) }, NULL, { T(I64, 1, 0), T(I64, 1, 3) },
      .zeros = OC_ALL },
    /* tokens, offsets [B * nbest + 1], score [B, nbest] */
    { "audio.cuda_ctc_decoder", "no utterances", { T(F32, 3, 0, 5, 12) }, NULL,
      { T(I64, 1, 0), T(I64, 1, 1), T(F32, 2, 0, 1) }, .zeros = OC_ALL },
    { "audio.cuda_ctc_decoder", "no frames", { T(F32, 3, 2, 0, 12) }, "nbest=2",
      { T(I64, 1, 0), T(I64, 1, 5), T(F32, 2, 2, 2) }, .zeros = OC_ALL },
    /* the streaming methods, in order on one decoder; end and final out of order on a fresh one */
    { "audio.ctc_decoder_begin", "a stream", { { 0 } }, NULL, { { 0 } }, .object = 6 },
    { "audio.ctc_decoder_step", "no frames", { T(F32, 2, 0, 29) }, NULL, { { 0 } }, .object = 6 },
    { "audio.ctc_decoder_best", "no frames yet", { { 0 } }, NULL,
      { T(I64, 1, 0), T(I64, 1, 0), T(I64, 1, 1), T(U8, 1, 0), T(I64, 1, 1), T(F64, 1, 0), T(I64, 1, 2) },
      .zeros = OC_ALL, .object = 6 },
    { "audio.ctc_decoder_end", "before begin", { { 0 } }, NULL, { { 0 } }, LOOM_EINVAL, "begin first", .object = 7 },
    { "audio.ctc_decoder_final", "before begin", { { 0 } }, NULL, { { 0 } }, LOOM_EINVAL, "begin first",
      .object = 7 },
#ifndef AUDIO_TEST_NO_STREAM    /* the stream module is built with FFmpeg: a reader on a 1 ms lavfi sine */
    { "audio.stream_decode", "an empty buffer", { T(U8, 1, 0) }, NULL, .expect = LOOM_EFORMAT, .message = "empty" },
    { "audio.stream_reader_num_src_streams", "one stream", { { 0 } }, NULL, { T(I64, 0, 0) }, .object = 8 },
    { "audio.stream_reader_metadata", "no tags", { { 0 } }, NULL, { { 0 } }, .object = 8 },
    { "audio.stream_reader_src_stream_info", "no such stream", { { 0 } }, "i=9", .expect = LOOM_EINVAL,
      .message = "'i'", .object = 8 },
    { "audio.stream_reader_out_stream_info", "no outputs", { { 0 } }, "i=0", .expect = LOOM_EINVAL,
      .message = "'i'", .object = 8 },
    { "audio.stream_reader_add_audio_stream", "no frames per chunk", { { 0 } }, "frames_per_chunk=0",
      .expect = LOOM_EINVAL, .message = "frames_per_chunk", .object = 8 },
    { "audio.stream_reader_add_basic_audio_stream", "no channels", { { 0 } }, "frames_per_chunk=4;buffer_chunk_size=0",
      .expect = LOOM_EINVAL, .message = "buffer_chunk_size", .object = 8 },
    { "audio.stream_reader_add_video_stream", "no video", { { 0 } }, "frames_per_chunk=1", .expect = LOOM_EINVAL,
      .message = "video", .object = 8 },
    { "audio.stream_reader_add_basic_video_stream", "no video", { { 0 } }, "frames_per_chunk=1",
      .expect = LOOM_EINVAL, .message = "video", .object = 8 },
    { "audio.stream_reader_is_buffer_ready", "no outputs", { { 0 } }, NULL, { T(I64, 0, 0) }, .object = 8 },
    { "audio.stream_reader_pop_chunk", "no outputs", { { 0 } }, NULL, .expect = LOOM_EINVAL, .message = "'output'",
      .object = 8 },
    { "audio.stream_reader_process_packet", "no samples", { { 0 } }, NULL, { T(I64, 0, 0) }, .object = 8 },
    { "audio.stream_reader_process_all_packets", "no samples", { { 0 } }, NULL, .object = 8 },
    { "audio.stream_reader_fill_buffer", "no outputs", { { 0 } }, NULL, { T(I64, 0, 0) }, .object = 8 },
    /* lavfi is a device-style input: av_seek_frame refuses, as torchaudio's "Failed to seek" */
    { "audio.stream_reader_seek", "a device", { { 0 } }, "timestamp=0", .expect = LOOM_EFORMAT, .message = "seek",
      .object = 8 },
    /* a writer to memory (WAV) with one mono f32 stream, opened (oc_objects[8]) */
    { "audio.stream_writer_add_audio_stream", "after open", { { 0 } }, "sample_rate=8000;num_channels=1",
      .expect = LOOM_EINVAL, .message = "before open", .object = 9 },
    { "audio.stream_writer_add_video_stream", "after open", { { 0 } }, "frame_rate=5;width=8;height=8",
      .expect = LOOM_EINVAL, .message = "before open", .object = 9 },
    { "audio.stream_writer_set_metadata", "after open", { { 0 } }, "metadata=title=x", .expect = LOOM_EINVAL,
      .message = "before open", .object = 9 },
    { "audio.stream_writer_open", "twice", { { 0 } }, NULL, .expect = LOOM_EINVAL, .message = "already open",
      .object = 9 },
    { "audio.stream_writer_write_audio_chunk", "no frames", { T(F32, 2, 0, 1) }, "i=0", .object = 9 },
    { "audio.stream_writer_write_audio_chunk", "no channels", { T(F32, 2, 4, 0) }, "i=0", .expect = LOOM_EINVAL,
      .message = "'chunk'", .object = 9 },
    { "audio.stream_writer_write_video_chunk", "no frames, an audio stream", { T(U8, 4, 0, 3, 8, 8) }, "i=0",
      .expect = LOOM_EINVAL, .message = "audio stream", .object = 9 },
    { "audio.stream_writer_bytes", "the header", { { 0 } }, NULL, { { 0 } }, .object = 9 },
    { "audio.stream_writer_flush", "nothing written", { { 0 } }, NULL, .object = 9 },
    { "audio.stream_writer_close", "nothing written", { { 0 } }, NULL, .object = 9 },
#endif
};

/* the beamforming objects the method cases use (oc_objects[0..3]), then
** the CTC module's n-gram LM (oc_objects[4]) and decoders (oc_objects[5], [6]),
** and, with FFmpeg, a stream reader on a lavfi sine (oc_objects[7]) and a
** stream writer to memory, opened with one stream (oc_objects[8]) */
static const char *const classes[] = { "audio.PSD", "audio.SoudenMVDR", "audio.RTFMVDR", "audio.MVDR" };

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (loom_object_create(&oc_objects[i], classes[i], NULL, NULL) != LOOM_OK) {
            fprintf(stderr, "create %s: %s\n", classes[i], loom_last_error());
            return -1;
        }
    loom_attrs *a;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "lm", tu_data_path("audio/ctc/lm3.arpa")) != LOOM_OK
        || loom_object_create(&oc_objects[4], "audio.ctc_lm", a, NULL) != LOOM_OK) {
        fprintf(stderr, "create audio.ctc_lm: %s\n", loom_last_error());
        return -1;
    }
    loom_attrs_free(a);
    if (loom_attrs_new(&a) != LOOM_OK
        || loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")) != LOOM_OK
        || loom_object_create(&oc_objects[5], "audio.ctc_decoder", a, NULL) != LOOM_OK
        || loom_object_create(&oc_objects[6], "audio.ctc_decoder", a, NULL) != LOOM_OK) {
        fprintf(stderr, "create audio.ctc_decoder: %s\n", loom_last_error());
        return -1;
    }
    loom_attrs_free(a);
#ifndef AUDIO_TEST_NO_STREAM
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "src", "sine=duration=0.001");
    loom_attrs_set_string(a, "format", "lavfi");
    loom_status st = loom_object_create(&oc_objects[7], "audio.stream_reader", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK) {
        fprintf(stderr, "create audio.stream_reader: %s\n", loom_last_error());
        return -1;
    }
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "format", "wav");
    st = loom_object_create(&oc_objects[8], "audio.stream_writer", a, NULL);
    loom_attrs_free(a);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = oc_objects[8];
    loom_tensor *index = NULL;
    if (st == LOOM_OK) {
        loom_attrs_new(&a);
        loom_attrs_parse(a, "audio.stream_writer_add_audio_stream", "sample_rate", "8000");
        loom_attrs_parse(a, "audio.stream_writer_add_audio_stream", "num_channels", "1");
        st = loom_run("audio.stream_writer_add_audio_stream", NULL, 0, a, &index, 1, &opt);
        loom_attrs_free(a);
        loom_tensor_free(index);
    }
    if (st == LOOM_OK)
        st = loom_run("audio.stream_writer_open", NULL, 0, NULL, NULL, 0, &opt);
    if (st != LOOM_OK) {
        fprintf(stderr, "audio.stream_writer: %s\n", loom_last_error());
        return -1;
    }
#endif
    return 0;
}

static int teardown(void **state)
{
    for (size_t i = 0; i < sizeof oc_objects / sizeof oc_objects[0]; i++)
        loom_object_free(oc_objects[i]);
    return tu_teardown(state);
}

int main(void)
{
    return oc_run_group("audio_empty", "audio.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
