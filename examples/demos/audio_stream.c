/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_stream.c - `loom demo stream`: audio.stream_reader on a short
** video with a tone track, made by FFmpeg's lavfi device (testsrc's
** colour bars and a counter, and a 440 Hz sine that fades in over 2 s, as
** the two outputs of one filter graph), read chunk by chunk as a model
** would take it: the audio resampled to 16 kHz mono in 0.2 s chunks and
** the video at 5 fps scaled to 80x60 gray, one frame per chunk; each line
** gives the chunks' timestamps, the audio's RMS level and the picture's
** mean brightness.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

DEMO_DEFINE("stream", 95,
            "audio.stream_reader_add_basic_audio_stream,audio.stream_reader_add_basic_video_stream,"
            "audio.stream_reader_fill_buffer,audio.stream_reader_pop_chunk",
            "StreamReader on FFmpeg: a video with a tone read as 16 kHz audio and 5 fps scaled frames, chunk by chunk");

static loom_object *reader;

static int method(const char *label, const char *op, loom_attrs *a, loom_tensor **out, int32_t n)
{
    loom_call_options o = LOOM_CALL_OPTIONS_INIT;
    o.object = reader;
    if (loom_run(op, NULL, 0, a, out, n, &o) != LOOM_OK)
        return demo_fail();
    if (label != NULL)      /* NULL: a repeat of a call already recorded */
        demo_record(label);
    return DEMO_OK;
}

int demo_run(void)
{
    loom_attrs *a;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "src", "testsrc=size=160x120:rate=25:duration=2[out0];"
                                    "sine=frequency=440:sample_rate=44100:duration=2,afade=t=in:d=2[out1]");
    loom_attrs_set_string(a, "format", "lavfi");
    loom_status st = loom_object_create(&reader, "audio.stream_reader", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK)
        return demo_fail();
    printf("  source: lavfi testsrc 160x120 at 25 fps + a 440 Hz tone at 44.1 kHz, 2 s\n");
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
    return rc;
}
