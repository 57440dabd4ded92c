/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_spectral.c - the spectral ops of the audio pack against torch and
** torchaudio (tools/gen_audio_spectral_goldens.py writes
** tests/data/audio/spectral/cases.txt and its .npy files), the stft/istft
** round trip on a long signal, empty batches, and the refusals of bad
** shapes, dtypes and attributes, each naming its argument.
**
** Tolerances, norm-wise (max |got - want| / max |want|):
**   f32       1e-5: FFTW and torch's FFT (pocketfft/MKL) in float32 differ by
**             a few ulp of the largest bin (the error of an n-point FFT
**             grows as log2 n * 6e-8); the issue asks for 1e-5
**   f64       1e-10: the same in double (observed ~1e-15)
**   f64mel    1e-8: f64 mel and MFCC use torchaudio's float32 filter bank
**             and DCT widened (Module.double()); cosf against torch's cos
**             leaves an ulp of a float32 DCT entry (6e-8 relative) in a few
**             entries, which the sum spreads to ~3e-9 (observed)
**   The complex cases (stft of c64 / c128 signals, istft return_complex)
**   use the f32 / f64 classes: one C2C transform per frame, FFTW against
**   pocketfft, has the same log2 n ulp error growth as the real ones.
**   f32table  1e-6: melscale_fbanks and create_dct computed in float32 as
**             torchaudio does; powf/expf/cosf against torch's own vector
**             math differ by an ulp or two
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"
#include "tu_env.h"

static double tolerance(const char *cls)
{
    if (strcmp(cls, "f32") == 0)
        return 1e-5;
    if (strcmp(cls, "f64") == 0)
        return 1e-10;
    if (strcmp(cls, "f64mel") == 0)
        return 1e-8;
    if (strcmp(cls, "f32table") == 0)
        return 1e-6;
    fail_msg("unknown tolerance class %s", cls);
    return 0;
}

static void matches_torch(void **state)
{
    (void)state;
    if (!tu_npy_exists("audio/spectral/stft_hann_f32_input")) {
        print_message("no golden data in tests/data/audio/spectral: run tools/gen_audio_spectral_goldens.py\n");
        skip();
    }
    FILE *f = fopen(tu_data_path("audio/spectral/cases.txt"), "r");
    assert_non_null(f);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char name[128], op[64], cls[16], attrs[768], path[192];
        if (line[0] == '#' || sscanf(line, "%127s %63s %15s %767s", name, op, cls, attrs) != 4)
            continue;
        const loom_tensor *in[2] = { NULL, NULL };
        loom_tensor *x = NULL, *w = NULL, *want, *got;
        snprintf(path, sizeof path, "audio/spectral/%s_input", name);
        if (tu_npy_exists(path))
            in[0] = x = tu_npy(path);
        snprintf(path, sizeof path, "audio/spectral/%s_window", name);
        if (tu_npy_exists(path))
            in[1] = w = tu_npy(path);
        snprintf(path, sizeof path, "audio/spectral/%s_output", name);
        want = tu_npy(path);
        loom_status st = at_call(op, in, x != NULL ? 2 : 0, attrs, "cpu", &got);
        if (st != LOOM_OK)
            fail_msg("%s: %s", name, loom_last_error());
        const double err = at_rel_error(got, want, name), tol = tolerance(cls);
        if (!(err <= tol))
            fail_msg("%s (%s %s): relative error %.3g over %.1g", name, op, attrs, err, tol);
        print_message("%-28s %-26s relative error %.2g (tolerance %.0g)\n", name, op, err, tol);
        loom_tensor_free(x);
        loom_tensor_free(w);
        loom_tensor_free(want);
        loom_tensor_free(got);
        n++;
    }
    fclose(f);
    assert_true(n >= 30);
}

/* 1 minute at 16 kHz through stft and istft (the benchmark's geometry):
** the signal comes back to float32 rounding. */
static void round_trip_restores_the_signal(void **state)
{
    (void)state;
    static const loom_dtype dts[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[2] = { 2, 16000 * (d == 0 ? 6 : 1) };
        loom_tensor *x = at_signal(dts[d], 2, shape, 7), *X, *y;
        const loom_tensor *in[2] = { x, NULL };
        assert_int_equal(at_call("audio.spectrogram", in, 1, "n_fft=400;hop_length=160", "cpu", &X), LOOM_OK);
        assert_int_equal(loom_tensor_dtype_of(X), dts[d] == LOOM_DTYPE_F32 ? LOOM_DTYPE_C64 : LOOM_DTYPE_C128);
        char attrs[96];
        snprintf(attrs, sizeof attrs, "n_fft=400;hop_length=160;length=%lld", (long long)shape[1]);
        in[0] = X;
        assert_int_equal(at_call("audio.inverse_spectrogram", in, 1, attrs, "cpu", &y), LOOM_OK);
        const double err = at_rel_error(y, x, "round trip");
        assert_true(err < (d == 0 ? 1e-5 : 1e-12));
        loom_tensor_free(x);
        loom_tensor_free(X);
        loom_tensor_free(y);
    }
}

/* (re, im) pairs and complex values are the same numbers; istft takes both. */
static void pairs_equal_complex(void **state)
{
    (void)state;
    const int64_t shape[1] = { 300 };
    loom_tensor *x = at_signal(LOOM_DTYPE_F32, 1, shape, 3), *c, *p, *y1, *y2;
    const loom_tensor *in[1] = { x };
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=64", "cpu", &c), LOOM_OK);
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=64;return_complex=false", "cpu", &p), LOOM_OK);
    assert_int_equal(p->ndim, 3);
    assert_int_equal(p->shape[2], 2);
    assert_memory_equal(loom_data(c), loom_data(p), (size_t)loom_numel(p) * 4);
    in[0] = c;
    assert_int_equal(at_call("audio.istft", in, 1, "n_fft=64", "cpu", &y1), LOOM_OK);
    in[0] = p;
    assert_int_equal(at_call("audio.istft", in, 1, "n_fft=64", "cpu", &y2), LOOM_OK);
    tu_assert_identical(y1, y2, "istft of pairs");
    loom_tensor *objs[] = { x, c, p, y1, y2 };
    for (int i = 0; i < 5; i++)
        loom_tensor_free(objs[i]);
}

/* A complex signal through stft (two-sided) and istft return_complex comes
** back; its spectrum has n_fft bins, and a pairs spectrum is the same numbers. */
static void complex_round_trip(void **state)
{
    (void)state;
    static const loom_dtype dts[] = { LOOM_DTYPE_C64, LOOM_DTYPE_C128 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[2] = { 3, 4000 };
        loom_tensor *x = at_signal(dts[d], 2, shape, 11 + d), *X, *P, *y;
        const loom_tensor *in[2] = { x, NULL };
        assert_int_equal(at_call("audio.stft", in, 1, "n_fft=256;hop_length=64", "cpu", &X), LOOM_OK);
        assert_int_equal(loom_tensor_dtype_of(X), dts[d]);
        assert_int_equal(X->ndim, 3);
        assert_int_equal(X->shape[1], 256);
        assert_int_equal(X->shape[2], 1 + 4000 / 64);
        assert_int_equal(at_call("audio.stft", in, 1, "n_fft=256;hop_length=64;return_complex=false", "cpu", &P),
                         LOOM_OK);
        assert_memory_equal(loom_data(X), loom_data(P), (size_t)loom_numel(P) * (d == 0 ? 4 : 8));
        in[0] = X;
        assert_int_equal(at_call("audio.istft", in, 1, "n_fft=256;hop_length=64;length=4000;return_complex=true",
                                 "cpu", &y), LOOM_OK);
        assert_int_equal(loom_tensor_dtype_of(y), dts[d]);
        const double err = at_rel_error(y, x, "complex round trip");
        assert_true(err < (d == 0 ? 1e-5 : 1e-12));
        loom_tensor_free(x);
        loom_tensor_free(X);
        loom_tensor_free(P);
        loom_tensor_free(y);
    }
}

static void empty_batches_give_empty_outputs(void **state)
{
    (void)state;
    const int64_t shape[3] = { 0, 2, 100 };
    loom_tensor *x, *out;
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 3, shape, NULL), LOOM_OK);
    const loom_tensor *in[1] = { x };
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=16", "cpu", &out), LOOM_OK);
    assert_int_equal(out->ndim, 4);
    assert_int_equal(out->shape[0], 0);
    assert_int_equal(out->shape[2], 9);
    assert_int_equal(out->shape[3], 26);
    loom_tensor_free(out);
    assert_int_equal(at_call("audio.mfcc", in, 1, "n_fft=16;n_mels=8;n_mfcc=4", "cpu", &out), LOOM_OK);
    assert_int_equal(out->shape[2], 4);
    loom_tensor_free(out);
    loom_tensor_free(x);
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_C64, 3, shape, NULL), LOOM_OK);
    in[0] = x;
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=16", "cpu", &out), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(out), LOOM_DTYPE_C64);
    assert_int_equal(out->shape[2], 16);
    assert_int_equal(out->shape[3], 26);
    loom_tensor_free(x);
    in[0] = out;
    assert_int_equal(at_call("audio.istft", in, 1, "n_fft=16;return_complex=true", "cpu", &x), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(x), LOOM_DTYPE_C64);
    assert_int_equal(x->shape[0], 0);
    loom_tensor_free(out);
    loom_tensor_free(x);
}

static void bad_input_is_refused_by_name(void **state)
{
    (void)state;
    const int64_t s1[1] = { 100 }, s2[1] = { 16 }, s3[1] = { 5 }, s4[2] = { 9, 26 };
    loom_tensor *x = at_signal(LOOM_DTYPE_F32, 1, s1, 1), *w64 = at_signal(LOOM_DTYPE_F64, 1, s2, 2);
    loom_tensor *w5 = at_signal(LOOM_DTYPE_F32, 1, s3, 3), *short_x = at_signal(LOOM_DTYPE_F32, 1, s3, 4);
    loom_tensor *real2d = at_signal(LOOM_DTYPE_F32, 2, s4, 5), *spec;
    const loom_tensor *in[2] = { x, w64 };
    at_assert_refused("audio.stft", in, 2, "n_fft=16", LOOM_EINVAL, "window");
    in[1] = w5;
    at_assert_refused("audio.stft", in, 2, "n_fft=16", LOOM_EINVAL, "win_length");
    at_assert_refused("audio.stft", in, 1, "n_fft=16;win_length=20", LOOM_EINVAL, "win_length");
    at_assert_refused("audio.stft", in, 1, "n_fft=2", LOOM_EINVAL, "hop_length");
    at_assert_refused("audio.stft", in, 1, "n_fft=0", LOOM_EINVAL, "n_fft");
    at_assert_refused("audio.stft", in, 1, "n_fft=4294967296;pad_mode=constant", LOOM_EINVAL, "n_fft");
    at_assert_refused("audio.stft", in, 1, "n_fft=200;center=false", LOOM_EINVAL, "n_fft");
    in[0] = short_x;
    at_assert_refused("audio.stft", in, 1, "n_fft=16", LOOM_EINVAL, "reflect");
    at_assert_refused("audio.stft", in, 1, "n_fft=16;pad_mode=mirror", LOOM_EINVAL, "pad_mode");
    in[0] = x;
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=16", "cpu", &spec), LOOM_OK);
    in[0] = spec;
    at_assert_refused("audio.istft", in, 1, "n_fft=18", LOOM_EINVAL, "bins");
    /* torch: "Cannot have onesided output if window or input is complex" */
    at_assert_refused("audio.istft", in, 1, "n_fft=16;return_complex=true", LOOM_EINVAL, "return_complex");
    const int64_t sc[1] = { 100 };
    loom_tensor *cx = at_signal(LOOM_DTYPE_C64, 1, sc, 9), *cspec;
    in[0] = cx;
    at_assert_refused("audio.stft", in, 1, "n_fft=16;onesided=true", LOOM_EINVAL, "onesided");
    in[1] = w64;    /* a complex signal's window is its real type */
    at_assert_refused("audio.stft", in, 2, "n_fft=16", LOOM_EINVAL, "window");
    assert_int_equal(at_call("audio.stft", in, 1, "n_fft=16", "cpu", &cspec), LOOM_OK);
    in[0] = cspec;
    at_assert_refused("audio.istft", in, 1, "n_fft=16;onesided=true;return_complex=true", LOOM_EINVAL, "onesided");
    loom_tensor_free(cx);
    loom_tensor_free(cspec);
    in[0] = spec;
    /* a hann window without overlap breaks NOLA at the frame edges */
    loom_tensor *hann = at_signal(LOOM_DTYPE_F32, 1, s2, 6);
    ((float *)loom_data(hann))[0] = 0;
    in[1] = hann;
    at_assert_refused("audio.istft", in, 2, "n_fft=16;hop_length=16;center=false", LOOM_EINVAL, "NOLA");
    in[0] = real2d;
    at_assert_refused("audio.istft", in, 1, "n_fft=16", LOOM_EINVAL, "input");
    at_assert_refused("audio.inverse_spectrogram", in, 1, "n_fft=16", LOOM_EINVAL, "spectrogram");
    in[0] = x;
    at_assert_refused("audio.spectrogram", in, 1, "n_fft=16;normalized=yes", LOOM_EINVAL, "normalized");
    at_assert_refused("audio.mfcc", in, 1, "n_fft=16;n_mels=8;n_mfcc=9", LOOM_EINVAL, "n_mfcc");
    at_assert_refused("audio.mfcc", in, 1, "n_fft=16;n_mels=8;n_mfcc=4;dct_type=3", LOOM_EINVAL, "dct_type");
    at_assert_refused("audio.mel_spectrogram", in, 1, "n_fft=16;f_min=9000", LOOM_EINVAL, "f_min");
    at_assert_refused("audio.melscale_fbanks", NULL, 0, "n_freqs=5;f_min=0;f_max=100;n_mels=2", LOOM_EINVAL,
                      "sample_rate");
    loom_tensor *objs[] = { x, w64, w5, short_x, real2d, spec, hann };
    for (int i = 0; i < 7; i++)
        loom_tensor_free(objs[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_torch),
        cmocka_unit_test(round_trip_restores_the_signal),
        cmocka_unit_test(pairs_equal_complex),
        cmocka_unit_test(complex_round_trip),
        cmocka_unit_test(empty_batches_give_empty_outputs),
        cmocka_unit_test(bad_input_is_refused_by_name),
    };
    return cmocka_run_group_tests_name("audio_spectral", tests, tu_setup, tu_teardown);
}
