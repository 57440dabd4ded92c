/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_stream.c - feeds: a media container (anything FFmpeg's demuxers
** probe: WAV, FLAC, MP3, MP4, Ogg, WebM, ...) to the audio pack's
** audio.stream_reader, read from memory (a u8 tensor named src), and to
** audio.stream_decode. The first 2 bytes choose: bit 0 of byte 0 a video
** output instead of audio, bit 1 resampling to 8 kHz (audio) or 4 fps at
** 16x12 (video), bit 2 a seek to (byte 1 / 64) s in mode byte 1 % 3 before
** reading; byte 1 % 7 + 1 frames per chunk with a buffer of 2 chunks (so
** the drop path runs). The rest is the file, in an exact-size heap copy.
** Asserts: no sanitizer report; a failure sets a message; every chunk is a
** compact tensor of the output's dtype whose every byte is read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define PARAM_BYTES 2

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("audio");
    FZ_CHECK(loom_op_find("audio.stream_decode") != NULL, "the audio pack has no stream module (FFmpeg missing?)");
    return 0;
}

static loom_status method(loom_object *r, const char *op, loom_attrs *a, loom_tensor **out, int32_t n)
{
    loom_call_options o = LOOM_CALL_OPTIONS_INIT;
    o.object = r;
    return loom_run(op, NULL, 0, a, out, n, &o);
}

static void read_chunks(loom_tensor *src, uint8_t flags, uint8_t b1)
{
    const int video = flags & 1;
    loom_named_tensor nt = { "src", src };
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    opt.n_tensors = 1;
    opt.tensors = &nt;
    loom_object *r = NULL;
    if (loom_object_create_ex(&r, "audio.stream_reader", NULL, &opt) != LOOM_OK) {
        FZ_CHECK(loom_last_error()[0] != '\0', "a refused source without a message");
        return;
    }
    loom_attrs *a;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_int(a, "frames_per_chunk", b1 % 7 + 1);
    loom_attrs_set_int(a, "buffer_chunk_size", 2);
    if (flags & 2) {
        if (video) {
            loom_attrs_set_float(a, "frame_rate", 4);
            loom_attrs_set_int(a, "width", 16);
            loom_attrs_set_int(a, "height", 12);
        } else
            loom_attrs_set_int(a, "sample_rate", 8000);
    }
    loom_tensor *out[2] = { NULL, NULL };
    loom_status st = method(r, video ? "audio.stream_reader_add_basic_video_stream"
                                     : "audio.stream_reader_add_basic_audio_stream", a, out, 1);
    loom_attrs_free(a);
    loom_tensor_free(out[0]);
    out[0] = NULL;
    if (st == LOOM_OK && (flags & 4)) {
        static const char *const modes[] = { "key", "any", "precise" };
        loom_attrs_new(&a);
        loom_attrs_set_float(a, "timestamp", b1 / 64.0);
        loom_attrs_set_string(a, "mode", modes[b1 % 3]);
        method(r, "audio.stream_reader_seek", a, NULL, 0);      /* may fail: not every stream seeks */
        loom_attrs_free(a);
    }
    /* process packets, popping a chunk after each; the reader must end (1) or fail, and never hang */
    for (int i = 0; st == LOOM_OK && i < 100000; i++) {
        st = method(r, "audio.stream_reader_process_packet", NULL, out, 1);
        if (st != LOOM_OK)
            break;
        int64_t eof = *(int64_t *)loom_data(out[0]);
        loom_tensor_free(out[0]);
        out[0] = NULL;
        if (i % 3 == 0 || eof) {
            if (method(r, "audio.stream_reader_pop_chunk", NULL, out, 2) == LOOM_OK) {
                fz_touch_tensor(out[0]);
                fz_touch_tensor(out[1]);
            }
            loom_tensor_free(out[0]);
            loom_tensor_free(out[1]);
            out[0] = out[1] = NULL;
        }
        if (eof)
            break;
    }
    if (st != LOOM_OK)
        FZ_CHECK(loom_last_error()[0] != '\0', "a failure without a message");
    loom_object_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < PARAM_BYTES)
        return 0;
    const uint8_t flags = data[0], b1 = data[1];
    const int64_t n = (int64_t)(size - PARAM_BYTES);
    uint8_t *copy = malloc(n > 0 ? (size_t)n : 1);
    FZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + PARAM_BYTES, (size_t)n);
    loom_tensor *src;
    FZ_CHECK(loom_tensor_wrap(&src, copy, LOOM_DTYPE_U8, 1, &n, NULL, NULL) == LOOM_OK, "wrap: %s", loom_last_error());
    if (n > 0)
        read_chunks(src, flags, b1);
    loom_attrs *a;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    if (flags & 1)
        loom_attrs_set_string(a, "media_type", "video");
    const loom_tensor *in[1] = { src };
    loom_tensor *out[2] = { NULL, NULL };
    if (loom_run("audio.stream_decode", in, 1, a, out, 2, NULL) == LOOM_OK) {
        fz_touch_tensor(out[0]);
        loom_tensor_free(out[0]);
        loom_tensor_free(out[1]);
    } else
        FZ_CHECK(loom_last_error()[0] != '\0', "a failure without a message");
    loom_attrs_free(a);
    loom_tensor_free(src);
    free(copy);
    return 0;
}
