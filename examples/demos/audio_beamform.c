/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_beamform.c - `loom demo beamform`: mask-based MVDR beamforming of
** an 8-microphone recording. A short spoken sentence (data/speech.flac,
** made by tools/gen_audio_demo_speech.sh with espeak-ng) arrives at a
** linear array of 8 microphones 4 cm apart from 60 degrees, each
** microphone hearing it with its own fractional delay; a diffuse noise
** field (white noise arriving from 12 directions around the array) and a
** little sensor noise are added, at 0 dB SNR on the reference microphone.
** Then: STFT, PSDs of speech and noise with oracle masks (the ideal ratio
** mask of the reference microphone), SoudenMVDR, and RTFMVDR with the RTF
** of the power method, ISTFT; the SI-SDR before and after and the
** real-time factor of the processing.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

DEMO_DEFINE("beamform", 92,
            "audio.load,audio.stft,audio.istft,audio.psd,audio.SoudenMVDR,audio.RTFMVDR,audio.rtf_power",
            "MVDR beamforming of a simulated 8-microphone recording: SoudenMVDR and RTFMVDR with oracle masks");

#define MICS 8
#define SPACING_M 0.04
#define SOUND_MS 343.0
#define DOA_DEG 60.0
#define NOISE_DIRS 12
#define TAPS 17            /* the fractional-delay filter: windowed sinc */
#define N_FFT 512
#define HOP 128

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* the file: installed next to the demos, else in the source tree */
static const char *speech_path(void)
{
    static const char *const dirs[] = { DEMO_DATA_DIR, DEMO_SOURCE_DATA_DIR };
    static char path[1024];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/speech.flac", dirs[i]);
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            fclose(f);
            return path;
        }
    }
    return NULL;
}

/* y += x delayed by d samples (d >= 0, fractional): a Hann-windowed sinc */
static void add_delayed(const float *x, int64_t n, double d, double gain, float *y)
{
    const int64_t di = (int64_t)floor(d);
    const double frac = d - (double)di;
    double h[TAPS];
    for (int k = 0; k < TAPS; k++) {
        double t = (double)(k - TAPS / 2) - frac;
        double s = fabs(t) < 1e-12 ? 1.0 : sin(M_PI * t) / (M_PI * t);
        double w = 0.5 + 0.5 * cos(M_PI * t / (TAPS / 2 + 1));
        h[k] = gain * s * w;
    }
    for (int64_t i = 0; i < n; i++) {
        double acc = 0;
        for (int k = 0; k < TAPS; k++) {
            int64_t j = i - di - (k - TAPS / 2);
            if (j >= 0 && j < n)
                acc += h[k] * x[j];
        }
        y[i] += (float)acc;
    }
}

/* the delay in samples of a plane wave from azimuth az at microphone m */
static double delay_of(int m, double az_deg, double fs)
{
    return (double)m * SPACING_M * cos(az_deg * M_PI / 180.0) / SOUND_MS * fs;
}

static double energy(const float *x, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++)
        e += (double)x[i] * x[i];
    return e;
}

/* scale-invariant SDR of est against ref, in dB */
static double si_sdr(const float *est, const float *ref, int64_t n)
{
    double dot = 0, rr = energy(ref, n), ee = 0;
    for (int64_t i = 0; i < n; i++)
        dot += (double)est[i] * ref[i];
    const double a = dot / rr;
    for (int64_t i = 0; i < n; i++) {
        double e = est[i] - a * ref[i];
        ee += e * e;
    }
    return 10.0 * log10(a * a * rr / ee);
}

static loom_attrs *attrs_of(const char *op, const char *text)
{
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        return NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text != NULL ? text : "");
    for (char *sv = NULL, *kv = strtok_r(buf, ";", &sv); kv != NULL; kv = strtok_r(NULL, ";", &sv)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL)
            continue;
        *eq = 0;
        if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK) {
            loom_attrs_free(a);
            return NULL;
        }
    }
    return a;
}

/* one call with attributes as text, on an object or not; outputs in out[] */
static int call(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs, loom_object *obj,
                loom_tensor **out, int32_t n_out, const char *label)
{
    loom_attrs *a = attrs_of(op, attrs);
    loom_call_options o = LOOM_CALL_OPTIONS_INIT;
    o.object = obj;
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    int rc = a != NULL && loom_run(op, in, n, a, out, n_out, &o) == LOOM_OK ? DEMO_OK : demo_fail();
    loom_attrs_free(a);
    if (rc == DEMO_OK)
        demo_record(label);
    return rc;
}

typedef struct scene {
    int64_t n;                 /* samples */
    double fs;
    loom_tensor *mix, *clean;  /* f32 [MICS, n] */
} scene;

/* the array's recording of the sentence and of the diffuse noise */
static int simulate(const float *speech, int64_t n, double fs, scene *s)
{
    const int64_t shape[2] = { MICS, n };
    s->n = n, s->fs = fs;
    s->mix = demo_tensor(LOOM_DTYPE_F32, 2, shape);
    s->clean = demo_tensor(LOOM_DTYPE_F32, 2, shape);
    float *noise = calloc((size_t)(MICS * n), sizeof(float)), *src = malloc(sizeof(float) * (size_t)n);
    if (s->mix == NULL || s->clean == NULL || noise == NULL || src == NULL) {
        free(noise);
        free(src);
        return DEMO_FAIL;
    }
    float *clean = loom_data(s->clean), *mix = loom_data(s->mix);
    /* every delay is made positive by a common offset: mic 0 hears the
    ** talker with the offset alone */
    const double offset = MICS * SPACING_M / SOUND_MS * fs + 1;
    for (int m = 0; m < MICS; m++)
        add_delayed(speech, n, offset + delay_of(m, DOA_DEG, fs), 1.0, clean + m * n);
    for (int k = 0; k < NOISE_DIRS; k++) {
        const double az = 360.0 * (k + 0.5) / NOISE_DIRS;
        for (int64_t i = 0; i < n; i++)
            src[i] = (demo_random() + demo_random() + demo_random()) / 1.7f;
        for (int m = 0; m < MICS; m++)
            add_delayed(src, n, offset + delay_of(m, az, fs), 1.0, noise + m * n);
    }
    /* 0 dB SNR at the reference microphone, plus sensor noise 30 dB down */
    const double g = sqrt(energy(clean, n) / energy(noise, n));
    const double sensor = sqrt(energy(clean, n) / (double)n) * 0.0316;
    for (int64_t i = 0; i < MICS * n; i++)
        mix[i] = clean[i] + (float)(g * noise[i] + sensor * demo_random());
    free(noise);
    free(src);
    return DEMO_OK;
}

/* the ideal ratio mask |S|^2 / (|S|^2 + |N|^2) of the reference microphone,
** f32 [F, T], from the STFTs of the clean and the noisy recordings */
static loom_tensor *oracle_mask(const loom_tensor *sx, const loom_tensor *xx)
{
    const int64_t F = xx->shape[1], T = xx->shape[2], shape[2] = { F, T };
    loom_tensor *m = demo_tensor(LOOM_DTYPE_F32, 2, shape);
    if (m == NULL)
        return NULL;
    const float *s = loom_data(sx), *x = loom_data(xx);   /* channel 0 first */
    float *o = loom_data(m);
    for (int64_t i = 0; i < F * T; i++) {
        double sr = s[2 * i], si = s[2 * i + 1], nr = x[2 * i] - sr, ni = x[2 * i + 1] - si;
        double ps = sr * sr + si * si, pn = nr * nr + ni * ni;
        o[i] = (float)(ps + pn > 0 ? ps / (ps + pn) : 0);
    }
    return m;
}

int demo_run(void)
{
    const char *path = speech_path();
    if (path == NULL) {
        fprintf(stderr, "demo: speech.flac is neither in %s nor in %s\n", DEMO_DATA_DIR, DEMO_SOURCE_DATA_DIR);
        return DEMO_FAIL;
    }
    char uri[1100];
    snprintf(uri, sizeof uri, "uri=%s", path);
    loom_tensor *io[2], *wav, *sr_t;
    if (call("audio.load", NULL, 0, uri, NULL, io, 2, "load") != DEMO_OK)
        return DEMO_FAIL;
    wav = io[0], sr_t = io[1];
    const int64_t n = wav->shape[1];
    const double fs = (double)*(const int64_t *)loom_data(sr_t);
    printf("  speech.flac: %.2f s at %.0f Hz, one talker at %.0f degrees, %d microphones %.0f cm apart,\n"
           "  diffuse noise from %d directions at 0 dB SNR on microphone 0\n",
           (double)n / fs, fs, DOA_DEG, MICS, SPACING_M * 100, NOISE_DIRS);

    scene s = { 0 };
    int rc = simulate(loom_data(wav), n, fs, &s);
    const int64_t wshape[1] = { N_FFT };
    loom_tensor *win = demo_tensor(LOOM_DTYPE_F32, 1, wshape);
    loom_tensor *X = NULL, *S = NULL, *mask = NULL, *mask_n = NULL, *psd_s = NULL, *psd_n = NULL, *rtf = NULL;
    loom_tensor *enh[2] = { NULL, NULL }, *out[2] = { NULL, NULL };
    loom_object *souden = NULL, *rtfmvdr = NULL;
    if (rc == DEMO_OK && win == NULL)
        rc = DEMO_FAIL;
    if (rc == DEMO_OK) {
        for (int i = 0; i < N_FFT; i++)   /* periodic Hann, torch.hann_window */
            ((float *)loom_data(win))[i] = (float)(0.5 - 0.5 * cos(2 * M_PI * i / N_FFT));
        if (loom_object_create(&souden, "audio.SoudenMVDR", NULL, NULL) != LOOM_OK
            || loom_object_create(&rtfmvdr, "audio.RTFMVDR", NULL, NULL) != LOOM_OK)
            rc = demo_fail();
    }
    char stft_attrs[96], istft_attrs[128];
    snprintf(stft_attrs, sizeof stft_attrs, "n_fft=%d;hop_length=%d", N_FFT, HOP);
    snprintf(istft_attrs, sizeof istft_attrs, "n_fft=%d;hop_length=%d;length=%lld", N_FFT, HOP, (long long)n);

    /* the clean STFT is the oracle's, outside the timed processing */
    if (rc == DEMO_OK)
        rc = call("audio.stft", (const loom_tensor *[]){ s.clean, win }, 2, stft_attrs, NULL, &S, 1, "stft (oracle)");
    double t0 = demo_now();
    if (rc == DEMO_OK)
        rc = call("audio.stft", (const loom_tensor *[]){ s.mix, win }, 2, stft_attrs, NULL, &X, 1, "stft");
    double t_mask0 = demo_now();
    if (rc == DEMO_OK && ((mask = oracle_mask(S, X)) == NULL || (mask_n = demo_tensor(LOOM_DTYPE_F32, 2, mask->shape))
                                                                     == NULL))
        rc = DEMO_FAIL;
    if (rc == DEMO_OK)
        for (int64_t i = 0; i < loom_numel(mask); i++)
            ((float *)loom_data(mask_n))[i] = 1.0f - ((const float *)loom_data(mask))[i];
    double t_mask = demo_now() - t_mask0;
    if (rc == DEMO_OK)
        rc = call("audio.psd", (const loom_tensor *[]){ X, mask }, 2, NULL, NULL, &psd_s, 1, "psd (speech)");
    if (rc == DEMO_OK)
        rc = call("audio.psd", (const loom_tensor *[]){ X, mask_n }, 2, NULL, NULL, &psd_n, 1, "psd (noise)");
    if (rc == DEMO_OK)
        rc = call("audio.SoudenMVDR", (const loom_tensor *[]){ X, psd_s, psd_n, NULL }, 4, "reference_channel=0",
                  souden, &enh[0], 1, "SoudenMVDR");
    if (rc == DEMO_OK)
        rc = call("audio.rtf_power", (const loom_tensor *[]){ psd_s, psd_n, NULL }, 3, "reference_channel=0", NULL,
                  &rtf, 1, "rtf_power");
    if (rc == DEMO_OK)
        rc = call("audio.RTFMVDR", (const loom_tensor *[]){ X, rtf, psd_n, NULL }, 4, "reference_channel=0", rtfmvdr,
                  &enh[1], 1, "RTFMVDR");
    for (int k = 0; k < 2 && rc == DEMO_OK; k++)
        rc = call("audio.istft", (const loom_tensor *[]){ enh[k], win }, 2, istft_attrs, NULL, &out[k], 1,
                  k == 0 ? "istft (Souden)" : "istft (RTF)");
    double dt = demo_now() - t0 - t_mask;

    if (rc == DEMO_OK) {
        const float *ref = loom_data(s.clean), *noisy = loom_data(s.mix);
        printf("  STFT %lld bins x %lld frames x %d channels (n_fft %d, hop %d), oracle masks on microphone 0\n",
               (long long)X->shape[1], (long long)X->shape[2], MICS, N_FFT, HOP);
        printf("  SI-SDR on microphone 0: %6.2f dB before\n", si_sdr(noisy, ref, n));
        printf("                          %6.2f dB after SoudenMVDR\n", si_sdr(loom_data(out[0]), ref, n));
        printf("                          %6.2f dB after RTFMVDR (rtf_power)\n", si_sdr(loom_data(out[1]), ref, n));
        printf("  processing (STFT, 2 PSDs, 2 MVDRs, 2 ISTFTs): %.1f ms for %.2f s of audio: real-time factor %.4f\n",
               dt * 1e3, (double)n / fs, dt / ((double)n / fs));
    }
    loom_object_free(souden);
    loom_object_free(rtfmvdr);
    loom_tensor *all[] = { wav, sr_t, s.mix, s.clean, win, X, S, mask, mask_n, psd_s, psd_n, rtf,
                           enh[0], enh[1], out[0], out[1] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    return rc;
}
