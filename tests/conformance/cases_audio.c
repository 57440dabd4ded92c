/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_audio.c - case generators of the audio pack's ops (see
** conformance.h); each states its tolerance and why.
**
** The spectral ops are compared norm-wise: max |got - cpu| / max |cpu| <=
** 1e-5 (f32) or 1e-10 (f64), the bound for complex results. cuFFT
** and FFTW order their butterflies differently, so the bits differ, but
** an n-point transform's error stays near log2(n) ulp of the largest bin.
*/
#include <math.h>
#include <stdio.h>

#include "conformance.h"

static double component(const loom_tensor *t, int64_t i)
{
    loom_dtype d = loom_tensor_dtype_of(t);
    return d == LOOM_DTYPE_F64 || d == LOOM_DTYPE_C128 ? ((const double *)loom_data(t))[i]
                                                        : ((const float *)loom_data(t))[i];
}

static int normwise_check(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
                          size_t size)
{
    (void)out;
    loom_dtype d = loom_tensor_dtype_of(ref);
    if (loom_tensor_dtype_of(got) != d || got->ndim != ref->ndim || loom_numel(got) != loom_numel(ref)) {
        snprintf(err, size, "dtype or shape differs from the cpu's");
        return 0;
    }
    const int64_t n = loom_numel(ref) * (d == LOOM_DTYPE_C64 || d == LOOM_DTYPE_C128 ? 2 : 1);
    double e = 0, peak = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        const double g = component(got, i), r = component(ref, i);
        if (!(fabs(g - r) <= e)) {
            e = fabs(g - r);
            at = i;
        }
        peak = fmax(peak, fabs(r));
    }
    const double tol = c->dtype == LOOM_DTYPE_F64 ? 1e-10 : 1e-5;
    if (!(e <= tol * (peak > 0 ? peak : 1))) {
        snprintf(err, size, "component %lld: %.9g, cpu %.9g; norm-wise error %.3g over %.0g", (long long)at,
                 component(got, at), component(ref, at), e / (peak > 0 ? peak : 1), tol);
        return 0;
    }
    return 1;
}

static void normwise(cf_case *c)
{
    c->tol[0] = (cf_tol){ CF_CUSTOM, 0, 0 };
    c->check = normwise_check;
}

/* A complex signal of the case's real dtype (c64 or c128), parts uniform in [-1, 1). */
static loom_tensor *complex_uniform(cf_case *c, int32_t ndim, const int64_t *shape, uint64_t stream)
{
    const int d = c->dtype == LOOM_DTYPE_F64;
    loom_tensor *t = cf_zeros(c, d ? LOOM_DTYPE_C128 : LOOM_DTYPE_C64, ndim, shape);
    for (int64_t i = 0; i < 2 * loom_numel(t); i++) {
        const double v = -1 + 2 * cf_draw(c, stream, (uint64_t)i);
        if (d)
            ((double *)loom_data(t))[i] = v;
        else
            ((float *)loom_data(t))[i] = (float)v;
    }
    return t;
}

/* audio.stft: [2, 3, 1000] with n_fft 400 / hop 160 and a Hann-like window,
** and [777] with n_fft 63 (odd, two-sided, constant padding, pairs); a
** complex [2, 500] with n_fft 64, a shorter window (two-sided C2C), and a
** complex [300] with n_fft 31 uncentred, normalized, pairs. */
static int audio_stft_make(cf_case *c)
{
    const int64_t big[3] = { 2, 3, 1000 }, small[1] = { 777 }, win[1] = { 400 };
    const int64_t cbig[2] = { 2, 500 }, csmall[1] = { 300 }, cwin[1] = { 48 };
    if (c->index == 2) {
        c->in[0] = complex_uniform(c, 2, cbig, 0);
        c->in[1] = cf_uniform(c, c->dtype, 1, cwin, 1, 0, 1);
        c->n_in = 2;
        cf_attrs(c, "n_fft=64;hop_length=16;win_length=48");
        cf_what(c, "complex [2,500] n_fft 64 hop 16, window 48");
    } else if (c->index == 3) {
        c->in[0] = complex_uniform(c, 1, csmall, 0);
        c->n_in = 1;
        cf_attrs(c, "n_fft=31;center=false;normalized=true;return_complex=false");
        cf_what(c, "complex [300] n_fft 31 uncentred, normalized, pairs");
    } else if (c->index == 0) {
        c->in[0] = cf_uniform(c, c->dtype, 3, big, 0, -1, 1);
        c->in[1] = cf_uniform(c, c->dtype, 1, win, 1, 0, 1);
        c->n_in = 2;
        cf_attrs(c, "n_fft=400;hop_length=160");
        cf_what(c, "[2,3,1000] n_fft 400 hop 160, window");
    } else {
        c->in[0] = cf_uniform(c, c->dtype, 1, small, 0, -1, 1);
        c->n_in = 1;
        cf_attrs(c, "n_fft=63;onesided=false;pad_mode=constant;return_complex=false;normalized=true");
        cf_what(c, "[777] n_fft 63 two-sided, constant pad, pairs, normalized");
    }
    normwise(c);
    return 1;
}

/* audio.istft of a cpu stft: n_fft 400 hop 160 with length, and n_fft 64
** uncentred; return_complex of a complex signal's two-sided spectrum. */
static int audio_istft_make(cf_case *c)
{
    if (c->index == 2) {
        const int64_t shape[2] = { 3, 1500 }, win[1] = { 200 };
        loom_tensor *x = complex_uniform(c, 2, shape, 0), *spec;
        loom_tensor *w = cf_uniform(c, c->dtype, 1, win, 1, 0.5, 1);
        const loom_tensor *in[2] = { x, w };
        cf_cpu_run(c, "audio.stft", in, 2, "n_fft=256;hop_length=64;win_length=200;normalized=true", &spec, 1);
        c->in[0] = spec;
        c->in[1] = w;
        c->n_in = 2;
        cf_attrs(c, "n_fft=256;hop_length=64;win_length=200;normalized=true;return_complex=true;length=1500");
        cf_what(c, "[3,256,24] two-sided, return_complex, length 1500");
        normwise(c);
        return 1;
    }
    const int64_t shape[2] = { 3, 2000 }, win[1] = { 256 };
    loom_tensor *x = cf_uniform(c, c->dtype, 2, shape, 0, -1, 1), *spec;
    loom_tensor *w = cf_uniform(c, c->dtype, 1, win, 1, 0.5, 1);
    const loom_tensor *in[2] = { x, w };
    const char *fwd = c->index == 0 ? "n_fft=400;hop_length=160;win_length=256" : "n_fft=256;hop_length=64;center=false";
    cf_cpu_run(c, "audio.stft", in, 2, fwd, &spec, 1);
    c->in[0] = spec;
    c->in[1] = w;
    c->n_in = 2;
    if (c->index == 0)
        cf_attrs(c, "n_fft=400;hop_length=160;win_length=256;length=1990");
    else
        cf_attrs(c, "n_fft=256;hop_length=64;center=false");
    cf_what(c, "%s", c->index == 0 ? "[3,201,13] n_fft 400, length 1990" : "[3,129,28] n_fft 256 uncentred");
    normwise(c);
    return 1;
}

/* audio.spectrogram: power 2 (default window), power 1 window-normalized, complex. */
static int audio_spectrogram_make(cf_case *c)
{
    static const char *const attrs[3] = { "n_fft=400;hop_length=160;power=2",
                                          "n_fft=128;pad=5;power=1;normalized=window",
                                          "n_fft=256;normalized=frame_length" };
    const int64_t shape[2] = { 2, 3000 };
    c->in[0] = cf_uniform(c, c->dtype, 2, shape, 0, -1, 1);
    c->n_in = 1;
    cf_attrs(c, "%s", attrs[c->index]);
    cf_what(c, "[2,3000] %s", attrs[c->index]);
    normwise(c);
    return 1;
}

static int audio_inverse_spectrogram_make(cf_case *c)
{
    const int64_t shape[2] = { 2, 3000 };
    loom_tensor *x = cf_uniform(c, c->dtype, 2, shape, 0, -1, 1), *spec;
    const loom_tensor *in[1] = { x };
    cf_cpu_run(c, "audio.spectrogram", in, 1, "n_fft=400;hop_length=100;pad=7;normalized=window", &spec, 1);
    c->in[0] = spec;
    c->n_in = 1;
    cf_attrs(c, "n_fft=400;hop_length=100;pad=7;normalized=window;length=3000");
    cf_what(c, "[2,201,31] n_fft 400 pad 7, window-normalized, length 3000");
    normwise(c);
    return 1;
}

/* the tables: no inputs, identical float32 arithmetic everywhere */
static int audio_melscale_fbanks_make(cf_case *c)
{
    cf_attrs(c, "n_freqs=201;f_min=0;f_max=8000;n_mels=40;sample_rate=16000;norm=slaney;mel_scale=slaney");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "201 x 40 slaney");
    return 1;
}

static int audio_create_dct_make(cf_case *c)
{
    cf_attrs(c, "n_mfcc=13;n_mels=40;norm=ortho");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "40 x 13 ortho");
    return 1;
}

static int audio_mel_spectrogram_make(cf_case *c)
{
    const int64_t shape[2] = { 2, 4000 };
    c->in[0] = cf_uniform(c, c->dtype, 2, shape, 0, -1, 1);
    c->n_in = 1;
    cf_attrs(c, "n_fft=400;hop_length=160;n_mels=80");
    cf_what(c, "[2,4000] n_fft 400, 80 mels");
    normwise(c);
    return 1;
}

/* MFCC in decibels: log10 of tiny mel values amplifies their relative
** error, so the input is a full-band signal (no near-zero bins); the
** second case has two items of two channels (top_db per item) and a low
** top_db, so the floor clamps many values; the cpu kernel is the
** reference of the cuda one (cuFFT, the decibel kernel, the cuBLAS DCT) */
static int audio_mfcc_make(cf_case *c)
{
    if (c->index == 0) {
        const int64_t shape[2] = { 2, 4000 };
        c->in[0] = cf_uniform(c, c->dtype, 2, shape, 0, -1, 1);
        cf_attrs(c, "n_fft=400;hop_length=160;n_mels=40;n_mfcc=13");
        cf_what(c, "[2,4000] 40 mels, 13 coefficients");
    } else {
        const int64_t shape[3] = { 2, 2, 3000 };
        c->in[0] = cf_uniform(c, c->dtype, 3, shape, 0, -1, 1);
        cf_attrs(c, "n_fft=256;hop_length=128;n_mels=32;n_mfcc=20;top_db=6");
        cf_what(c, "[2,2,3000] 32 mels, 20 coefficients, top_db 6 per item");
    }
    c->n_in = 1;
    normwise(c);
    return 1;
}

/* greedy CTC decoding: argmax per frame and the collapse are exact, so
** every backend gives the same tokens and offsets; the second case has
** lengths, ties (values on a coarse grid) and N = 37 (not a multiple of 8) */
static int audio_ctc_greedy_make(cf_case *c)
{
    if (c->index == 0) {
        const int64_t shape[3] = { 4, 50, 29 };
        c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 3, shape, 0, -5, 5);
        c->n_in = 1;
        cf_what(c, "[4,50,29] blank 0");
    } else {
        const int64_t shape[3] = { 3, 40, 37 }, lshape[1] = { 3 }, len[3] = { 40, 0, 17 };
        loom_tensor *e = cf_uniform(c, LOOM_DTYPE_F32, 3, shape, 0, 0, 4);
        float *p = loom_data(e);
        for (int64_t i = 0; i < 3 * 40 * 37; i++)
            p[i] = (float)(int)p[i];
        c->in[0] = e;
        c->in[1] = cf_index(c, LOOM_DTYPE_I64, 1, lshape, len);
        c->n_in = 2;
        cf_attrs(c, "blank=3");
        cf_what(c, "[3,40,37] lengths 40,0,17, ties, blank 3");
    }
    c->n_out = 2;
    cf_tol_all(c, CF_BYTES, 0, 0);
    return 1;
}

/* torchaudio's cuda_ctc_decoder: the same prefixes on every backend, scores
** within 1e-3 (the device's fast exp and log in each of T lse's near -20);
** uniform log-probs hold no ties; the second case has lengths and skips
** frames (a blank made dominant in every third frame) */
static int audio_ctc_prefix_make(cf_case *c)
{
    const int64_t shape[3] = { 3, 30, 10 }, lshape[1] = { 3 }, len[3] = { 30, 0, 13 };
    loom_tensor *e = cf_uniform(c, LOOM_DTYPE_F32, 3, shape, 0, -6, 0);
    c->in[0] = e;
    c->n_in = 1;
    if (c->index == 0) {
        cf_attrs(c, "beam_size=8;nbest=2;blank_skip_threshold=1");
        cf_what(c, "[3,30,10] beam 8 nbest 2, no frame skipped");
    } else {
        float *p = loom_data(e);
        for (int64_t f = 0; f < 3 * 30; f += 3)
            p[f * 10] = -0.01f;
        c->in[1] = cf_index(c, LOOM_DTYPE_I64, 1, lshape, len);
        c->n_in = 2;
        cf_attrs(c, "beam_size=10;nbest=3;blank_skip_threshold=0.95");
        cf_what(c, "[3,30,10] lengths 30,0,13, beam 10 nbest 3, a third of the frames skipped");
    }
    c->n_out = 3;
    cf_tol_all(c, CF_BYTES, 0, 0);
    c->tol[2] = (cf_tol){ CF_CLOSE, 0, 1e-3 };
    return 1;
}

#define AUDIO_REAL_MASK (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
const cf_gen cf_audio_gens[] = {
    { "audio.stft", AUDIO_REAL_MASK, 4, audio_stft_make, NULL },
    { "audio.istft", AUDIO_REAL_MASK, 3, audio_istft_make, NULL },
    { "audio.spectrogram", AUDIO_REAL_MASK, 3, audio_spectrogram_make, NULL },
    { "audio.inverse_spectrogram", AUDIO_REAL_MASK, 1, audio_inverse_spectrogram_make, NULL },
    { "audio.melscale_fbanks", 0, 1, audio_melscale_fbanks_make, NULL },
    { "audio.create_dct", 0, 1, audio_create_dct_make, NULL },
    { "audio.mel_spectrogram", AUDIO_REAL_MASK, 1, audio_mel_spectrogram_make, NULL },
    { "audio.mfcc", AUDIO_REAL_MASK, 2, audio_mfcc_make, NULL },
    /* files are read and written on the host only: one cpu kernel, nothing to compare */
    { "audio.load", 0, 0, NULL, "tests/audio/files/test_files.c: host-only file reading (cpu kernel only)" },
    { "audio.save", 0, 0, NULL, "tests/audio/files/test_files.c: host-only file writing (cpu kernel only)" },
    { "audio.info", 0, 0, NULL, "tests/audio/files/test_files.c: host-only file reading (cpu kernel only)" },
    /* the CTC module runs on the host only: one cpu kernel per op, nothing to compare */
    { "audio.ctc_lm_score", 0, 0, NULL, "tests/audio/ctc/test_ctc_lm.c: host-only n-gram LM scoring (cpu kernel only)" },
    { "audio.ctc_lm_save", 0, 0, NULL, "tests/audio/ctc/test_ctc_lm_binary.c: host-only file writer (cpu kernel only)" },
    { "audio.ctc_decoder", 0, 0, NULL, "tests/audio/ctc/test_ctc_decoder.c: host-only beam search (cpu kernel only)" },
    { "audio.ctc_decoder_begin", 0, 0, NULL, "tests/audio/ctc/test_ctc_stream.c: host-only streaming (cpu kernel only)" },
    { "audio.ctc_decoder_step", 0, 0, NULL, "tests/audio/ctc/test_ctc_stream.c: host-only streaming (cpu kernel only)" },
    { "audio.ctc_decoder_end", 0, 0, NULL, "tests/audio/ctc/test_ctc_stream.c: host-only streaming (cpu kernel only)" },
    { "audio.ctc_decoder_final", 0, 0, NULL, "tests/audio/ctc/test_ctc_stream.c: host-only streaming (cpu kernel only)" },
    { "audio.ctc_greedy_decoder", 0, 2, audio_ctc_greedy_make, NULL },
    { "audio.cuda_ctc_decoder", 0, 2, audio_ctc_prefix_make, NULL },
    { "audio.ctc_decoder_best", 0, 0, NULL, "tests/audio/ctc/test_ctc_stream.c: host-only streaming (cpu kernel only)" },
};
const size_t cf_audio_n_gens = sizeof cf_audio_gens / sizeof cf_audio_gens[0];
