/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_stream.c - `loom demo stream`: a short video with a tone track is
** made, then read chunk by chunk as a model would take it. FFmpeg's lavfi
** device gives testsrc's colour bars and a counter (160x120, 25 fps) and a
** 440 Hz sine at 44.1 kHz that fades in over 2 s; audio.stream_writer
** encodes them (H.264 and AAC, MP4, in memory); audio.stream_reader reads
** those bytes back: the audio resampled to 16 kHz mono in 0.2 s chunks and
** the video at 5 fps scaled to 80x60 gray, one frame per chunk; each line
** gives the chunks' timestamps, the audio's RMS level and the picture's
** mean brightness.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

DEMO_DEFINE("stream", 95,
            "audio.stream_writer_add_video_stream,audio.stream_writer_write_video_chunk,audio.stream_writer_bytes,"
            "audio.stream_reader_add_basic_audio_stream,audio.stream_reader_add_basic_video_stream,"
            "audio.stream_reader_fill_buffer,audio.stream_reader_pop_chunk",
            "StreamWriter and StreamReader on FFmpeg: a video with a tone made, then read as 16 kHz audio and 5 fps "
            "scaled frames, chunk by chunk");

static loom_object *reader;

static int call_on(loom_object *obj, const char *label, const char *op, const loom_tensor *in, loom_attrs *a,
                   loom_tensor **out, int32_t n)
{
    loom_call_options o = LOOM_CALL_OPTIONS_INIT;
    o.object = obj;
    const loom_tensor *const ins[1] = { in };
    if (loom_run(op, in != NULL ? ins : NULL, in != NULL, a, out, n, &o) != LOOM_OK)
        return demo_fail();
    if (label != NULL)      /* NULL: a repeat of a call already recorded */
        demo_record(label);
    return DEMO_OK;
}

static int method(const char *label, const char *op, loom_attrs *a, loom_tensor **out, int32_t n)
{
    return call_on(reader, label, op, NULL, a, out, n);
}

/* A basic output stream of a reader: frames_per_chunk frames of format. */
static int add_basic(loom_object *r, const char *label, const char *op, int64_t frames, const char *format)
{
    loom_attrs *a;
    loom_attrs_new(&a);
    loom_attrs_set_int(a, "frames_per_chunk", frames);
    loom_attrs_set_string(a, "format", format);
    loom_tensor *idx = NULL;
    int rc = call_on(r, label, op, NULL, a, &idx, 1);
    loom_attrs_free(a);
    loom_tensor_free(idx);
    return rc;
}

/* The source, 2 s of lavfi's testsrc and a fading tone, as the bytes of an
** MP4 (H.264, or MPEG-4 part 2 where FFmpeg has no libx264; AAC): every
** chunk the lavfi reader gives goes to the writer as it comes. */
static int make_video(loom_tensor **bytes)
{
    loom_object *src = NULL, *w = NULL;
    loom_attrs *a;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "src", "testsrc=size=160x120:rate=25:duration=2[out0];"
                                    "sine=frequency=440:sample_rate=44100:duration=2,afade=t=in:d=2[out1]");
    loom_attrs_set_string(a, "format", "lavfi");
    loom_status st = loom_object_create(&src, "audio.stream_reader", a, NULL);
    loom_attrs_free(a);
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "format", "mp4");
    if (st == LOOM_OK)
        st = loom_object_create(&w, "audio.stream_writer", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK) {
        loom_object_free(src);
        return demo_fail();
    }
    loom_tensor *idx = NULL;
    /* the lavfi source's outputs: 25 fps rgb24 pictures (5 a chunk), 44.1 kHz mono f32 (0.2 s a chunk) */
    int rc = add_basic(src, "lavfi video", "audio.stream_reader_add_basic_video_stream", 5, "rgb24");
    if (rc == DEMO_OK)
        rc = add_basic(src, "lavfi audio", "audio.stream_reader_add_basic_audio_stream", 8820, "flt");
    const char *encoders[] = { "libx264", "mpeg4" };
    for (int e = 0; rc == DEMO_OK && e < 2; e++) {
        loom_attrs_new(&a);
        loom_attrs_set_float(a, "frame_rate", 25);
        loom_attrs_set_int(a, "width", 160);
        loom_attrs_set_int(a, "height", 120);
        loom_attrs_set_string(a, "encoder", encoders[e]);
        loom_call_options o = LOOM_CALL_OPTIONS_INIT;
        o.object = w;
        st = loom_run("audio.stream_writer_add_video_stream", NULL, 0, a, &idx, 1, &o);
        loom_attrs_free(a);
        loom_tensor_free(idx), idx = NULL;
        if (st == LOOM_OK) {
            demo_record("writer video");
            printf("  made: 2 s of lavfi testsrc 160x120 at 25 fps (%s) + a 440 Hz tone at 44.1 kHz (aac), "
                   "MP4 in memory\n", encoders[e]);
            break;
        }
        if (e == 1)
            rc = demo_fail();
    }
    if (rc == DEMO_OK) {
        loom_attrs_new(&a);
        loom_attrs_set_int(a, "sample_rate", 44100);
        loom_attrs_set_int(a, "num_channels", 1);
        rc = call_on(w, "writer audio", "audio.stream_writer_add_audio_stream", NULL, a, &idx, 1);
        loom_attrs_free(a);
        loom_tensor_free(idx), idx = NULL;
    }
    if (rc == DEMO_OK)
        rc = call_on(w, "writer open", "audio.stream_writer_open", NULL, NULL, NULL, 0);
    /* 0.2 s of each in turn, as a muxer wants them interleaved */
    for (int k = 0, eof = 0; rc == DEMO_OK && !eof; k++) {
        loom_tensor *e = NULL;
        if ((rc = call_on(src, k ? NULL : "lavfi fill", "audio.stream_reader_fill_buffer", NULL, NULL, &e, 1)) != DEMO_OK)
            break;
        eof = (int)*(int64_t *)loom_data(e);
        loom_tensor_free(e);
        for (int s = 0; s < 2 && rc == DEMO_OK; s++) {
            for (;;) {
                loom_tensor *ch[2] = { NULL, NULL };
                loom_attrs_new(&a);
                loom_attrs_set_int(a, "output", s);
                rc = call_on(src, NULL, "audio.stream_reader_pop_chunk", NULL, a, ch, 2);
                loom_attrs_free(a);
                const int64_t frames = rc == DEMO_OK ? ch[0]->shape[0] : 0;
                if (frames > 0) {
                    loom_attrs_new(&a);
                    loom_attrs_set_int(a, "i", s);
                    rc = call_on(w, k ? NULL : s ? "write audio" : "write video",
                                 s ? "audio.stream_writer_write_audio_chunk" : "audio.stream_writer_write_video_chunk",
                                 ch[0], a, NULL, 0);
                    loom_attrs_free(a);
                }
                loom_tensor_free(ch[0]);
                loom_tensor_free(ch[1]);
                if (frames == 0 || rc != DEMO_OK || !eof)
                    break;
            }
        }
    }
    if (rc == DEMO_OK)
        rc = call_on(w, "writer close", "audio.stream_writer_close", NULL, NULL, NULL, 0);
    if (rc == DEMO_OK)
        rc = call_on(w, "writer bytes", "audio.stream_writer_bytes", NULL, NULL, bytes, 1);
    loom_object_free(w);
    loom_object_free(src);
    return rc;
}

int demo_run(void)
{
    loom_tensor *mp4 = NULL;
    if (make_video(&mp4) != DEMO_OK)
        return DEMO_FAIL;
    printf("  %lld bytes; read back:\n", (long long)mp4->shape[0]);
    loom_named_tensor named = { .name = "src", .tensor = mp4 };
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    opt.n_tensors = 1;
    opt.tensors = &named;
    loom_status st = loom_object_create_ex(&reader, "audio.stream_reader", NULL, &opt);
    if (st != LOOM_OK) {
        loom_tensor_free(mp4);
        return demo_fail();
    }
    loom_attrs *a;
    /* audio: 3200 frames = 0.2 s at 16 kHz, mono; video: 5 fps, 80x60 gray, one frame a chunk */
    loom_attrs_new(&a);
    loom_attrs_set_int(a, "frames_per_chunk", 3200);
    loom_attrs_set_int(a, "sample_rate", 16000);
    loom_attrs_set_int(a, "num_channels", 1);
    loom_tensor *idx = NULL;
    int rc = method("add audio", "audio.stream_reader_add_basic_audio_stream", a, &idx, 1);
    loom_attrs_free(a);
    loom_tensor_free(idx);
    idx = NULL;
    if (rc != DEMO_OK)
        goto done;
    loom_attrs_new(&a);
    loom_attrs_set_int(a, "frames_per_chunk", 1);
    loom_attrs_set_float(a, "frame_rate", 5);
    loom_attrs_set_int(a, "width", 80);
    loom_attrs_set_int(a, "height", 60);
    loom_attrs_set_string(a, "format", "gray");
    rc = method("add video", "audio.stream_reader_add_basic_video_stream", a, &idx, 1);
    loom_attrs_free(a);
    loom_tensor_free(idx);
    if (rc != DEMO_OK)
        goto done;
    printf("  %-7s %-9s %-10s %-9s %s\n", "chunk", "audio pts", "audio RMS", "video pts", "mean brightness");
    for (int k = 0, eof = 0; rc == DEMO_OK && k < 100; k++) {
        if (!eof) {
            loom_tensor *e = NULL;
            if ((rc = method(k == 0 ? "fill buffer" : NULL, "audio.stream_reader_fill_buffer", NULL, &e, 1)) != DEMO_OK)
                break;
            eof = (int)*(int64_t *)loom_data(e);
            loom_tensor_free(e);
        }
        loom_tensor *ch[2][2] = { { NULL, NULL }, { NULL, NULL } };
        for (int s = 0; s < 2 && rc == DEMO_OK; s++) {
            loom_attrs_new(&a);
            loom_attrs_set_int(a, "output", s);
            rc = method(k > 0 ? NULL : s ? "pop video" : "pop audio", "audio.stream_reader_pop_chunk", a, ch[s], 2);
            loom_attrs_free(a);
        }
        if (rc == DEMO_OK && ch[0][0]->shape[0] == 0 && ch[1][0]->shape[0] == 0) {
            for (int s = 0; s < 2; s++)
                loom_tensor_free(ch[s][0]), loom_tensor_free(ch[s][1]);
            break;
        }
        if (rc == DEMO_OK) {
            double rms = 0, bright = 0;
            const float *x = loom_data(ch[0][0]);
            for (int64_t i = 0; i < ch[0][0]->shape[0]; i++)
                rms += (double)x[i] * x[i];
            rms = ch[0][0]->shape[0] ? sqrt(rms / (double)ch[0][0]->shape[0]) : 0;
            const uint8_t *p = loom_data(ch[1][0]);
            int64_t np = loom_numel(ch[1][0]);
            for (int64_t i = 0; i < np; i++)
                bright += p[i];
            bright = np ? bright / (double)np : 0;
            char ap[16] = "-", vp[16] = "-";
            if (ch[0][0]->shape[0])
                snprintf(ap, sizeof ap, "%.3f s", *(double *)loom_data(ch[0][1]));
            if (np)
                snprintf(vp, sizeof vp, "%.3f s", *(double *)loom_data(ch[1][1]));
            printf("  %-7d %-9s %-10.4f %-9s %.1f\n", k, ap, rms, vp, bright);
        }
        for (int s = 0; s < 2; s++)
            loom_tensor_free(ch[s][0]), loom_tensor_free(ch[s][1]);
    }
done:
    loom_object_free(reader);
    loom_tensor_free(mp4);
    return rc;
}
