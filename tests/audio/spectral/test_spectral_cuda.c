/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_spectral_cuda.c - the cuFFT kernels of audio-cuda.so against the
** cpu kernels (FFTW) on the same inputs, through the public API: stft
** (complex, pairs, two-sided, every padding mode), spectrogram (power,
** normalisations), istft / inverse_spectrogram (length, uncentred),
** mel_spectrogram and mfcc (decibels with top_db per item, log_mels), in
** f32 and f64; stft of complex signals and istft return_complex in c64
** and c128; norm-wise relative error 1e-5 (f32) /
** 1e-10 (f64), the bound of the issue: cuFFT and FFTW order their
** butterflies differently. Every test skips with a message without a CUDA
** device (suite gpu).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"

static int cuda_device(loom_dl_device *out)
{
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
    return 0;
}

static loom_dl_device dev;

#define SKIP_WITHOUT_DEVICE()                                                                    \
    do {                                                                                         \
        if (!cuda_device(&dev) || !tu_has_backend("audio.stft", "cuda")) {                       \
            print_message("no CUDA device (or no audio-cuda.so): the cuFFT kernels are not run\n"); \
            skip();                                                                              \
        }                                                                                        \
    } while (0)

static loom_tensor *to_device(const loom_tensor *t)
{
    loom_tensor *d;
    if (loom_tensor_copy_to(&d, t, &dev) != LOOM_OK)
        fail_msg("copy to cuda: %s", loom_last_error());
    return d;
}

static loom_tensor *to_host(const loom_tensor *t)
{
    loom_tensor *h;
    const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
    if (loom_tensor_copy_to(&h, t, &cpu) != LOOM_OK)
        fail_msg("copy to the host: %s", loom_last_error());
    return h;
}

/* op on the cpu and on cuda, the outputs compared norm-wise */
static void compare(const char *op, const loom_tensor *x, const loom_tensor *w, const char *attrs)
{
    const loom_tensor *in[2] = { x, w };
    loom_tensor *want, *got_d;
    if (at_call(op, in, 2, attrs, "cpu", &want) != LOOM_OK)
        fail_msg("%s cpu (%s): %s", op, attrs, loom_last_error());
    loom_tensor *xd = to_device(x), *wd = w != NULL ? to_device(w) : NULL;
    const loom_tensor *ind[2] = { xd, wd };
    if (at_call(op, ind, 2, attrs, "cuda", &got_d) != LOOM_OK)
        fail_msg("%s cuda (%s): %s", op, attrs, loom_last_error());
    loom_tensor *got = to_host(got_d);
    const loom_dtype d = loom_tensor_dtype_of(want);
    const double tol = d == LOOM_DTYPE_F64 || d == LOOM_DTYPE_C128 ? 1e-10 : 1e-5;
    const double err = at_rel_error(got, want, op);
    print_message("%-26s %-60s error %.2g\n", op, attrs, err);
    if (!(err <= tol))
        fail_msg("%s (%s): cuda vs cpu error %.3g over %.0g", op, attrs, err, tol);
    loom_tensor *objs[] = { want, got_d, got, xd, wd };
    for (int i = 0; i < 5; i++)
        loom_tensor_free(objs[i]);
}

static void forward_ops_match_the_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    static const loom_dtype dts[2] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[3] = { 2, 3, 3000 }, wshape[1] = { 300 };
        loom_tensor *x = at_signal(dts[d], 3, shape, 1), *w = at_signal(dts[d], 1, wshape, 2);
        compare("audio.stft", x, NULL, "n_fft=400;hop_length=160");
        compare("audio.stft", x, w, "n_fft=400;hop_length=100;win_length=300;return_complex=false");
        compare("audio.stft", x, NULL, "n_fft=63;onesided=false;normalized=true;pad_mode=constant");
        compare("audio.stft", x, NULL, "n_fft=64;pad_mode=replicate");
        compare("audio.stft", x, NULL, "n_fft=64;pad_mode=circular;center=true");
        compare("audio.stft", x, NULL, "n_fft=128;center=false");
        compare("audio.spectrogram", x, NULL, "n_fft=400;hop_length=160;power=2");
        compare("audio.spectrogram", x, NULL, "n_fft=256;pad=7;power=1;normalized=window");
        compare("audio.spectrogram", x, NULL, "n_fft=256;power=0.5;normalized=frame_length");
        compare("audio.mel_spectrogram", x, NULL, "n_fft=400;hop_length=160;n_mels=80");
        loom_tensor_free(x);
        loom_tensor_free(w);
    }
}

static void inverse_ops_match_the_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    static const loom_dtype dts[2] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[2] = { 3, 4000 };
        loom_tensor *x = at_signal(dts[d], 2, shape, 3), *X, *Y;
        const loom_tensor *in[1] = { x };
        assert_int_equal(at_call("audio.stft", in, 1, "n_fft=400;hop_length=100", "cpu", &X), LOOM_OK);
        compare("audio.istft", X, NULL, "n_fft=400;hop_length=100;length=3990");
        compare("audio.istft", X, NULL, "n_fft=400;hop_length=100;length=4500");
        assert_int_equal(at_call("audio.spectrogram", in, 1, "n_fft=256;hop_length=64;pad=5;normalized=window", "cpu", &Y),
                         LOOM_OK);
        compare("audio.inverse_spectrogram", Y, NULL, "n_fft=256;hop_length=64;pad=5;normalized=window;length=4000");
        loom_tensor_free(x);
        loom_tensor_free(X);
        loom_tensor_free(Y);
    }
}

/* mfcc: the mel path, decibels (top_db per item of the packed (channel,
** mel, time) dims: [2, 3, T] is two items, [3, T] and [T] one) or log, and
** the DCT GEMM; the signals are noise, so no mel bin is near zero and the
** log does not amplify the transforms' rounding */
static void mfcc_matches_the_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    static const loom_dtype dts[2] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[3] = { 2, 3, 3000 }, one[1] = { 5000 }, wshape[1] = { 300 };
        loom_tensor *x = at_signal(dts[d], 3, shape, 4), *x1 = at_signal(dts[d], 1, one, 5);
        loom_tensor *x2 = at_signal(dts[d], 2, shape + 1, 6), *w = at_signal(dts[d], 1, wshape, 7);
        compare("audio.mfcc", x, NULL, "n_fft=400;hop_length=160;n_mels=40;n_mfcc=13");
        compare("audio.mfcc", x, NULL, "n_fft=400;hop_length=160;n_mels=64;n_mfcc=64;top_db=10");
        compare("audio.mfcc", x2, NULL, "n_fft=256;n_mels=32;n_mfcc=20;top_db=5;dct_norm=none");
        compare("audio.mfcc", x1, NULL, "n_fft=512;hop_length=128;n_mels=80;n_mfcc=40;top_db=3");
        compare("audio.mfcc", x, NULL, "n_fft=400;hop_length=160;n_mels=40;n_mfcc=13;log_mels=true");
        compare("audio.mfcc", x, w, "n_fft=400;hop_length=100;win_length=300;n_mels=40;n_mfcc=1;"
                                    "norm=slaney;mel_scale=slaney;center=false");
        loom_tensor *objs[] = { x, x1, x2, w };
        for (int i = 0; i < 4; i++)
            loom_tensor_free(objs[i]);
    }
}

/* complex signals: stft (C2C, two-sided) and istft return_complex */
static void complex_ops_match_the_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    static const loom_dtype dts[2] = { LOOM_DTYPE_C64, LOOM_DTYPE_C128 }, reals[2] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    for (int d = 0; d < 2; d++) {
        const int64_t shape[2] = { 3, 3000 }, wshape[1] = { 300 };
        loom_tensor *x = at_signal(dts[d], 2, shape, 5), *w = at_signal(reals[d], 1, wshape, 6), *X;
        compare("audio.stft", x, NULL, "n_fft=400;hop_length=160");
        compare("audio.stft", x, w, "n_fft=400;hop_length=100;win_length=300;return_complex=false");
        compare("audio.stft", x, NULL, "n_fft=63;center=false;normalized=true");
        compare("audio.stft", x, NULL, "n_fft=64;pad_mode=constant");
        const loom_tensor *in[2] = { x, w };
        assert_int_equal(at_call("audio.stft", in, 2, "n_fft=400;hop_length=100;win_length=300", "cpu", &X), LOOM_OK);
        compare("audio.istft", X, w, "n_fft=400;hop_length=100;win_length=300;return_complex=true;length=3000");
        compare("audio.istft", X, w, "n_fft=400;hop_length=100;win_length=300;return_complex=true;length=3500");
        loom_tensor_free(x);
        loom_tensor_free(w);
        loom_tensor_free(X);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_ops_match_the_cpu),
        cmocka_unit_test(inverse_ops_match_the_cpu),
        cmocka_unit_test(mfcc_matches_the_cpu),
        cmocka_unit_test(complex_ops_match_the_cpu),
    };
    return cmocka_run_group_tests_name("audio_spectral_cuda", tests, tu_setup, tu_teardown);
}
