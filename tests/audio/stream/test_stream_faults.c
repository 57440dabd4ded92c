/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_stream_faults.c - audio.stream_reader on bad arguments and bad
** media: each refusal names the argument or says what is wrong with the
** source; truncated and corrupted media, a read callback that fails, a
** pipe that closes half way: an error or a short read, never a crash or
** a hang (run under ASan+UBSan by tools/dev test). The seeded edits are
** a fixed sample (ST_EDITS per file, default 40; LOOM_STREAM_EDITS
** raises it) of single-byte and short-run overwrites of every test file.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "loom/stream_io.h"
#include "stream_test_util.h"
#include "tu_ops.h"

static const char *const files[] = { "tone.wav", "tone.flac", "tone.mp3", "tone_aac.mp4", "tone_opus.ogg",
                                     "av_h264.mp4", "av_vp9.webm" };

/* A reader's creation that fails: the status and a message containing `want`. */
static void refuse_create(const char *attrs, loom_status want_st, const char *want)
{
    loom_attrs *a;
    loom_attrs_new(&a);
    char *s = strdup(attrs), *save = NULL;
    for (char *kv = strtok_r(s, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        loom_attrs_set_string(a, kv, eq + 1);
    }
    free(s);
    loom_object *o = NULL;
    loom_status st = loom_object_create(&o, "audio.stream_reader", a, NULL);
    loom_attrs_free(a);
    if (st != want_st || strstr(loom_last_error(), want) == NULL)
        fail_msg("%s: status %d (want %d), message \"%s\" (want \"%s\")", attrs, st, want_st, loom_last_error(), want);
    assert_null(o);
}

static void refuse_call(loom_object *r, const char *op, const char *attrs, loom_status want_st, const char *want)
{
    loom_tensor *out[2] = { NULL, NULL };
    loom_status st = st_call(r, op, attrs, out, strstr(op, "seek") != NULL ? 0 : 1);
    if (st != want_st || strstr(loom_last_error(), want) == NULL)
        fail_msg("%s(%s): status %d (want %d), message \"%s\" (want \"%s\")", op, attrs, st, want_st, loom_last_error(),
                 want);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    refuse_create("src=/nonexistent/x.wav", LOOM_EFORMAT, "/nonexistent/x.wav");
    refuse_create("src=sine;format=nosuchformat", LOOM_EINVAL, "'format'");
    refuse_create("src=sine;format=lavfi;option=nosuchoption=1", LOOM_EINVAL, "nosuchoption");
    refuse_create("src=sine;format=lavfi;option=novalue", LOOM_EINVAL, "'option'");
    refuse_create("format=lavfi", LOOM_EINVAL, "exactly one source");
    loom_object *r = st_reader("src=sine=duration=0.1;format=lavfi");
    refuse_call(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=4;filter_desc=nosuchfilter", LOOM_EINVAL,
                "'filter_desc'");
    refuse_call(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=4;decoder=nosuchdecoder", LOOM_EINVAL,
                "'decoder'");
    refuse_call(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=4;decoder_option=bogus=1", LOOM_EINVAL,
                "bogus");
    refuse_call(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=4;stream_index=3", LOOM_EINVAL,
                "'stream_index'");
    refuse_call(r, "audio.stream_reader_add_basic_audio_stream", "frames_per_chunk=4;format=s24", LOOM_EINVAL,
                "'format'");
    refuse_call(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=4", LOOM_EINVAL, "video");
    refuse_call(r, "audio.stream_reader_add_audio_stream", "frames_per_chunk=-2", LOOM_EINVAL, "'frames_per_chunk'");
    refuse_call(r, "audio.stream_reader_pop_chunk", "output=0", LOOM_EINVAL, "'output'");
    refuse_call(r, "audio.stream_reader_seek", "timestamp=1;mode=fast", LOOM_EINVAL, "mode");
    loom_object_free(r);
    /* NVDEC needs a reader made on cuda (its outputs are cuda tensors) */
    r = st_reader("src=testsrc=duration=0.1:size=32x32;format=lavfi");
    refuse_call(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=1;hw_accel=cuda", LOOM_EINVAL,
                "'hw_accel' \"cuda\": this reader is on the CPU; make it on a cuda device");
    refuse_call(r, "audio.stream_reader_add_video_stream", "frames_per_chunk=1;hw_accel=vaapi", LOOM_EINVAL,
                "only \"cuda\"");
    assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=1"), 0);
    loom_object_free(r);
    /* wrong callbacks */
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    static const int dummy = 0;
    o.callbacks_name = "loom.read.v0";
    o.callbacks = &dummy;
    loom_object *x = NULL;
    assert_int_equal(loom_object_create_ex(&x, "audio.stream_reader", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), LOOM_STREAM_IO_V1));
}

typedef struct cb {
    const uint8_t *data;
    size_t size, pos, stop_at;
    int fail;
} cb;

static int64_t cb_read(void *user, uint8_t *buf, int64_t size)
{
    cb *m = user;
    if (m->pos >= m->stop_at)
        return m->fail ? -1 : 0;
    size_t k = m->stop_at - m->pos < (size_t)size ? m->stop_at - m->pos : (size_t)size;
    memcpy(buf, m->data + m->pos, k);
    m->pos += k;
    return (int64_t)k;
}

/* Read everything of output 0 through fill_buffer and pop_chunk: the
** status of the first failure (LOOM_OK when the source just ends), the
** frames read. Bounded: a reader that never ends fails the test. */
static loom_status drain_reader(loom_object *r, int64_t *frames)
{
    *frames = 0;
    for (int i = 0; i < 100000; i++) {
        loom_tensor *out[2] = { NULL, NULL };
        loom_status st = st_call(r, "audio.stream_reader_process_packet", NULL, out, 1);
        if (st != LOOM_OK)
            return st;
        int64_t eof = *(int64_t *)loom_data(out[0]);
        loom_tensor_free(out[0]);
        out[0] = NULL;
        while (st_call(r, "audio.stream_reader_pop_chunk", NULL, out, 2) == LOOM_OK && out[0]->shape[0] > 0) {
            *frames += out[0]->shape[0];
            loom_tensor_free(out[0]);
            loom_tensor_free(out[1]);
            out[0] = out[1] = NULL;
        }
        loom_tensor_free(out[0]);
        loom_tensor_free(out[1]);
        if (eof)
            return LOOM_OK;
    }
    fail_msg("the reader did not end after 100000 packets");
    return LOOM_EINTERNAL;
}

/* A read callback that fails half way, and a pipe that closes half way
** (the callback reports the end early, no seek): MP3, which reads as a
** pipe; what comes before the end is what the CLI decodes from the same
** half-file on its standard input. */
static void test_callbacks_fail(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    size_t n;
    uint8_t *data = st_read_file(st_media("tone.mp3"), &n);
    char half[256];
    snprintf(half, sizeof half, "%s/loom-stream-half-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(half);
    assert_true(fd >= 0);
    FILE *hf = fdopen(fd, "wb");
    assert_non_null(hf);
    assert_int_equal(fwrite(data, 1, n / 2, hf), n / 2);
    fclose(hf);
    size_t n_ref;
    uint8_t *ref = st_ffmpeg(&n_ref, "-i pipe:0 -f f32le - < '%s'", half);
    free(ref);
    unlink(half);
    for (int fail = 0; fail < 2; fail++) {
        cb m = { data, n, 0, n / 2, fail };
        loom_stream_io io = { sizeof io, &m, cb_read, NULL };
        loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
        o.callbacks_name = LOOM_STREAM_IO_V1;
        o.callbacks = &io;
        loom_object *r = NULL;
        if (loom_object_create_ex(&r, "audio.stream_reader", NULL, &o) != LOOM_OK)
            fail_msg("a reader on callbacks: %s", loom_last_error());
        assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_audio_stream", "frames_per_chunk=960;buffer_chunk_size=-1"), 0);
        int64_t frames;
        loom_status st = drain_reader(r, &frames);
        if (fail) {
            assert_int_equal(st, LOOM_EFORMAT);
            assert_non_null(strstr(loom_last_error(), "read callback"));
        } else {
            /* the pipe closed: what came before it, then the end */
            if (st != LOOM_OK)
                fail_msg("a pipe closed half way: %s", loom_last_error());
            assert_int_equal(frames, (int64_t)(n_ref / 8));
        }
        loom_object_free(r);
    }
    free(data);
}

static loom_status decode_bytes(const uint8_t *data, size_t n, int video)
{
    loom_tensor *src;
    int64_t len = (int64_t)n;
    uint8_t *copy = malloc(n ? n : 1);      /* exact size: a read past the end is a heap overflow */
    memcpy(copy, data, n);
    assert_int_equal(loom_tensor_wrap(&src, copy, LOOM_DTYPE_U8, 1, &len, NULL, NULL), LOOM_OK);
    loom_attrs *a;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "media_type", video ? "video" : "audio");
    if (!video)
        loom_attrs_set_int(a, "sample_rate", 8000);
    const loom_tensor *in[1] = { src };
    loom_tensor *out[2] = { NULL, NULL };
    loom_status st = loom_run("audio.stream_decode", in, 1, a, out, 1, NULL);
    if (st == LOOM_OK) {
        const uint8_t *p = loom_data(out[0]);
        size_t nb = loom_tensor_nbytes(out[0]);
        unsigned sum = 0;
        for (size_t i = 0; i < nb; i++)
            sum += p[i];
        (void)sum;
        loom_tensor_free(out[0]);
    } else if (loom_last_error()[0] == '\0')
        fail_msg("a failure without a message");
    loom_attrs_free(a);
    loom_tensor_free(src);
    free(copy);
    return st;
}

/* Every file cut at 9 points: an error that says why, or fewer frames. */
static void test_truncated(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n;
        uint8_t *data = st_read_file(st_media(files[f]), &n);
        for (int k = 0; k < 9; k++) {
            size_t cut = n * (size_t)k / 9;
            decode_bytes(data, cut, 0);
            if (strncmp(files[f], "av_", 3) == 0)
                decode_bytes(data, cut, 1);
        }
        free(data);
    }
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Seeded edits of every file: a byte, or a run of up to 8, overwritten at a
** random place (the headers get a share of their own: the first 512 bytes). */
static void test_seeded_edits(void **state)
{
    (void)state;
    ST_NEED_MEDIA();
    const char *env = getenv("LOOM_STREAM_EDITS");
    const int edits = env != NULL ? atoi(env) : 40;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n;
        uint8_t *data = st_read_file(st_media(files[f]), &n);
        uint8_t *work = malloc(n);
        uint32_t seed = 12345u + (uint32_t)f;
        int failed = 0;
        for (int e = 0; e < edits; e++) {
            memcpy(work, data, n);
            int runs = 1 + (int)(lcg(&seed) % 3);
            for (int k = 0; k < runs; k++) {
                size_t span = (lcg(&seed) & 1) ? (n < 512 ? n : 512) : n;
                size_t at = lcg(&seed) % span, len = 1 + lcg(&seed) % 8;
                for (size_t i = at; i < at + len && i < n; i++)
                    work[i] = (uint8_t)lcg(&seed);
            }
            failed += decode_bytes(work, n, strncmp(files[f], "av_", 3) == 0 && (e & 1)) != LOOM_OK;
        }
        fprintf(stderr, "%s: %d edits, %d refused\n", files[f], edits, failed);
        free(work);
        free(data);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments), cmocka_unit_test(test_callbacks_fail),
        cmocka_unit_test(test_truncated), cmocka_unit_test(test_seeded_edits),
    };
    return cmocka_run_group_tests_name("audio_stream_faults", tests, st_setup, st_teardown);
}
