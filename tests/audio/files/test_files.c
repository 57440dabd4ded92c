/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_files.c - audio.load, audio.info and audio.save against soundfile
** (tools/gen_audio_files_goldens.py: the shipped WAV, FLAC, OGG/Vorbis and
** Opus files and their soundfile.read decodes), bit-exact round trips of
** every integer encoding, and the refusals of bad arguments, each naming
** its argument. Truncated and edited files: test_files_truncated.c.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "files_test_util.h"
#include "tu_env.h"

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-audio-files-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return tu_setup(state);
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        return -1;
    return tu_teardown(state);
}

static int lossy(const ft_file *f) { return strcmp(f->subtype, "VORBIS") == 0 || strcmp(f->subtype, "OPUS") == 0; }

/* The decode of src bytes or of uri, with attrs (more k=v after uri). */
static loom_tensor *load(const ft_file *f, int from_bytes, const char *more, loom_tensor **rate)
{
    char attrs[600];
    loom_tensor *out[2], *bytes = from_bytes ? ft_bytes(f->name) : NULL;
    char rel[160];
    snprintf(rel, sizeof rel, "audio/files/%s", f->name);
    if (from_bytes)
        snprintf(attrs, sizeof attrs, "%s", more != NULL ? more : "-");
    else
        snprintf(attrs, sizeof attrs, "uri=%s%s%s", tu_data_path(rel), more != NULL ? ";" : "", more != NULL ? more : "");
    const loom_tensor *in[1] = { bytes };
    if (at_run("audio.load", in, from_bytes, attrs, out, 2) != LOOM_OK)
        fail_msg("%s: %s", f->name, loom_last_error());
    loom_tensor_free(bytes);
    if (rate != NULL)
        *rate = out[1];
    else
        loom_tensor_free(out[1]);
    return out[0];
}

static loom_tensor *want(const ft_file *f, const char *suffix)
{
    char name[160];
    snprintf(name, sizeof name, "audio/files/%s_%s", f->stem, suffix);
    return tu_npy(name);
}

/* float32 decodes: lossless files give soundfile's bits; the lossy
** decoders (libvorbis, libopus) of this system and soundfile's wheel may
** be other builds: within 1e-4 of full scale, far below their coding noise */
static void check_float(const ft_file *f, const loom_tensor *got, const loom_tensor *ref, const char *what)
{
    if (lossy(f)) {
        const double err = at_rel_error(got, ref, what);
        if (!(err < 1e-4))
            fail_msg("%s %s: error %.3g", f->name, what, err);
    } else {
        tu_assert_identical(got, ref, what);
    }
}

static void load_matches_soundfile(void **state)
{
    ft_file files[16];
    const int n = ft_files(files, 16);
    (void)state;
    assert_true(n >= 9);
    for (int i = 0; i < n; i++) {
        const ft_file *f = &files[i];
        loom_tensor *rate, *ref = want(f, "float");
        for (int bytes = 0; bytes < 2; bytes++) {
            loom_tensor *got = load(f, bytes, NULL, &rate);
            check_float(f, got, ref, bytes ? "load(src)" : "load(uri)");
            assert_int_equal(*(int64_t *)loom_data(rate), f->rate);
            loom_tensor_free(got);
            loom_tensor_free(rate);
        }
        loom_tensor_free(ref);
        ref = want(f, "offset");
        loom_tensor *got = load(f, 0, "frame_offset=37;num_frames=101", NULL);
        check_float(f, got, ref, "frame_offset 37, num_frames 101");
        loom_tensor_free(got);
        loom_tensor_free(ref);
        char stem[160];
        snprintf(stem, sizeof stem, "audio/files/%s_native", f->stem);
        if (tu_npy_exists(stem)) {
            ref = tu_npy(stem);
            got = load(f, 0, "normalize=false", NULL);
            tu_assert_identical(got, ref, "normalize=false");
            loom_tensor_free(got);
            loom_tensor_free(ref);
        }
        print_message("%-20s %s: as soundfile\n", f->name, f->subtype);
    }
}

static void channels_last_is_the_transpose(void **state)
{
    ft_file files[16];
    ft_files(files, 16);
    (void)state;
    const ft_file *f = &files[0];       /* pcm16_stereo.wav */
    loom_tensor *a = load(f, 1, NULL, NULL), *b = load(f, 1, "channels_first=false", NULL);
    assert_int_equal(b->shape[0], a->shape[1]);
    assert_int_equal(b->shape[1], a->shape[0]);
    const float *pa = loom_data(a), *pb = loom_data(b);
    for (int64_t c = 0; c < a->shape[0]; c++)
        for (int64_t t = 0; t < a->shape[1]; t++)
            assert_true(pa[c * a->shape[1] + t] == pb[t * a->shape[0] + c]);
    loom_tensor_free(a);
    loom_tensor_free(b);
}

static void info_matches_soundfile(void **state)
{
    ft_file files[16];
    const int n = ft_files(files, 16);
    (void)state;
    for (int i = 0; i < n; i++) {
        loom_tensor *bytes = ft_bytes(files[i].name), *out[5];
        const loom_tensor *in[1] = { bytes };
        assert_int_equal(at_run("audio.info", in, 1, NULL, out, 5), LOOM_OK);
        assert_int_equal(*(int64_t *)loom_data(out[0]), files[i].rate);
        assert_int_equal(*(int64_t *)loom_data(out[1]), files[i].frames);
        assert_int_equal(*(int64_t *)loom_data(out[2]), files[i].channels);
        char enc[32] = { 0 };
        memcpy(enc, loom_data(out[4]), (size_t)loom_numel(out[4]) < 31 ? (size_t)loom_numel(out[4]) : 31);
        const char *sub = files[i].subtype;
        const char *want_enc = strncmp(sub, "PCM_U", 5) == 0 ? "PCM_U" : strcmp(sub, "FLOAT") == 0 ? "PCM_F"
                             : strstr(files[i].name, ".flac") ? "FLAC" : strncmp(sub, "PCM", 3) == 0 ? "PCM_S" : sub;
        assert_string_equal(enc, want_enc);
        const int64_t bits = *(int64_t *)loom_data(out[3]);
        assert_int_equal(bits, strcmp(sub, "PCM_16") == 0 ? 16 : strcmp(sub, "PCM_24") == 0 ? 24
                               : strcmp(sub, "PCM_32") == 0 || strcmp(sub, "FLOAT") == 0 ? 32
                               : strcmp(sub, "PCM_U8") == 0 ? 8 : 0);
        for (int k = 0; k < 5; k++)
            loom_tensor_free(out[k]);
        loom_tensor_free(bytes);
    }
}

/* src as dtype: a seeded full-range signal of the type (i32: 24-bit values << 8 for flac) */
static loom_tensor *integer_signal(loom_dtype dt, int64_t c, int64_t n, int shift24)
{
    const int64_t shape[2] = { c, n };
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dt, 2, shape, NULL), LOOM_OK);
    uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < c * n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        if (dt == LOOM_DTYPE_I16)
            ((int16_t *)loom_data(t))[i] = (int16_t)(s >> 48);
        else if (dt == LOOM_DTYPE_I32)
            ((int32_t *)loom_data(t))[i] = shift24 ? (int32_t)((uint32_t)(s >> 40) << 8) : (int32_t)(s >> 32);
        else if (dt == LOOM_DTYPE_U8)
            ((uint8_t *)loom_data(t))[i] = (uint8_t)(s >> 56);
        else
            ((float *)loom_data(t))[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
    }
    return t;
}

static loom_tensor *save_and_load(const loom_tensor *src, const char *file, const char *save_attrs,
                                  const char *load_attrs)
{
    char path[400], attrs[700];
    loom_tensor *frames, *out[2];
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    snprintf(attrs, sizeof attrs, "uri=%s;sample_rate=16000%s%s", path, save_attrs ? ";" : "", save_attrs ? save_attrs : "");
    const loom_tensor *in[1] = { src };
    if (at_call("audio.save", in, 1, attrs, NULL, &frames) != LOOM_OK)
        fail_msg("save %s: %s", file, loom_last_error());
    assert_int_equal(*(int64_t *)loom_data(frames), src->shape[1]);
    loom_tensor_free(frames);
    snprintf(attrs, sizeof attrs, "uri=%s%s%s", path, load_attrs ? ";" : "", load_attrs ? load_attrs : "");
    if (at_run("audio.load", NULL, 0, attrs, out, 2) != LOOM_OK)
        fail_msg("load %s: %s", file, loom_last_error());
    assert_int_equal(*(int64_t *)loom_data(out[1]), 16000);
    loom_tensor_free(out[1]);
    return out[0];
}

static void integer_round_trips_are_bit_exact(void **state)
{
    static const struct { loom_dtype dt; const char *file, *save; int shift24; } cases[] = {
        { LOOM_DTYPE_I16, "a.wav", NULL, 0 },
        { LOOM_DTYPE_I32, "b.wav", NULL, 0 },
        { LOOM_DTYPE_I32, "c.wav", "bits_per_sample=24", 1 },
        { LOOM_DTYPE_U8, "d.wav", NULL, 0 },
        { LOOM_DTYPE_I16, "e.flac", NULL, 0 },
        { LOOM_DTYPE_I32, "f.flac", NULL, 1 },
        { LOOM_DTYPE_F32, "g.wav", NULL, 0 },
        { LOOM_DTYPE_I16, "h.aiff", NULL, 0 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *src = integer_signal(cases[i].dt, 3, 2500, cases[i].shift24);
        loom_tensor *got = save_and_load(src, cases[i].file, cases[i].save, "normalize=false");
        tu_assert_identical(got, src, cases[i].file);
        loom_tensor_free(got);
        loom_tensor_free(src);
    }
}

/* Vorbis and Opus are lossy: the shape, the rate, and the signal to 20 dB */
static void lossy_round_trips_keep_the_signal(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 16000 };
    loom_tensor *src;
    assert_int_equal(loom_tensor_new(&src, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    float *p = loom_data(src);
    for (int64_t c = 0; c < 2; c++)
        for (int64_t t = 0; t < 16000; t++)
            p[c * 16000 + t] = (float)(0.4 * sin(2 * M_PI * (440.0 + 220 * c) * (double)t / 16000));
    static const char *const files[] = { "v.ogg", "o.opus" };
    for (int i = 0; i < 2; i++) {
        loom_tensor *got = save_and_load(src, files[i], NULL, NULL);
        tu_assert_same_shape(got, src, files[i]);
        double num = 0, den = 0;
        const float *g = loom_data(got);
        /* the codecs' start-up delay and fade: compare the middle */
        for (int64_t c = 0; c < 2; c++)
            for (int64_t t = 4000; t < 12000; t++) {
                num += pow(g[c * 16000 + t] - p[c * 16000 + t], 2);
                den += pow(p[c * 16000 + t], 2);
            }
        print_message("%s: SNR %.1f dB\n", files[i], 10 * log10(den / num));
        assert_true(10 * log10(den / num) > 20);
        loom_tensor_free(got);
    }
    loom_tensor_free(src);
}

static void bad_arguments_are_refused_by_name(void **state)
{
    (void)state;
    loom_tensor *out[2];
    const int64_t s3[3] = { 1, 2, 3 }, s2[2] = { 2, 10 };
    loom_tensor *cube, *i64, *sig = integer_signal(LOOM_DTYPE_I16, 2, 10, 0);
    assert_int_equal(loom_tensor_new(&cube, LOOM_DTYPE_F32, 3, s3, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&i64, LOOM_DTYPE_I64, 2, s2, NULL), LOOM_OK);
    assert_int_equal(at_run("audio.load", NULL, 0, NULL, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "uri"));
    assert_int_not_equal(at_run("audio.load", NULL, 0, "uri=/nonexistent/x.wav", out, 2), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "/nonexistent/x.wav"));
    char attrs[400];
    snprintf(attrs, sizeof attrs, "uri=%s;num_frames=0", tu_data_path("audio/files/pcm16_stereo.wav"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "num_frames"));
    snprintf(attrs, sizeof attrs, "uri=%s;frame_offset=801", tu_data_path("audio/files/pcm16_stereo.wav"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "frame_offset"));
    snprintf(attrs, sizeof attrs, "uri=%s;format=mp4", tu_data_path("audio/files/pcm16_stereo.wav"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "format"));
    /* format holds the file to its container, as a forced demuxer would */
    snprintf(attrs, sizeof attrs, "uri=%s;format=flac", tu_data_path("audio/files/pcm16_stereo.wav"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'format' is 'flac' but the file is WAV"));
    snprintf(attrs, sizeof attrs, "uri=%s;format=vorbis", tu_data_path("audio/files/opus_mono.opus"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'format' is 'vorbis'"));
    snprintf(attrs, sizeof attrs, "uri=%s;format=opus", tu_data_path("audio/files/opus_mono.opus"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_OK);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    snprintf(attrs, sizeof attrs, "uri=%s;format=WAV", tu_data_path("audio/files/pcm16_stereo.wav"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_OK);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    /* a text file is no audio file */
    snprintf(attrs, sizeof attrs, "uri=%s", tu_data_path("audio/files/info.txt"));
    assert_int_equal(at_run("audio.load", NULL, 0, attrs, out, 2), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "libsndfile"));
    const loom_tensor *in[1] = { cube };
    snprintf(attrs, sizeof attrs, "uri=%s/x.wav;sample_rate=8000", tmpdir);
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EINVAL, "src");
    in[0] = i64;
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EINVAL, "src");
    in[0] = sig;
    snprintf(attrs, sizeof attrs, "uri=%s/x.mp4;sample_rate=8000", tmpdir);
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EINVAL, "uri");
    snprintf(attrs, sizeof attrs, "uri=%s/x.wav;sample_rate=8000;encoding=PCM_U;bits_per_sample=16", tmpdir);
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EINVAL, "encoding");
    snprintf(attrs, sizeof attrs, "uri=%s/x.opus;sample_rate=44100", tmpdir);
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EINVAL, "sample_rate");
    snprintf(attrs, sizeof attrs, "uri=/nonexistent/dir/x.wav;sample_rate=8000");
    at_assert_refused("audio.save", in, 1, attrs, LOOM_EIO, "uri");
    loom_tensor_free(cube);
    loom_tensor_free(i64);
    loom_tensor_free(sig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_matches_soundfile),
        cmocka_unit_test(channels_last_is_the_transpose),
        cmocka_unit_test(info_matches_soundfile),
        cmocka_unit_test(integer_round_trips_are_bit_exact),
        cmocka_unit_test(lossy_round_trips_keep_the_signal),
        cmocka_unit_test(bad_arguments_are_refused_by_name),
    };
    return cmocka_run_group_tests_name("audio_files", tests, setup, teardown);
}
