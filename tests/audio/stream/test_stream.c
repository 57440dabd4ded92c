/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_stream.c - audio.stream_reader and audio.stream_decode against the
** ffmpeg CLI's raw decode of the same files with the same filter graph
** (tools/gen_stream_media.sh makes them): the chunks' samples and pixels
** bit for bit (same libavcodec decoder, same libavfilter graph), their
** boundaries (frames_per_chunk, a short last chunk), their pts; seek in the
** three modes against the CLI's -ss (accurate seek: where `precise` lands;
** -noaccurate_seek: the key frame `key` lands on); the drop policy
** (torchaudio's: the oldest chunks go, counted); every kind of source.
*/
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "loom/stream_io.h"
#include "stream_test_util.h"
#include "tu_ops.h"

static const char *const audio_files[] = { "tone.wav", "tone.flac", "tone.mp3", "tone_aac.mp4", "tone_opus.ogg",
                                           "av_h264.mp4", "av_vp9.webm" };

static void assert_bytes_equal(const uint8_t *got, size_t n_got, const uint8_t *want, size_t n_want, const char *what)
{
    if (n_got != n_want)
        fail_msg("%s: %zu bytes, the ffmpeg CLI gives %zu", what, n_got, n_want);
    for (size_t i = 0; i < n_got; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %zu differs from the ffmpeg CLI's", what, i);
}

/* Chunks of 4000 frames at 16 kHz: the CLI's f32le decode, cut the same
** way; every chunk but the last full; pts k * 0.25 s after the first. */
static void test_audio_chunks(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    for (size_t f = 0; f < sizeof audio_files / sizeof audio_files[0]; f++) {
        const char *path = st_media(audio_files[f]);
        char a[600];
        snprintf(a, sizeof a, "src=%s", path);
        loom_object *r = st_reader(a);
        assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_audio_stream",
                                     "frames_per_chunk=4000;buffer_chunk_size=-1;sample_rate=16000"), 0);
        st_chunks *c = malloc(sizeof *c);
        st_read_all(r, 1, 0, c);
        size_t n_ref;
        uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -vn -af aresample=16000,aformat=sample_fmts=fltp -f f32le -", path);
        assert_bytes_equal(c->bytes, c->n_bytes, ref, n_ref, audio_files[f]);
        assert_int_equal(c->dtype, LOOM_DTYPE_F32);
        int64_t channels = strncmp(audio_files[f], "av_", 3) == 0 ? 1 : 2;
        int64_t total = (int64_t)(n_ref / 4 / (size_t)channels);
        assert_int_equal(c->n_chunks, (total + 3999) / 4000);
        for (int64_t k = 0; k < c->n_chunks; k++) {
            assert_int_equal(c->frames[k], k + 1 < c->n_chunks ? 4000 : total - 4000 * (c->n_chunks - 1));
            /* pts are sample counts in a 1/16000 time base: exact in f64 */
            /* WebM's time base is 1 ms: a chunk that starts inside a frame gets that frame's rounded pts */
            double tol = strstr(audio_files[f], ".webm") != NULL ? 1e-3 : 1e-9;
            if (fabs(c->pts[k] - (c->pts[0] + (double)k * 0.25)) > tol)
                fail_msg("%s chunk %lld: pts %.9f", audio_files[f], (long long)k, c->pts[k]);
        }
        /* where the first frame is presented (ffprobe -show_entries frame=pts_time): 0, but MP3 starts after
        ** the encoder's delay (LAME's 1105 samples at 44.1 kHz) and MP4's edit list hides AAC's priming */
        double first = strcmp(audio_files[f], "tone.mp3") == 0 ? 0.025057 : 0.0;
        if (fabs(c->pts[0] - first) > 1.0 / 16000)
            fail_msg("%s: first pts %.9f, want %.6f", audio_files[f], c->pts[0], first);
        st_chunks_free(c);
        free(c);
        free(ref);
        loom_object_free(r);
    }
}

/* The video and audio of one file through one reader at once: 5 fps
** scaled to 32x24 rgb24 in chunks of 3 frames ([3, 3, 24, 32]), against
** the CLI's rawvideo (HWC, transposed here to CHW). */
static void test_video_chunks(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    const char *files[] = { "av_h264.mp4", "av_vp9.webm" };
    for (int f = 0; f < 2; f++) {
        const char *path = st_media(files[f]);
        char a[600];
        snprintf(a, sizeof a, "src=%s", path);
        loom_object *r = st_reader(a);
        assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_video_stream",
                                     "frames_per_chunk=3;buffer_chunk_size=-1;frame_rate=5;width=32;height=24"), 0);
        assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_audio_stream",
                                     "frames_per_chunk=1600;buffer_chunk_size=-1;sample_rate=16000"), 1);
        st_chunks *c = malloc(sizeof *c);
        st_read_all(r, 2, 0, c);
        size_t n_ref;
        uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -an -vf fps=5,scale=width=32:height=24,format=pix_fmts=rgb24 "
                                         "-fps_mode passthrough -f rawvideo -", path);
        const size_t frame = 3 * 24 * 32;
        assert_int_equal(c->n_bytes, n_ref);
        uint8_t *chw = malloc(n_ref);
        for (size_t i = 0; i < n_ref / frame; i++)
            for (size_t p = 0; p < 3; p++)
                for (size_t y = 0; y < 24 * 32; y++)
                    chw[i * frame + p * 768 + y] = ref[i * frame + y * 3 + p];
        assert_bytes_equal(c->bytes, c->n_bytes, chw, n_ref, files[f]);
        assert_int_equal(c->n_chunks, 4);     /* 2 s at 5 fps: 10 frames = 3 + 3 + 3 + 1 */
        assert_int_equal(c->frames[3], 1);
        for (int k = 0; k < 4; k++)
            assert_true(fabs(c->pts[k] - 0.6 * k) < 1e-9);
        st_chunks_free(c);
        free(c);
        free(chw);
        free(ref);
        loom_object_free(r);
    }
}

/* torchaudio's trap: 1000-frame chunks, the default buffer of 3 chunks,
** everything processed before the first pop: only the last 3 chunks are
** left, and the reader says how many went. */
static void test_drop_oldest(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    char a[600];
    snprintf(a, sizeof a, "src=%s", st_media("tone.wav"));
    loom_object *r = st_reader(a);
    assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_audio_stream",
                                 "frames_per_chunk=1000;sample_rate=16000"), 0);
    assert_int_equal(st_call(r, "audio.stream_reader_process_all_packets", NULL, NULL, 0), LOOM_OK);
    st_chunks *c = malloc(sizeof *c);
    st_read_all(r, 1, 0, c);
    assert_int_equal(c->n_chunks, 3);
    assert_true(fabs(c->pts[0] - 21000.0 / 16000) < 1e-9);
    size_t n_ref;
    uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -af aresample=16000,aformat=sample_fmts=fltp -f f32le -",
                             st_media("tone.wav"));
    assert_bytes_equal(c->bytes, c->n_bytes, ref + 21000 * 8, n_ref - 21000 * 8, "the last 3 chunks");
    loom_tensor *out[4] = { NULL };
    assert_int_equal(st_call(r, "audio.stream_reader_out_stream_info", "i=0", out, 4), LOOM_OK);
    assert_int_equal(*(int64_t *)loom_data(out[2]), 21);
    assert_int_equal(*(int64_t *)loom_data(out[3]), 21000);
    for (int i = 0; i < 4; i++)
        loom_tensor_free(out[i]);
    st_chunks_free(c);
    free(c);
    free(ref);
    loom_object_free(r);
}

/* frames_per_chunk=-1: one pop gives everything buffered. */
static void test_unchunked(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    char a[600];
    snprintf(a, sizeof a, "src=%s", st_media("tone.flac"));
    loom_object *r = st_reader(a);
    st_call_i64(r, "audio.stream_reader_add_basic_audio_stream", "frames_per_chunk=-1;format=s16p");
    assert_int_equal(st_call(r, "audio.stream_reader_process_all_packets", NULL, NULL, 0), LOOM_OK);
    st_chunks *c = malloc(sizeof *c);
    st_read_all(r, 1, 0, c);
    assert_int_equal(c->n_chunks, 1);
    assert_int_equal(c->frames[0], 66150);
    assert_int_equal(c->dtype, LOOM_DTYPE_I16);
    size_t n_ref;
    uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -f s16le -", st_media("tone.flac"));
    assert_bytes_equal(c->bytes, c->n_bytes, ref, n_ref, "flac as s16");
    st_chunks_free(c);
    free(c);
    free(ref);
    loom_object_free(r);
}

/* Seek, then read to the end: the data equals the CLI's from -ss. */
static void seek_case(const char *file, int video, double t, const char *mode, const char *cli_seek, double want_pts)
{
    char a[600];
    snprintf(a, sizeof a, "src=%s", st_media(file));
    loom_object *r = st_reader(a);
    st_call_i64(r, video ? "audio.stream_reader_add_basic_video_stream" : "audio.stream_reader_add_basic_audio_stream",
                video ? "frames_per_chunk=4;buffer_chunk_size=-1" : "frames_per_chunk=4000;buffer_chunk_size=-1;sample_rate=16000");
    /* read a little first, as a user would, so that the seek has state to flush */
    st_call_i64(r, "audio.stream_reader_fill_buffer", NULL);
    snprintf(a, sizeof a, "timestamp=%.17g;mode=%s", t, mode);
    assert_int_equal(st_call(r, "audio.stream_reader_seek", a, NULL, 0), LOOM_OK);
    st_chunks *c = malloc(sizeof *c);
    st_read_all(r, 1, 0, c);
    if (fabs(c->pts[0] - want_pts) > 1e-9)
        fail_msg("%s seek %g %s: first pts %.9f, want %.9f", file, t, mode, c->pts[0], want_pts);
    if (cli_seek != NULL) {
        /* seek(0) discards nothing (torchaudio: "users expect the beginning of the data"), so its reference
        ** is the decode without -ss (the CLI's -ss 0 would trim frames before 0) */
        char ss[64] = "";
        if (t > 0)
            snprintf(ss, sizeof ss, "-ss %.17g", t);
        size_t n_ref;
        uint8_t *ref = video ? st_ffmpeg(&n_ref, "%s %s -i '%s' -an -vf format=pix_fmts=rgb24 -fps_mode passthrough "
                                                 "-f rawvideo -", cli_seek, ss, st_media(file))
                             : st_ffmpeg(&n_ref, "%s %s -i '%s' -vn -af aresample=16000,aformat=sample_fmts=fltp "
                                                 "-f f32le -", cli_seek, ss, st_media(file));
        if (video) {       /* compare the frame count and the first frame's first plane row */
            assert_int_equal(c->n_bytes, n_ref);
            for (size_t x = 0; x < 64; x++)
                assert_int_equal(c->bytes[x], ref[3 * x]);
        } else
            assert_bytes_equal(c->bytes, c->n_bytes, ref, n_ref, file);
        free(ref);
    }
    st_chunks_free(c);
    free(c);
    loom_object_free(r);
}

static void test_seek(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    /* PCM WAV: every packet is a key frame; all three modes land on sample int(t * sr) */
    seek_case("tone.wav", 0, 0.5, "precise", "", 0.5);
    seek_case("tone.wav", 0, 0.5, "key", "", 0.5);
    seek_case("tone.wav", 0, 0.5, "any", "", 0.5);
    /* H.264 with a key frame every 10 frames (1 s): precise lands on the first
    ** frame at or after t, as the CLI's accurate -ss; key on the key frame before */
    seek_case("av_h264.mp4", 1, 1.45, "precise", "", 1.5);
    seek_case("av_h264.mp4", 1, 1.45, "key", "-noaccurate_seek", 1.0);
    /* WebM's video starts 7 ms in (the muxer's shift for Opus's pre-skip): frames at 0.007 + k / 10 */
    seek_case("av_vp9.webm", 1, 1.45, "precise", "", 1.507);
    /* AAC in MP4: precise drops whole decoded frames (1024 samples at 44.1 kHz) that start before t, as
    ** torchaudio's StreamProcessor does; the first kept one starts at 22 * 1024 / 44100 s (8173 / 16000 after
    ** aresample's rounding). The CLI trims inside that frame, so there is no CLI reference here */
    seek_case("tone_aac.mp4", 0, 0.5, "precise", NULL, 8173.0 / 16000);
    /* seek(0) in a container whose packets are all key frames: the start */
    seek_case("tone.flac", 0, 0.0, "precise", "", 0.0);
}

/* The bytes of a file as a u8 tensor named src, a file named src, and read
** callbacks with and without seek: the same chunks as the path. */
typedef struct mem_cb {
    const uint8_t *data;
    size_t size, pos;
    int64_t fail_after;     /* bytes before the read callback fails (-1: never) */
    int64_t end_after;      /* bytes before it reports the end early (-1: never) */
} mem_cb;

static int64_t cb_read(void *user, uint8_t *buf, int64_t size)
{
    mem_cb *m = user;
    if (m->fail_after >= 0 && (int64_t)m->pos >= m->fail_after)
        return -5;
    size_t end = m->end_after >= 0 && (size_t)m->end_after < m->size ? (size_t)m->end_after : m->size;
    size_t left = m->pos < end ? end - m->pos : 0;
    size_t k = (size_t)size < left ? (size_t)size : left;
    memcpy(buf, m->data + m->pos, k);
    m->pos += k;
    return (int64_t)k;
}

static int64_t cb_seek(void *user, int64_t off, int whence)
{
    mem_cb *m = user;
    if (whence == LOOM_STREAM_IO_SIZE)
        return (int64_t)m->size;
    int64_t base = whence == 0 ? 0 : whence == 1 ? (int64_t)m->pos : (int64_t)m->size;
    if (base + off < 0 || base + off > (int64_t)m->size)
        return -1;
    m->pos = (size_t)(base + off);
    return (int64_t)m->pos;
}

static loom_object *reader_from(const char *file, int how, mem_cb *m, loom_tensor **bytes_t, loom_status *st)
{
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    static loom_stream_io io;
    loom_named_file nf = { "src", st_media(file) };
    loom_named_tensor nt;
    if (how == 0) {
        int64_t n = (int64_t)m->size;
        assert_int_equal(loom_tensor_wrap(bytes_t, (void *)m->data, LOOM_DTYPE_U8, 1, &n, NULL, NULL), LOOM_OK);
        nt.name = "src";
        nt.tensor = *bytes_t;
        o.n_tensors = 1;
        o.tensors = &nt;
    } else if (how == 1) {
        o.n_files = 1;
        o.files = &nf;
    } else {
        io = (loom_stream_io){ sizeof io, m, cb_read, how == 2 ? cb_seek : NULL };
        o.callbacks_name = LOOM_STREAM_IO_V1;
        o.callbacks = &io;
    }
    loom_object *r = NULL;
    *st = loom_object_create_ex(&r, "audio.stream_reader", NULL, &o);
    return r;
}

static void test_sources(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    const char *files[] = { "tone_aac.mp4", "tone_opus.ogg", "tone.mp3" };
    for (int f = 0; f < 3; f++) {
        size_t n;
        uint8_t *data = st_read_file(st_media(files[f]), &n);
        size_t n_ref;
        uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -af aresample=16000,aformat=sample_fmts=fltp -f f32le -",
                                 st_media(files[f]));
        /* a pipe cannot be read twice: MP3's demuxer then cannot check the LAME header against the end
        ** and keeps the padding, as the CLI does reading the same pipe */
        size_t n_pipe;
        uint8_t *ref_pipe = st_ffmpeg(&n_pipe, "-i pipe:0 -af aresample=16000,aformat=sample_fmts=fltp -f f32le - < '%s'",
                                      st_media(files[f]));
        for (int how = 0; how < 4; how++) {
            /* MP4 needs seeks (its index); the rest also read as a pipe (how 3) */
            if (how == 3 && f == 0)
                continue;
            mem_cb m = { data, n, 0, -1, -1 };
            loom_tensor *bt = NULL;
            loom_status st;
            loom_object *r = reader_from(files[f], how, &m, &bt, &st);
            if (st != LOOM_OK)
                fail_msg("%s source %d: %s", files[f], how, loom_last_error());
            st_call_i64(r, "audio.stream_reader_add_basic_audio_stream",
                        "frames_per_chunk=2000;buffer_chunk_size=-1;sample_rate=16000");
            st_chunks *c = malloc(sizeof *c);
            st_read_all(r, 1, 0, c);
            if (how == 3)
                assert_bytes_equal(c->bytes, c->n_bytes, ref_pipe, n_pipe, files[f]);
            else
                assert_bytes_equal(c->bytes, c->n_bytes, ref, n_ref, files[f]);
            st_chunks_free(c);
            free(c);
            loom_object_free(r);
            loom_tensor_free(bt);
        }
        free(ref_pipe);
        free(ref);
        free(data);
    }
}

/* lavfi as a device-style input (torchaudio's format="lavfi"): a sine and
** testsrc, with their metadata. */
static void test_lavfi(void **state)
{
    (void)state;
    loom_object *r = st_reader("src=sine=frequency=1000:sample_rate=8000:duration=0.5;format=lavfi");
    assert_int_equal(st_call_i64(r, "audio.stream_reader_num_src_streams", NULL), 1);
    loom_tensor *info[11] = { NULL };
    assert_int_equal(st_call(r, "audio.stream_reader_src_stream_info", "i=0", info, 11), LOOM_OK);
    assert_int_equal(info[0]->shape[0], 5);
    assert_memory_equal(loom_data(info[0]), "audio", 5);
    assert_true(*(double *)loom_data(info[3]) == 8000.0);
    assert_int_equal(*(int64_t *)loom_data(info[4]), 1);
    for (int i = 0; i < 11; i++)
        loom_tensor_free(info[i]);
    st_call_i64(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=1000;buffer_chunk_size=-1");
    st_chunks *c = malloc(sizeof *c);
    st_read_all(r, 1, 0, c);
    assert_int_equal(c->n_chunks, 4);
    assert_int_equal(c->dtype, LOOM_DTYPE_I16);    /* lavfi sine is s16: the anull graph keeps it */
    st_chunks_free(c);
    loom_object_free(r);
    r = st_reader("src=testsrc=size=32x24:rate=4:duration=1;format=lavfi");
    st_call_i64(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=2;format=gray");
    st_read_all(r, 1, 0, c);
    assert_int_equal(c->n_chunks, 2);
    assert_int_equal(c->n_bytes, 4 * 24 * 32);
    st_chunks_free(c);
    free(c);
    loom_object_free(r);
}

/* audio.stream_decode: the one-shot op equals the reader's chunks. */
static void test_decode_op(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    loom_attrs *a;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "src", st_media("av_h264.mp4"));
    loom_attrs_set_int(a, "sample_rate", 16000);
    loom_tensor *out[2] = { NULL, NULL };
    assert_int_equal(loom_run("audio.stream_decode", NULL, 0, a, out, 2, NULL), LOOM_OK);
    size_t n_ref;
    uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -vn -ar 16000 -f f32le -", st_media("av_h264.mp4"));
    assert_int_equal(out[0]->ndim, 2);
    assert_int_equal(out[0]->shape[1], 1);
    assert_bytes_equal(loom_data(out[0]), loom_tensor_nbytes(out[0]), ref, n_ref, "stream_decode");
    free(ref);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    loom_attrs_set_string(a, "media_type", "video");
    out[0] = out[1] = NULL;
    assert_int_equal(loom_run("audio.stream_decode", NULL, 0, a, out, 1, NULL), LOOM_OK);
    assert_int_equal(out[0]->ndim, 4);
    assert_int_equal(out[0]->shape[0], 20);
    assert_int_equal(out[0]->shape[1], 3);
    assert_int_equal(out[0]->shape[2], 48);
    assert_int_equal(out[0]->shape[3], 64);
    loom_tensor_free(out[0]);
    loom_attrs_free(a);
}

/* Pictures at their own size to rgb24 / bgr24 (the reader runs swscale's
** yuv2rgb conversion itself, in slices): byte for byte the CLI's
** format=pix_fmts=... output, with and without an fps filter before it. */
static void test_video_direct(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    const char *files[] = { "av_h264.mp4", "av_vp9.webm" };
    const char *fmts[] = { "rgb24", "bgr24" };
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 4; k++) {
            const char *fmt = fmts[k % 2];
            const int fps = k >= 2;
            char a[600];
            snprintf(a, sizeof a, "src=%s", st_media(files[f]));
            loom_object *r = st_reader(a);
            snprintf(a, sizeof a, "frames_per_chunk=3;buffer_chunk_size=-1;format=%s%s", fmt, fps ? ";frame_rate=5" : "");
            assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_video_stream", a), 0);
            st_chunks *c = malloc(sizeof *c);
            st_read_all(r, 1, 0, c);
            size_t n_ref;
            uint8_t *ref = st_ffmpeg(&n_ref, "-i '%s' -an -vf %sformat=pix_fmts=%s -fps_mode passthrough -f rawvideo -",
                                     st_media(files[f]), fps ? "fps=5," : "", fmt);
            const size_t frame = 3 * 48 * 64;
            assert_int_equal(c->n_bytes, n_ref);
            uint8_t *chw = malloc(n_ref);
            for (size_t i = 0; i < n_ref / frame; i++)
                for (size_t p = 0; p < 3; p++)
                    for (size_t y = 0; y < 48 * 64; y++)
                        chw[i * frame + p * 48 * 64 + y] = ref[i * frame + y * 3 + p];
            assert_bytes_equal(c->bytes, c->n_bytes, chw, n_ref, files[f]);
            free(chw);
            free(ref);
            st_chunks_free(c);
            free(c);
            loom_object_free(r);
        }
}

/* A popped chunk is its own memory (a block of the output's pool, adopted
** as the tensor with no copy): the decoder never writes into a chunk a
** caller holds, each held chunk has its own 64-byte-aligned block, and the
** chunks outlive their reader (freed after it, and on another order). */
static void test_held_chunks_are_the_callers(void **state)
{
    (void)state;
    enum { MAX_HELD = 16 };
    loom_tensor *held[MAX_HELD][2] = { { NULL } };
    uint8_t *copy[MAX_HELD] = { NULL };
    int n = 0;
    loom_object *r = st_reader("src=testsrc=size=32x24:rate=10:duration=2;format=lavfi");
    st_call_i64(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=3;buffer_chunk_size=-1;format=rgb24");
    for (;;) {
        int64_t eof = st_call_i64(r, "audio.stream_reader_fill_buffer", NULL);
        for (;;) {
            assert_true(n < MAX_HELD);
            assert_int_equal(st_call(r, "audio.stream_reader_pop_chunk", "output=0", held[n], 2), LOOM_OK);
            if (held[n][0]->shape[0] == 0) {
                loom_tensor_free(held[n][0]);
                loom_tensor_free(held[n][1]);
                break;
            }
            size_t nb = loom_tensor_nbytes(held[n][0]);
            assert_int_equal((uintptr_t)loom_data(held[n][0]) % 64, 0);
            for (int k = 0; k < n; k++)
                assert_ptr_not_equal(loom_data(held[k][0]), loom_data(held[n][0]));
            copy[n] = malloc(nb);
            assert_non_null(copy[n]);
            memcpy(copy[n], loom_data(held[n][0]), nb);
            n++;
            if (!eof)
                break;
        }
        if (eof)
            break;
    }
    assert_int_equal(n, 7);                 /* 20 frames: 6 chunks of 3 and one of 2 */
    assert_int_equal(held[6][0]->shape[0], 2);
    loom_object_free(r);                    /* the chunks stay the caller's */
    for (int k = n - 1; k >= 0; k -= 2) {   /* every other one first, newest first */
        assert_memory_equal(loom_data(held[k][0]), copy[k], loom_tensor_nbytes(held[k][0]));
        loom_tensor_free(held[k][0]);
        loom_tensor_free(held[k][1]);
        free(copy[k]);
    }
    for (int k = n - 2; k >= 0; k -= 2) {
        assert_memory_equal(loom_data(held[k][0]), copy[k], loom_tensor_nbytes(held[k][0]));
        loom_tensor_free(held[k][0]);
        loom_tensor_free(held[k][1]);
        free(copy[k]);
    }
}

/* Chunks freed on other threads while the reader decodes the next ones:
** the blocks go back to the pool concurrently with the reader taking
** blocks from it (ASan and TSan see any race on the pool). */
typedef struct chunk_freer { loom_tensor *t[2]; uint8_t first; int ok; } chunk_freer;

static void *free_chunk(void *p)
{
    chunk_freer *f = p;
    f->ok = ((const uint8_t *)loom_data(f->t[0]))[0] == f->first;
    loom_tensor_free(f->t[0]);
    loom_tensor_free(f->t[1]);
    return NULL;
}

static void test_chunks_freed_on_other_threads(void **state)
{
    (void)state;
    enum { MAX_CHUNKS = 64 };
    pthread_t th[MAX_CHUNKS];
    chunk_freer f[MAX_CHUNKS];
    int n = 0;
    loom_object *r = st_reader("src=testsrc=size=64x48:rate=25:duration=2;format=lavfi");
    st_call_i64(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=1;buffer_chunk_size=2;format=rgb24");
    for (int eof = 0; !eof && n < MAX_CHUNKS;) {
        eof = (int)st_call_i64(r, "audio.stream_reader_fill_buffer", NULL);
        memset(f[n].t, 0, sizeof f[n].t);
        assert_int_equal(st_call(r, "audio.stream_reader_pop_chunk", "output=0", f[n].t, 2), LOOM_OK);
        if (f[n].t[0]->shape[0] == 0) {
            loom_tensor_free(f[n].t[0]);
            loom_tensor_free(f[n].t[1]);
            continue;
        }
        f[n].first = ((const uint8_t *)loom_data(f[n].t[0]))[0];
        assert_int_equal(pthread_create(&th[n], NULL, free_chunk, &f[n]), 0);
        n++;
    }
    assert_true(n >= 40);
    for (int k = 0; k < n; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_true(f[k].ok);
    }
    loom_object_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audio_chunks), cmocka_unit_test(test_video_chunks), cmocka_unit_test(test_drop_oldest),
        cmocka_unit_test(test_unchunked),    cmocka_unit_test(test_seek),         cmocka_unit_test(test_sources),
        cmocka_unit_test(test_lavfi),        cmocka_unit_test(test_decode_op),    cmocka_unit_test(test_video_direct),
        cmocka_unit_test(test_held_chunks_are_the_callers), cmocka_unit_test(test_chunks_freed_on_other_threads),
    };
    return cmocka_run_group_tests_name("audio_stream", tests, st_setup, st_teardown);
}
