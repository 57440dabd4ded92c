/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_stream_writer.c - audio.stream_writer: media written chunk by chunk
** and read back by audio.stream_reader (itself checked against the ffmpeg
** CLI in test_stream.c):
**   - WAV (pcm_s16le) and FLAC: lossless, so the samples come back bit for
**     bit; the bytes written to memory equal those written to a file;
**   - AAC in MP4, Opus in Ogg, H.264 (libx264) + AAC in MP4, VP9 + Opus in
**     WebM: stream info, durations, pts, and the content within a stated
**     SNR / PSNR of what was written;
**   - every file is read to its end by ffprobe and `ffmpeg -f null`
**     without a word on stderr;
**   - the refusals: chunk dtype and shape, stream index, unknown encoder,
**     format or option, calls out of order, writing after close.
** Chunks are cut at sizes that are not the encoders' frame sizes (AAC
** 1024, Opus 960), so the fixed-frame buffering is exercised.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream_test_util.h"
#include "tu_ops.h"

static char tmp_dir[256];

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    snprintf(tmp_dir, sizeof tmp_dir, "%s/loom-writer-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(tmp_dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_dir);
    return tu_teardown(state);
}

static const char *tmp(const char *name)
{
    static char buf[4][512];
    static int slot;
    char *b = buf[slot++ % 4];
    snprintf(b, 512, "%s/%s", tmp_dir, name);
    return b;
}

/* ------------------------------------------------------------- the media */

/* Two tones (440 Hz left, 660 Hz right) at half scale plus a little
** deterministic noise in the low bits, [frames, 2]. */
static float *tone_f32(int64_t frames, int rate)
{
    float *x = malloc((size_t)frames * 2 * sizeof *x);
    uint32_t s = 12345;
    for (int64_t i = 0; i < frames; i++) {
        const double t = (double)i / rate;
        s = s * 1664525u + 1013904223u;
        const double e = ((double)(s >> 8) / (1 << 24) - 0.5) * 1e-3;
        x[2 * i] = (float)(0.5 * sin(2 * M_PI * 440 * t) + e);
        x[2 * i + 1] = (float)(0.3 * sin(2 * M_PI * 660 * t) - e);
    }
    return x;
}

static int16_t *tone_s16(int64_t frames, int rate)
{
    float *f = tone_f32(frames, rate);
    int16_t *x = malloc((size_t)frames * 2 * sizeof *x);
    for (int64_t i = 0; i < 2 * frames; i++)
        x[i] = (int16_t)lrintf(f[i] * 32767.0f);
    free(f);
    return x;
}

/* A moving colour gradient, [frames, 3, h, w] u8: smooth, so a lossy video
** codec keeps it well. */
static uint8_t *gradient(int64_t frames, int h, int w)
{
    uint8_t *x = malloc((size_t)(frames * 3 * h * w));
    for (int64_t k = 0; k < frames; k++)
        for (int y = 0; y < h; y++)
            for (int c = 0; c < w; c++) {
                uint8_t *p = x + k * 3 * h * w + y * w + c;
                p[0] = (uint8_t)(40 + 2 * c + 3 * k);
                p[h * w] = (uint8_t)(30 + 3 * y + 2 * k);
                p[2 * h * w] = (uint8_t)(128 + 60 * sin(0.1 * (c + y) + 0.2 * (double)k));
            }
    return x;
}

/* ------------------------------------------------------------ the writer */

static void call_ok(loom_object *w, const char *op, const char *attrs)
{
    if (st_call(w, op, attrs, NULL, 0) != LOOM_OK)
        fail_msg("%s(%s): %s", op, attrs ? attrs : "", loom_last_error());
}

/* rows [frames, row_elems] of `dtype` in chunks of `chunk` frames. */
static void write_rows(loom_object *w, const char *op, int i, const void *data, loom_dtype dtype, int64_t frames,
                       int32_t ndim, const int64_t *row_shape, int64_t chunk)
{
    size_t row = loom_dtype_size(dtype);
    for (int32_t d = 1; d < ndim; d++)
        row *= (size_t)row_shape[d - 1];
    for (int64_t at = 0; at < frames; at += chunk) {
        int64_t shape[4] = { frames - at < chunk ? frames - at : chunk, 0, 0, 0 };
        for (int32_t d = 1; d < ndim; d++)
            shape[d] = row_shape[d - 1];
        loom_tensor *t;
        assert_int_equal(loom_tensor_wrap(&t, (uint8_t *)data + (size_t)at * row, dtype, ndim, shape, NULL, NULL),
                         LOOM_OK);
        char a[32];
        snprintf(a, sizeof a, "i=%d", i);
        const loom_tensor *in[1] = { t };
        if (st_call_in(w, op, a, in, 1, NULL, 0) != LOOM_OK)
            fail_msg("%s: %s", op, loom_last_error());
        loom_tensor_free(t);
    }
}

static void write_audio(loom_object *w, int i, const void *x, loom_dtype dtype, int64_t frames, int64_t channels,
                        int64_t chunk)
{
    write_rows(w, "audio.stream_writer_write_audio_chunk", i, x, dtype, frames, 2, &channels, chunk);
}

static void write_video(loom_object *w, int i, const uint8_t *x, int64_t frames, int h, int wd, int64_t chunk)
{
    const int64_t row[3] = { 3, h, wd };
    write_rows(w, "audio.stream_writer_write_video_chunk", i, x, LOOM_DTYPE_U8, frames, 4, row, chunk);
}

/* ------------------------------------------------------------ read back */

static loom_object *reader_on(const char *path)
{
    char a[600];
    snprintf(a, sizeof a, "src=%s", path);
    return st_reader(a);
}

/* Every frame of the one output `stream_attrs` adds, read to the end. */
static st_chunks *read_back(const char *path, const char *op, const char *stream_attrs)
{
    loom_object *r = reader_on(path);
    assert_int_equal(st_call_i64(r, op, stream_attrs), 0);
    st_chunks *c = malloc(sizeof *c);
    st_read_all(r, 1, 0, c);
    loom_object_free(r);
    return c;
}

static int64_t total_frames(const st_chunks *c)
{
    int64_t n = 0;
    for (int64_t k = 0; k < c->n_chunks; k++)
        n += c->frames[k];
    return n;
}

static double snr_db(const float *want, const float *got, int64_t n)
{
    double s = 0, e = 0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)want[i] * want[i];
        e += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
    }
    return 10 * log10(s / (e > 0 ? e : 1e-300));
}

static double psnr_db(const uint8_t *want, const uint8_t *got, size_t n)
{
    double e = 0;
    for (size_t i = 0; i < n; i++)
        e += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
    e /= (double)n;
    return 10 * log10(255.0 * 255.0 / (e > 0 ? e : 1e-300));
}

/* The source stream info of stream i: codec name, sample rate or width. */
static void assert_src_info(const char *path, int i, const char *codec, double sample_rate, int64_t channels_or_width,
                            int64_t height)
{
    loom_object *r = reader_on(path);
    loom_tensor *out[11] = { 0 };
    char a[16];
    snprintf(a, sizeof a, "i=%d", i);
    if (st_call(r, "audio.stream_reader_src_stream_info", a, out, 11) != LOOM_OK)
        fail_msg("src_stream_info: %s", loom_last_error());
    char name[64] = { 0 };
    memcpy(name, loom_data(out[1]), (size_t)out[1]->shape[0] < sizeof name - 1 ? (size_t)out[1]->shape[0] : 0);
    if (strcmp(name, codec) != 0)
        fail_msg("%s stream %d: codec %s, want %s", path, i, name, codec);
    if (height == 0) {
        assert_true(*(double *)loom_data(out[3]) == sample_rate);
        assert_int_equal(*(int64_t *)loom_data(out[4]), channels_or_width);
    } else {
        assert_int_equal(*(int64_t *)loom_data(out[5]), channels_or_width);
        assert_int_equal(*(int64_t *)loom_data(out[6]), height);
    }
    for (int k = 0; k < 11; k++)
        loom_tensor_free(out[k]);
    loom_object_free(r);
}

static uint8_t *writer_bytes(loom_object *w, size_t *n)
{
    loom_tensor *t = NULL;
    if (st_call(w, "audio.stream_writer_bytes", NULL, &t, 1) != LOOM_OK)
        fail_msg("bytes: %s", loom_last_error());
    *n = (size_t)t->shape[0];
    uint8_t *b = malloc(*n ? *n : 1);
    memcpy(b, loom_data(t), *n);
    loom_tensor_free(t);
    return b;
}

/* ------------------------------------------------------------- lossless */

/* s16 stereo 44.1 kHz, 1.3 s in chunks of 1000 frames, to a file and to
** memory: the same bytes; read back bit for bit as s16. */
static void lossless_case(const char *file, const char *format, const char *codec)
{
    const int64_t n = 57330;
    int16_t *x = tone_s16(n, 44100);
    const char *path = tmp(file);
    char a[600];
    snprintf(a, sizeof a, "dst=%s", path);
    loom_object *w = st_writer(a);
    snprintf(a, sizeof a, "format=%s", format);
    loom_object *m = st_writer(a);
    for (int k = 0; k < 2; k++) {
        loom_object *o = k ? m : w;
        assert_int_equal(st_call_i64(o, "audio.stream_writer_add_audio_stream", "sample_rate=44100;num_channels=2;format=s16"), 0);
        call_ok(o, "audio.stream_writer_open", NULL);
        write_audio(o, 0, x, LOOM_DTYPE_I16, n, 2, 1000);
        call_ok(o, "audio.stream_writer_close", NULL);
    }
    loom_object_free(w);
    size_t n_mem, n_file;
    uint8_t *mem = writer_bytes(m, &n_mem);
    loom_object_free(m);
    uint8_t *on_disk = st_read_file(path, &n_file);
    assert_int_equal(n_mem, n_file);
    assert_memory_equal(mem, on_disk, n_file);
    free(mem);
    free(on_disk);
    assert_true(st_cli_accepts(path));
    assert_src_info(path, 0, codec, 44100, 2, 0);
    st_chunks *c = read_back(path, "audio.stream_reader_add_basic_audio_stream",
                             "frames_per_chunk=4096;buffer_chunk_size=-1;format=s16");
    assert_int_equal(c->dtype, LOOM_DTYPE_I16);
    assert_int_equal(c->n_bytes, (size_t)n * 4);
    assert_memory_equal(c->bytes, x, (size_t)n * 4);
    assert_true(c->pts[0] == 0.0);
    st_chunks_free(c);
    free(c);
    free(x);
}

static void test_wav(void **state)
{
    (void)state;
    lossless_case("tone.wav", "wav", "pcm_s16le");
}

static void test_flac(void **state)
{
    (void)state;
    lossless_case("tone.flac", "flac", "flac");
}

/* ---------------------------------------------------------------- lossy */

/* f32 stereo at `rate`, 1 s in chunks of 1000 frames; read back as f32 at
** the same rate: as many frames as written up to the encoder's last
** frame's padding, pts from 0, within min_snr dB. */
static void lossy_audio_case(const char *file, const char *stream_attrs, int rate, const char *codec,
                             int64_t frame_size, double min_snr)
{
    const int64_t n = rate;
    float *x = tone_f32(n, rate);
    const char *path = tmp(file);
    char a[600];
    snprintf(a, sizeof a, "dst=%s", path);
    loom_object *w = st_writer(a);
    snprintf(a, sizeof a, "sample_rate=%d;num_channels=2;%s", rate, stream_attrs);
    assert_int_equal(st_call_i64(w, "audio.stream_writer_add_audio_stream", a), 0);
    call_ok(w, "audio.stream_writer_open", NULL);
    write_audio(w, 0, x, LOOM_DTYPE_F32, n, 2, 1000);
    call_ok(w, "audio.stream_writer_close", NULL);
    loom_object_free(w);
    assert_true(st_cli_accepts(path));
    assert_src_info(path, 0, codec, rate, 2, 0);
    st_chunks *c = read_back(path, "audio.stream_reader_add_basic_audio_stream",
                             "frames_per_chunk=4096;buffer_chunk_size=-1;format=flt");
    const int64_t got = total_frames(c);
    if (got < n || got > n + frame_size)
        fail_msg("%s: %lld frames read back, %lld written (frame size %lld)", file, (long long)got, (long long)n,
                 (long long)frame_size);
    assert_true(fabs(c->pts[0]) < 1e-9);
    const double snr = snr_db(x, (const float *)c->bytes, 2 * n);
    if (snr < min_snr)
        fail_msg("%s: SNR %.2f dB, want >= %.1f", file, snr, min_snr);
    fprintf(stderr, "%s: %lld frames, SNR %.2f dB\n", file, (long long)got, snr);
    st_chunks_free(c);
    free(c);
    free(x);
}

/* FFmpeg's own AAC encoder at 128 kb/s on two tones: measured 27.5 dB
** (aligned: one sample off gives 21 dB); 22 dB leaves room for other
** FFmpeg builds and still fails on a shift or a lost frame. */
static void test_aac_mp4(void **state)
{
    (void)state;
    lossy_audio_case("tone_aac.mp4", "bit_rate=128000", 44100, "aac", 1024, 22);
}

/* Opus at 96 kb/s, 48 kHz (libopus; its first format is s16, so the f32
** chunks are converted by the graph): measured 42 dB (one sample off:
** 24 dB); 32 dB. */
static void test_opus_ogg(void **state)
{
    (void)state;
    lossy_audio_case("tone_opus.ogg", "encoder=libopus;bit_rate=96000", 48000, "opus", 960, 32);
}

/* Video 64x48 rgb24 at 10 fps, 2 s, with a 16 kHz tone track, through
** `encoder` (+ its options) in `file`: the streams' info, 20 frames at
** pts k / 10, each within min_psnr dB of what was written (yuv420p
** subsampling of the colour gradient included), the audio's frame count. */
static void av_case(const char *file, const char *video_attrs, const char *vcodec, const char *acodec,
                    int64_t aframe, double min_psnr)
{
    const int h = 48, wd = 64, rate = 16000;
    const int64_t nf = 20, na = 2 * rate;
    uint8_t *v = gradient(nf, h, wd);
    float *x = tone_f32(na, rate);
    const char *path = tmp(file);
    char a[600];
    snprintf(a, sizeof a, "dst=%s", path);
    loom_object *w = st_writer(a);
    snprintf(a, sizeof a, "frame_rate=10;width=%d;height=%d;%s", wd, h, video_attrs);
    assert_int_equal(st_call_i64(w, "audio.stream_writer_add_video_stream", a), 0);
    assert_int_equal(st_call_i64(w, "audio.stream_writer_add_audio_stream",
                                 "sample_rate=16000;num_channels=2;encoder_num_channels=1"), 1);
    call_ok(w, "audio.stream_writer_set_metadata", "metadata=title=loom test\\;artist=loom");
    call_ok(w, "audio.stream_writer_open", NULL);
    /* interleaved as a muxer wants them: 0.5 s of each in turn */
    for (int k = 0; k < 4; k++) {
        write_video(w, 0, v + (size_t)(k * 5) * 3 * h * wd, 5, h, wd, 3);
        write_audio(w, 1, x + (size_t)k * 8000 * 2, LOOM_DTYPE_F32, 8000, 2, 1500);
    }
    call_ok(w, "audio.stream_writer_flush", NULL);
    call_ok(w, "audio.stream_writer_close", NULL);
    loom_object_free(w);
    assert_true(st_cli_accepts(path));
    assert_src_info(path, 0, vcodec, 0, wd, h);
    st_chunks *c = read_back(path, "audio.stream_reader_add_basic_video_stream",
                             "frames_per_chunk=1;buffer_chunk_size=-1;format=rgb24");
    assert_int_equal(c->n_chunks, nf);
    double worst = 1e9;
    /* WebM: Opus's first packet starts 312 samples (6.5 ms) before 0, and the
    ** muxer shifts every stream by that, rounded to its 1 ms time base (the
    ** ffmpeg CLI's WebM files start at 0.007 s too) */
    const double start = strstr(file, ".webm") != NULL ? 0.007 : 0.0;
    for (int64_t k = 0; k < nf; k++) {
        if (fabs(c->pts[k] - start - 0.1 * (double)k) > 1e-6)
            fail_msg("%s frame %lld: pts %.6f", file, (long long)k, c->pts[k]);
        const size_t fb = (size_t)(3 * h * wd);
        double p = psnr_db(v + (size_t)k * fb, c->bytes + (size_t)k * fb, fb);
        worst = p < worst ? p : worst;
    }
    fprintf(stderr, "%s: worst frame PSNR %.2f dB\n", file, worst);
    if (worst < min_psnr)
        fail_msg("%s: a frame's PSNR is %.2f dB, want >= %.1f", file, worst, min_psnr);
    st_chunks_free(c);
    free(c);
    loom_object *r = reader_on(path);
    loom_tensor *meta = NULL;
    assert_int_equal(st_call(r, "audio.stream_reader_metadata", NULL, &meta, 1), LOOM_OK);
    char tags[512] = { 0 };
    memcpy(tags, loom_data(meta), (size_t)meta->shape[0] < sizeof tags - 1 ? (size_t)meta->shape[0] : 0);
    loom_tensor_free(meta);
    loom_object_free(r);
    if (strstr(tags, "title=loom test") == NULL)
        fail_msg("%s: the tags are \"%s\"", file, tags);
    /* the audio stream: mono (encoder_num_channels=1), 2 s up to one frame of padding */
    c = read_back(path, "audio.stream_reader_add_basic_audio_stream", "frames_per_chunk=4000;buffer_chunk_size=-1");
    const int64_t got = total_frames(c);
    const int64_t want = strcmp(acodec, "opus") == 0 ? 2 * 48000 : na;
    if (got < want || got > want + aframe)
        fail_msg("%s: %lld audio frames read back, want %lld (+ up to %lld)", file, (long long)got, (long long)want,
                 (long long)aframe);
    st_chunks_free(c);
    free(c);
    free(v);
    free(x);
}

/* libx264 at its defaults (crf 23) on a smooth 64x48 gradient: measured
** 38 dB for the worst frame; 30 dB. */
static void test_h264_aac_mp4(void **state)
{
    (void)state;
    av_case("av_h264.mp4", "encoder=libx264;encoder_option=preset=ultrafast", "h264", "aac", 1024, 30);
}

/* libvpx-vp9 (realtime, 200 kb/s) + Opus in WebM: measured 35 dB; 28 dB. */
static void test_vp9_webm(void **state)
{
    (void)state;
    av_case("av_vp9.webm", "bit_rate=200000;encoder_option=deadline=realtime\\;cpu-used=8", "vp9", "opus", 960, 28);
}

/* ------------------------------------------------------------- refusals */

static void expect_fail(loom_status st, loom_status want, const char *part)
{
    if (st != want)
        fail_msg("status %d, want %d (%s)", (int)st, (int)want, loom_last_error());
    if (strstr(loom_last_error(), part) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", loom_last_error(), part);
}

static loom_status try_create(const char *attrs)
{
    loom_object *o = NULL;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    char *s = strdup(attrs), *save = NULL;
    for (char *kv = strtok_r(s, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        assert_int_equal(loom_attrs_set_string(a, kv, eq + 1), LOOM_OK);
    }
    free(s);
    loom_status st = loom_object_create(&o, "audio.stream_writer", a, NULL);
    loom_attrs_free(a);
    loom_object_free(o);
    return st;
}

static loom_status try_write(loom_object *w, const char *op, const char *attrs, loom_dtype dtype, int32_t ndim,
                             const int64_t *shape)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dtype, ndim, shape, NULL), LOOM_OK);
    const loom_tensor *in[1] = { t };
    loom_status st = st_call_in(w, op, attrs, in, 1, NULL, 0);
    loom_tensor_free(t);
    return st;
}

static void test_refusals(void **state)
{
    (void)state;
    expect_fail(try_create("format=nosuchmuxer"), LOOM_EINVAL, "'format'");
    expect_fail(try_create("dst=/tmp/x.nosuchextension"), LOOM_EINVAL, "'format'");
    expect_fail(try_create("dst="), LOOM_EINVAL, "'dst'");
    /* memory without format */
    loom_object *o = NULL;
    expect_fail(loom_object_create(&o, "audio.stream_writer", NULL, NULL), LOOM_EINVAL, "'format'");

    loom_object *w = st_writer("format=wav");
    const char *add = "audio.stream_writer_add_audio_stream";
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;encoder=nosuchcodec", NULL, 0), LOOM_EINVAL,
                "'encoder'");
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;encoder=libx264", NULL, 0), LOOM_EINVAL,
                "not an audio encoder");
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;format=s24", NULL, 0), LOOM_EINVAL, "'format'");
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;encoder_format=fltp", NULL, 0), LOOM_EINVAL,
                "'encoder_format'");
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;encoder_option=nosuchoption=1", NULL, 0),
                LOOM_EINVAL, "'encoder_option'");
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1;filter_desc=nosuchfilter", NULL, 0), LOOM_EINVAL,
                "'filter_desc'");
    expect_fail(st_call(w, "audio.stream_writer_add_video_stream", "frame_rate=5;width=8;height=8", NULL, 0),
                LOOM_EINVAL, "no default video codec");
    expect_fail(st_call(w, "audio.stream_writer_open", NULL, NULL, 0), LOOM_EINVAL, "add a stream");
    const int64_t s2[2] = { 10, 1 };
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s2), LOOM_EINVAL,
                "open first");
    /* a refused stream left nothing behind: this is stream 0 */
    assert_int_equal(st_call_i64(w, add, "sample_rate=8000;num_channels=1"), 0);
    expect_fail(st_call(w, "audio.stream_writer_open", "option=nosuchoption=1", NULL, 0), LOOM_EINVAL, "'option'");
    loom_object_free(w);

    w = st_writer("format=wav");
    assert_int_equal(st_call_i64(w, add, "sample_rate=8000;num_channels=1"), 0);
    call_ok(w, "audio.stream_writer_open", NULL);
    expect_fail(st_call(w, add, "sample_rate=8000;num_channels=1", NULL, 0), LOOM_EINVAL, "before open");
    const int64_t s2c[2] = { 10, 2 }, s1[1] = { 10 }, s4[4] = { 1, 3, 8, 8 };
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F64, 2, s2), LOOM_EINVAL,
                "'chunk' is f64");
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s2c), LOOM_EINVAL,
                "'chunk' must be [frames, 1]");
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 1, s1), LOOM_EINVAL,
                "'chunk' must be");
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=3", LOOM_DTYPE_F32, 2, s2), LOOM_EINVAL,
                "'i' 3");
    expect_fail(try_write(w, "audio.stream_writer_write_video_chunk", "i=0", LOOM_DTYPE_U8, 4, s4), LOOM_EINVAL,
                "an audio stream");
    assert_int_equal(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s2), LOOM_OK);
    const int64_t s0[2] = { 0, 1 };
    assert_int_equal(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s0), LOOM_OK);
    call_ok(w, "audio.stream_writer_flush", NULL);
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s2), LOOM_EINVAL,
                "flushed");
    call_ok(w, "audio.stream_writer_close", NULL);
    call_ok(w, "audio.stream_writer_close", NULL);      /* a second close does nothing */
    expect_fail(try_write(w, "audio.stream_writer_write_audio_chunk", "i=0", LOOM_DTYPE_F32, 2, s2), LOOM_EINVAL,
                "closed");
    expect_fail(st_call(w, "audio.stream_writer_open", NULL, NULL, 0), LOOM_EINVAL, "closed");
    size_t n;
    uint8_t *b = writer_bytes(w, &n);
    assert_true(n == 44 + 20 || n > 44);     /* a header and 10 f32 -> s16 samples (and the encoder tag) */
    free(b);
    loom_object_free(w);

    char a[600];
    snprintf(a, sizeof a, "dst=%s", tmp("v.mp4"));
    w = st_writer(a);
    expect_fail(st_call(w, "audio.stream_writer_add_video_stream", "frame_rate=5;width=8;height=8;hw_accel=cuda", NULL, 0),
                LOOM_EINVAL, "'hw_accel'");
    expect_fail(st_call(w, "audio.stream_writer_add_video_stream", "frame_rate=5;width=8;height=8;format=rgba", NULL, 0),
                LOOM_EINVAL, "'format'");
    assert_int_equal(st_call_i64(w, "audio.stream_writer_add_video_stream",
                                 "frame_rate=5;width=8;height=8;encoder=mpeg4"), 0);
    expect_fail(st_call(w, "audio.stream_writer_bytes", NULL, NULL, 0), LOOM_EINVAL, "not to memory");
    call_ok(w, "audio.stream_writer_open", NULL);
    const int64_t bad[4] = { 1, 3, 8, 9 };
    expect_fail(try_write(w, "audio.stream_writer_write_video_chunk", "i=0", LOOM_DTYPE_U8, 4, bad), LOOM_EINVAL,
                "'chunk' must be [frames, 3, 8, 8]");
    expect_fail(try_write(w, "audio.stream_writer_write_video_chunk", "i=0", LOOM_DTYPE_F32, 4, s4), LOOM_EINVAL,
                "'chunk'");
    expect_fail(try_write(w, "audio.stream_writer_write_video_chunk", "i=0;pts=1e300", LOOM_DTYPE_U8, 4, s4),
                LOOM_EINVAL, "'pts'");
    assert_int_equal(try_write(w, "audio.stream_writer_write_video_chunk", "i=0;pts=0", LOOM_DTYPE_U8, 4, s4), LOOM_OK);
    loom_object_free(w);        /* freed without close: the trailer is still written */
    assert_true(st_cli_accepts(tmp("v.mp4")));
}

/* yuv420p, yuv444p and gray chunks: what the reader gives in that format
** comes back (FFV1, lossless) unchanged; yuv420p's chroma, repeated 2x2 by
** the reader, is averaged back per block by the writer. */
static void test_pixel_formats(void **state)
{
    (void)state;
    const char *fmts[] = { "yuv420p", "yuv444p", "gray", "rgb24", "bgr24" };
    const int h = 16, wd = 24;
    for (int f = 0; f < 5; f++) {
        const int c = strcmp(fmts[f], "gray") == 0 ? 1 : 3;
        const size_t fb = (size_t)(c * h * wd);
        uint8_t *v = malloc(4 * fb);
        for (size_t i = 0; i < 4 * fb; i++)
            v[i] = (uint8_t)(i * 7 + i / 97);
        if (f == 0)     /* chroma constant over each 2x2 block, as the reader gives it */
            for (int k = 0; k < 4; k++)
                for (int p = 1; p < 3; p++)
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < wd; x++)
                            v[k * fb + (size_t)(p * h * wd + y * wd + x)] =
                                v[k * fb + (size_t)(p * h * wd + (y & ~1) * wd + (x & ~1))];
        const char *path = tmp("pix.mkv");
        char a[600];
        snprintf(a, sizeof a, "dst=%s", path);
        loom_object *w = st_writer(a);
        snprintf(a, sizeof a, "frame_rate=25;width=%d;height=%d;format=%s;encoder=ffv1;encoder_format=%s", wd, h, fmts[f],
                 f == 2 ? "gray" : f >= 3 ? "bgr0" : fmts[f]);
        assert_int_equal(st_call_i64(w, "audio.stream_writer_add_video_stream", a), 0);
        call_ok(w, "audio.stream_writer_open", NULL);
        const int64_t row[3] = { c, h, wd };
        write_rows(w, "audio.stream_writer_write_video_chunk", 0, v, LOOM_DTYPE_U8, 4, 4, row, 3);
        call_ok(w, "audio.stream_writer_close", NULL);
        loom_object_free(w);
        snprintf(a, sizeof a, "frames_per_chunk=-1;buffer_chunk_size=-1;format=%s", fmts[f]);
        st_chunks *got = read_back(path, "audio.stream_reader_add_basic_video_stream", a);
        if (got->n_bytes != 4 * fb || memcmp(got->bytes, v, 4 * fb) != 0)
            fail_msg("%s: the pictures read back differ from those written", fmts[f]);
        st_chunks_free(got);
        free(got);
        free(v);
    }
}

/* pts: a chunk's pts moves the stream's clock (a gap of 0.8 s here), the
** next chunk follows on; the reader gives them back (FFV1 in Matroska,
** 1 ms time base). */
static void test_pts(void **state)
{
    (void)state;
    const int h = 8, wd = 8;
    uint8_t *v = gradient(6, h, wd);
    const char *path = tmp("pts.mkv");
    char a[600];
    snprintf(a, sizeof a, "dst=%s", path);
    loom_object *w = st_writer(a);
    assert_int_equal(st_call_i64(w, "audio.stream_writer_add_video_stream", "frame_rate=10;width=8;height=8;encoder=ffv1"),
                     0);
    call_ok(w, "audio.stream_writer_open", NULL);
    const int64_t row[3] = { 3, h, wd }, shape[4] = { 2, 3, h, wd };
    write_rows(w, "audio.stream_writer_write_video_chunk", 0, v, LOOM_DTYPE_U8, 2, 4, row, 2);
    loom_tensor *t;
    assert_int_equal(loom_tensor_wrap(&t, v + 2 * 3 * h * wd, LOOM_DTYPE_U8, 4, shape, NULL, NULL), LOOM_OK);
    const loom_tensor *in[1] = { t };
    assert_int_equal(st_call_in(w, "audio.stream_writer_write_video_chunk", "i=0;pts=1.0", in, 1, NULL, 0), LOOM_OK);
    loom_tensor_free(t);
    write_rows(w, "audio.stream_writer_write_video_chunk", 0, v + 4 * 3 * h * wd, LOOM_DTYPE_U8, 2, 4, row, 2);
    call_ok(w, "audio.stream_writer_close", NULL);
    loom_object_free(w);
    st_chunks *c = read_back(path, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=1;buffer_chunk_size=-1");
    const double want[6] = { 0, 0.1, 1.0, 1.1, 1.2, 1.3 };
    assert_int_equal(c->n_chunks, 6);
    for (int k = 0; k < 6; k++)
        if (fabs(c->pts[k] - want[k]) > 1e-9)
            fail_msg("frame %d: pts %.6f, want %.3f", k, c->pts[k], want[k]);
    st_chunks_free(c);
    free(c);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wav),          cmocka_unit_test(test_flac),
        cmocka_unit_test(test_aac_mp4),      cmocka_unit_test(test_opus_ogg),
        cmocka_unit_test(test_h264_aac_mp4), cmocka_unit_test(test_vp9_webm),
        cmocka_unit_test(test_pixel_formats), cmocka_unit_test(test_pts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("audio_stream_writer", tests, setup, teardown);
}
