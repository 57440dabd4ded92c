/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mel_tables.c - torchaudio's mel filter bank (melscale_fbanks) and DCT
** matrix (create_dct), computed in float32 step by step as torchaudio's
** tensor code does (torch.linspace's two-sided formula included), so the
** tables match it to an ulp or two; f64 models get the float32 tables
** widened, as Module.double() widens torchaudio's buffers.
*/
#include <math.h>
#include <string.h>

#include "spectral.h"

/* torch.linspace(start, end, steps) in float32: the first half counts up
** from start, the second down from end (aten's RangeFactories kernel). */
static void linspace_f32(float start, float end, int64_t steps, float *out)
{
    if (steps == 1) {
        out[0] = start;
        return;
    }
    const float step = (end - start) / (float)(steps - 1);
    const int64_t halfway = steps / 2;
    for (int64_t i = 0; i < steps; i++)
        out[i] = i < halfway ? start + step * (float)i : end - step * (float)(steps - i - 1);
}

/* torchaudio's _hz_to_mel on a Python float (double). */
static double hz_to_mel(double f, int slaney)
{
    if (!slaney)
        return 2595.0 * log10(1.0 + f / 700.0);
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    double mels = f / f_sp;
    if (f >= min_log_hz)
        mels = min_log_mel + log(f / min_log_hz) / logstep;
    return mels;
}

/* torchaudio's _mel_to_hz on a float32 tensor. */
static float mel_to_hz(float m, int slaney)
{
    if (!slaney)
        return 700.0f * (powf(10.0f, m / 2595.0f) - 1.0f);
    const float f_sp = (float)(200.0 / 3), min_log_hz = 1000.0f;
    const float min_log_mel = (float)(1000.0 / (200.0 / 3)), logstep = (float)(log(6.4) / 27.0);
    float f = f_sp * m;
    if (m >= min_log_mel)
        f = min_log_hz * expf(logstep * (m - min_log_mel));
    return f;
}

static void store(loom_dtype dtype, void *dst, int64_t i, float v)
{
    if (dtype == LOOM_DTYPE_F64)
        ((double *)dst)[i] = v;
    else
        ((float *)dst)[i] = v;
}

void audio_melscale_fbanks_fill(const audio_mel_args *a, loom_dtype dtype, void *fb, float *work)
{
    const int64_t nf = a->n_freqs, nm = a->n_mels;
    float *all_freqs = work, *f_pts = work + nf;
    linspace_f32(0.0f, (float)(a->sample_rate / 2), nf, all_freqs);
    linspace_f32((float)hz_to_mel(a->f_min, a->slaney_scale), (float)hz_to_mel(a->f_max, a->slaney_scale), nm + 2,
                 f_pts);
    for (int64_t i = 0; i < nm + 2; i++)
        f_pts[i] = mel_to_hz(f_pts[i], a->slaney_scale);
    for (int64_t i = 0; i < nf; i++) {
        for (int64_t m = 0; m < nm; m++) {
            /* slopes = f_pts - all_freqs; down = -slopes[m] / f_diff[m], up = slopes[m+2] / f_diff[m+1] */
            const float down = (-1.0f * (f_pts[m] - all_freqs[i])) / (f_pts[m + 1] - f_pts[m]);
            const float up = (f_pts[m + 2] - all_freqs[i]) / (f_pts[m + 2] - f_pts[m + 1]);
            float v = fmaxf(0.0f, fminf(down, up));
            if (a->slaney_norm)
                v *= 2.0f / (f_pts[m + 2] - f_pts[m]);
            store(dtype, fb, i * nm + m, v);
        }
    }
}

void audio_create_dct_fill(int64_t n_mfcc, int64_t n_mels, int ortho, loom_dtype dtype, void *dct)
{
    const float step = (float)(M_PI / (double)n_mels);
    const float first = (float)(1.0 / sqrt(2.0)), norm = (float)sqrt(2.0 / (double)n_mels);
    for (int64_t n = 0; n < n_mels; n++) {
        for (int64_t k = 0; k < n_mfcc; k++) {
            float v = cosf(step * ((float)n + 0.5f) * (float)k);
            if (!ortho)
                v *= 2.0f;
            else
                v = (k == 0 ? v * first : v) * norm;
            store(dtype, dct, n * n_mfcc + k, v);
        }
    }
}

/* The filter bank of MelSpectrogram / MFCC: f_max defaults to
** sample_rate // 2, n_freqs is n_fft // 2 + 1. */
loom_status audio_mel_read_fbank_args(const loom_call *call, int64_t n_fft, audio_mel_args *m)
{
    const loom_attr_value *v = call->attrs;
    memset(m, 0, sizeof *m);
    m->n_freqs = n_fft / 2 + 1;
    m->n_mels = v[PK_ATTR(audio_mel_spectrogram, n_mels)].u.i;
    m->sample_rate = v[PK_ATTR(audio_mel_spectrogram, sample_rate)].u.i;
    m->f_min = v[PK_ATTR(audio_mel_spectrogram, f_min)].u.f;
    const loom_attr_value *f_max = &v[PK_ATTR(audio_mel_spectrogram, f_max)];
    m->f_max = f_max->is_set ? f_max->u.f : (double)(m->sample_rate / 2);
    m->slaney_norm = strcmp(v[PK_ATTR(audio_mel_spectrogram, norm)].u.s, "slaney") == 0;
    m->slaney_scale = strcmp(v[PK_ATTR(audio_mel_spectrogram, mel_scale)].u.s, "slaney") == 0;
    if (m->f_min > m->f_max)    /* torchaudio: "Require f_min: ... <= f_max: ..." */
        return pk_host->fail(LOOM_EINVAL, "'f_min' %g must not exceed 'f_max' %g", m->f_min, m->f_max);
    return LOOM_OK;
}
