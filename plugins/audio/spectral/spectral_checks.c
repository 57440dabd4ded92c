/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_checks.c - the attributes and the framing of the spectral ops,
** shared by every backend: defaults, the window, padding, frame count and
** normalisation, with torch's refusals (each says what torch raises).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "spectral.h"

int audio_spec_norm(const char *s)
{
    if (s == NULL || strcmp(s, "false") == 0)
        return 0;
    if (strcmp(s, "true") == 0 || strcmp(s, "window") == 0)
        return 1;
    if (strcmp(s, "frame_length") == 0)
        return 2;
    return -1;
}

int audio_pad_mode(const char *s)
{
    static const char *const names[] = { "reflect", "constant", "replicate", "circular" };
    for (int i = 0; i < 4; i++)
        if (s != NULL && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* An INT attribute, or 0 when absent. */
static int64_t opt_int(const loom_attr_value *v) { return v->is_set ? v->u.i : 0; }

loom_status audio_stft_read_args(const loom_call *call, audio_stft_args *a)
{
    const loom_attr_value *v = call->attrs;
    memset(a, 0, sizeof *a);
    a->n_fft = v[PK_ATTR(audio_stft, n_fft)].u.i;
    a->hop = opt_int(&v[PK_ATTR(audio_stft, hop_length)]);
    a->win_length = opt_int(&v[PK_ATTR(audio_stft, win_length)]);
    a->hop_default_quarter = 1;
    a->center = v[PK_ATTR(audio_stft, center)].u.b;
    a->pad_mode = audio_pad_mode(v[PK_ATTR(audio_stft, pad_mode)].u.s);
    a->norm_bool = v[PK_ATTR(audio_stft, normalized)].u.b;
    /* torch: onesided defaults to true for a real input and window, false
    ** for a complex one (audio_stft_resolve) */
    a->onesided = v[PK_ATTR(audio_stft, onesided)].is_set ? v[PK_ATTR(audio_stft, onesided)].u.b : -1;
    a->out_kind = v[PK_ATTR(audio_stft, return_complex)].u.b ? AUDIO_OUT_COMPLEX : AUDIO_OUT_REAL_PAIRS;
    a->length = -1;
    return LOOM_OK;
}

loom_status audio_istft_read_args(const loom_call *call, audio_stft_args *a)
{
    const loom_attr_value *v = call->attrs;
    memset(a, 0, sizeof *a);
    a->n_fft = v[PK_ATTR(audio_istft, n_fft)].u.i;
    a->hop = opt_int(&v[PK_ATTR(audio_istft, hop_length)]);
    a->win_length = opt_int(&v[PK_ATTR(audio_istft, win_length)]);
    a->hop_default_quarter = 1;
    a->center = v[PK_ATTR(audio_istft, center)].u.b;
    a->norm_bool = v[PK_ATTR(audio_istft, normalized)].u.b;
    a->onesided = v[PK_ATTR(audio_istft, onesided)].is_set ? v[PK_ATTR(audio_istft, onesided)].u.b : -1;
    a->length = v[PK_ATTR(audio_istft, length)].is_set ? v[PK_ATTR(audio_istft, length)].u.i : -1;
    a->complex_out = v[PK_ATTR(audio_istft, return_complex)].u.b;
    return LOOM_OK;
}

loom_status audio_spectrogram_read_args(const loom_call *call, audio_stft_args *a)
{
    const loom_attr_value *v = call->attrs;
    memset(a, 0, sizeof *a);
    a->pad = v[PK_ATTR(audio_spectrogram, pad)].u.i;
    a->n_fft = v[PK_ATTR(audio_spectrogram, n_fft)].u.i;
    a->hop = opt_int(&v[PK_ATTR(audio_spectrogram, hop_length)]);
    a->win_length = opt_int(&v[PK_ATTR(audio_spectrogram, win_length)]);
    a->default_hann = 1;
    a->center = v[PK_ATTR(audio_spectrogram, center)].u.b;
    a->pad_mode = audio_pad_mode(v[PK_ATTR(audio_spectrogram, pad_mode)].u.s);
    a->normalized = v[PK_ATTR(audio_spectrogram, normalized)].u.s;
    a->onesided = v[PK_ATTR(audio_spectrogram, onesided)].u.b;
    const loom_attr_value *power = &v[PK_ATTR(audio_spectrogram, power)];
    if (power->is_set) {
        a->out_kind = AUDIO_OUT_POWER;
        a->power = power->u.f;
    } else {
        a->out_kind = v[PK_ATTR(audio_spectrogram, return_complex)].u.b ? AUDIO_OUT_COMPLEX : AUDIO_OUT_REAL_PAIRS;
    }
    a->length = -1;
    return LOOM_OK;
}

loom_status audio_inverse_spectrogram_read_args(const loom_call *call, audio_stft_args *a)
{
    const loom_attr_value *v = call->attrs;
    memset(a, 0, sizeof *a);
    a->length = v[PK_ATTR(audio_inverse_spectrogram, length)].is_set
                    ? v[PK_ATTR(audio_inverse_spectrogram, length)].u.i : -1;
    a->pad = v[PK_ATTR(audio_inverse_spectrogram, pad)].u.i;
    a->n_fft = v[PK_ATTR(audio_inverse_spectrogram, n_fft)].u.i;
    a->hop = opt_int(&v[PK_ATTR(audio_inverse_spectrogram, hop_length)]);
    a->win_length = opt_int(&v[PK_ATTR(audio_inverse_spectrogram, win_length)]);
    a->default_hann = 1;
    a->normalized = v[PK_ATTR(audio_inverse_spectrogram, normalized)].u.s;
    a->center = v[PK_ATTR(audio_inverse_spectrogram, center)].u.b;
    a->onesided = v[PK_ATTR(audio_inverse_spectrogram, onesided)].u.b;
    return LOOM_OK;
}

/* MelSpectrogram and MFCC share their leading attribute rows
** (AUDIO_MEL_ATTRS_), so one reader serves both. */
loom_status audio_mel_read_args(const loom_call *call, audio_stft_args *a)
{
    const loom_attr_value *v = call->attrs;
    memset(a, 0, sizeof *a);
    a->pad = v[PK_ATTR(audio_mel_spectrogram, pad)].u.i;
    a->n_fft = v[PK_ATTR(audio_mel_spectrogram, n_fft)].u.i;
    a->hop = opt_int(&v[PK_ATTR(audio_mel_spectrogram, hop_length)]);
    a->win_length = opt_int(&v[PK_ATTR(audio_mel_spectrogram, win_length)]);
    a->default_hann = 1;
    a->center = v[PK_ATTR(audio_mel_spectrogram, center)].u.b;
    a->pad_mode = audio_pad_mode(v[PK_ATTR(audio_mel_spectrogram, pad_mode)].u.s);
    a->normalized = v[PK_ATTR(audio_mel_spectrogram, normalized)].u.s;
    a->onesided = 1;
    a->out_kind = AUDIO_OUT_POWER;
    a->power = v[PK_ATTR(audio_mel_spectrogram, power)].u.f;
    a->length = -1;
    return LOOM_OK;
}

/* The window zero-padded and centred to n_fft, in scratch: the given one
** (its dtype checked by the caller), or torchaudio's periodic Hann (made in
** float32, torch's default dtype, then widened: what Module.double() does
** to a transform's window buffer), or torch's ones. Also its sum of squares. */
static loom_status make_window(loom_call *call, const loom_tensor *window, const audio_stft_args *a,
                               audio_stft_geom *g, double *sum_sq)
{
    const int64_t n = g->n_fft, w = g->win_length, left = (n - w) / 2;
    const size_t es = g->real == LOOM_DTYPE_F64 ? 8 : 4;
    void *buf = a->window_buf != NULL ? a->window_buf : pk_host->scratch(call->ctx, (size_t)n * es);
    if (buf == NULL)
        return LOOM_ENOMEM;
    memset(buf, 0, (size_t)n * es);
    double ss = 0;
    const void *given = window == NULL ? NULL : a->window_values != NULL ? a->window_values : loom_data(window);
    for (int64_t i = 0; i < w; i++) {
        double v;
        if (given != NULL)
            v = es == 8 ? ((const double *)given)[i] : ((const float *)given)[i];
        else if (!a->default_hann || w == 1)    /* torch.hann_window(1) is [1] */
            v = 1.0;
        else
            v = (float)(0.5 - 0.5 * cos(2.0 * M_PI * (double)i / (double)w));
        if (es == 8)
            ((double *)buf)[left + i] = v;
        else
            ((float *)buf)[left + i] = (float)v;
        ss += v * v;
    }
    g->window = buf;
    *sum_sq = ss;
    return LOOM_OK;
}

/* The defaults and checks both directions share. */
static loom_status resolve_common(const audio_stft_args *a, audio_stft_geom *g)
{
    if (a->n_fft > INT32_MAX)   /* FFTW and cuFFT count points in an int */
        return pk_host->fail(LOOM_EINVAL, "'n_fft' %lld is over 2^31 - 1, the largest FFTW and cuFFT transform",
                             (long long)a->n_fft);
    g->n_fft = a->n_fft;
    g->win_length = a->win_length > 0 ? a->win_length : a->n_fft;
    g->hop = a->hop > 0 ? a->hop : a->hop_default_quarter ? a->n_fft / 4 : g->win_length / 2;
    /* torch: "expected 0 < win_length <= n_fft" and "expected hop_length > 0" */
    if (g->win_length > g->n_fft)
        return pk_host->fail(LOOM_EINVAL, "'win_length' %lld must be at most 'n_fft' %lld", (long long)g->win_length,
                             (long long)g->n_fft);
    if (g->hop <= 0)
        return pk_host->fail(LOOM_EINVAL, "'hop_length' defaults to %s, which is 0 for n_fft %lld: give it",
                             a->hop_default_quarter ? "n_fft // 4" : "win_length // 2", (long long)g->n_fft);
    return LOOM_OK;
}

static loom_status check_window(const loom_tensor *window, loom_dtype real, int64_t win_length)
{
    char b[160];
    if (window == NULL)
        return LOOM_OK;
    if (loom_tensor_dtype_of(window) != real)
        return pk_host->fail(LOOM_EINVAL, "'window' %s must be %s, the real type of the signal",
                             pk_describe(pk_host, window, b, sizeof b), pk_host->dtype_name(real));
    if (window->shape[0] != win_length)
        return pk_host->fail(LOOM_EINVAL, "'window' %s must hold win_length = %lld values",
                             pk_describe(pk_host, window, b, sizeof b), (long long)win_length);
    return LOOM_OK;
}

static double norm_scale(const audio_stft_args *a, const audio_stft_geom *g, double sum_sq, int inverse)
{
    int norm = a->normalized != NULL ? audio_spec_norm(a->normalized) : a->norm_bool ? 2 : 0;
    if (norm == 1)      /* torchaudio divides the spectrum by sqrt(sum w^2) */
        return inverse ? sqrt(sum_sq) : 1.0 / sqrt(sum_sq);
    if (norm == 2)      /* torch's normalized: n_fft^-1/2 both ways (irfft norm='ortho') */
        return 1.0 / sqrt((double)g->n_fft);
    return 1.0;
}

loom_status audio_stft_resolve(loom_call *call, const loom_tensor *signal, const loom_tensor *window,
                               const audio_stft_args *a, audio_stft_geom *g)
{
    char b[160];
    loom_status st;
    memset(g, 0, sizeof *g);
    const loom_dtype sdt = loom_tensor_dtype_of(signal);
    g->complex_in = sdt == LOOM_DTYPE_C64 || sdt == LOOM_DTYPE_C128;
    g->real = sdt == LOOM_DTYPE_C64 ? LOOM_DTYPE_F32 : sdt == LOOM_DTYPE_C128 ? LOOM_DTYPE_F64 : sdt;
    /* torch: "Cannot have onesided output if window or input is complex" */
    if (g->complex_in && a->onesided == 1)
        return pk_host->fail(LOOM_EINVAL, "'onesided' true is not allowed with the complex '%s' %s: its spectrum "
                             "is two-sided (onesided false)", call->schema->inputs[0].name,
                             pk_describe(pk_host, signal, b, sizeof b));
    if (signal->ndim < 1)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have a time dim (..., time)", call->schema->inputs[0].name,
                             pk_describe(pk_host, signal, b, sizeof b));
    if ((st = resolve_common(a, g)) != LOOM_OK || (st = check_window(window, g->real, g->win_length)) != LOOM_OK)
        return st;
    g->batch = 1;
    for (int32_t i = 0; i < signal->ndim - 1; i++)
        g->batch *= signal->shape[i];
    g->length = signal->shape[signal->ndim - 1];
    g->pad = a->pad;
    g->pad_mode = a->pad_mode;
    g->center_pad = a->center ? g->n_fft / 2 : 0;
    const int64_t lp = g->length + 2 * g->pad, cp = g->center_pad;
    /* torch.nn.functional.pad's own limits on the centring */
    if (cp > 0 && g->pad_mode == AUDIO_PAD_REFLECT && cp >= lp)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s: reflect padding of n_fft // 2 = %lld needs more than %lld samples",
                             call->schema->inputs[0].name, pk_describe(pk_host, signal, b, sizeof b), (long long)cp,
                             (long long)cp);
    if (cp > 0 && g->pad_mode == AUDIO_PAD_CIRCULAR && cp > lp)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s: circular padding of %lld needs at least that many samples",
                             call->schema->inputs[0].name, pk_describe(pk_host, signal, b, sizeof b), (long long)cp);
    if (cp > 0 && g->pad_mode == AUDIO_PAD_REPLICATE && lp == 0)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s: replicate padding needs a sample", call->schema->inputs[0].name,
                             pk_describe(pk_host, signal, b, sizeof b));
    if (lp + 2 * cp < g->n_fft)     /* torch: "expected 0 < n_fft <= padded length" */
        return pk_host->fail(LOOM_EINVAL, "'n_fft' %lld is longer than the %s signal of '%s' %s (%lld samples)",
                             (long long)g->n_fft, cp > 0 ? "padded" : "", call->schema->inputs[0].name,
                             pk_describe(pk_host, signal, b, sizeof b), (long long)(lp + 2 * cp));
    g->n_frames = 1 + (lp + 2 * cp - g->n_fft) / g->hop;
    g->onesided = a->onesided >= 0 ? a->onesided : !g->complex_in;
    g->n_freq = g->onesided ? g->n_fft / 2 + 1 : g->n_fft;
    g->out_kind = a->out_kind;
    g->power = a->power;
    double ss;
    if ((st = make_window(call, window, a, g, &ss)) != LOOM_OK)
        return st;
    g->scale = norm_scale(a, g, ss, 0);
    return LOOM_OK;
}

loom_status audio_istft_resolve(loom_call *call, const loom_tensor *spec, int spec_pairs, const loom_tensor *window,
                                const audio_stft_args *a, audio_stft_geom *g)
{
    char b[160];
    loom_status st;
    const char *name = call->schema->inputs[0].name;
    memset(g, 0, sizeof *g);
    loom_dtype dt = loom_tensor_dtype_of(spec);
    g->real = dt == LOOM_DTYPE_C64 || dt == LOOM_DTYPE_F32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F64;
    const int32_t lead = spec->ndim - 2 - spec_pairs;     /* dims before (freq, frames) */
    if (lead < 0 || (spec_pairs && spec->shape[spec->ndim - 1] != 2))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be %s", name, pk_describe(pk_host, spec, b, sizeof b),
                             spec_pairs ? "real (..., freq, frames, 2)" : "complex (..., freq, frames)");
    if ((st = resolve_common(a, g)) != LOOM_OK || (st = check_window(window, g->real, g->win_length)) != LOOM_OK)
        return st;
    g->batch = 1;
    for (int32_t i = 0; i < lead; i++)
        g->batch *= spec->shape[i];
    g->n_freq = spec->shape[lead];
    g->n_frames = spec->shape[lead + 1];
    g->onesided = a->onesided >= 0 ? a->onesided : g->n_freq != g->n_fft;
    g->complex_out = a->complex_out;
    /* torch: "Cannot have onesided output if window or input is complex" */
    if (g->complex_out && g->onesided)
        return pk_host->fail(LOOM_EINVAL, "'return_complex' true needs a two-sided '%s' (n_fft = %lld bins, "
                             "'onesided' false): %s %s", name, (long long)g->n_fft,
                             pk_describe(pk_host, spec, b, sizeof b), a->onesided == 1 ? "and 'onesided' is true" : "has n_fft // 2 + 1 bins");
    const int64_t want = g->onesided ? g->n_fft / 2 + 1 : g->n_fft;
    if (g->n_freq != want)      /* torch: "expected the frequency dimension ... to equal n_fft / 2 + 1" */
        return pk_host->fail(LOOM_EINVAL, "'%s' %s has %lld bins; %s n_fft %lld needs %lld", name,
                             pk_describe(pk_host, spec, b, sizeof b), (long long)g->n_freq,
                             g->onesided ? "onesided" : "two-sided", (long long)g->n_fft, (long long)want);
    if (g->n_frames < 1)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s has no frames", name, pk_describe(pk_host, spec, b, sizeof b));
    g->center_pad = a->center ? g->n_fft / 2 : 0;
    g->ola_len = g->n_fft + g->hop * (g->n_frames - 1);
    g->start = g->center_pad;
    /* inverse_spectrogram asks istft for length + 2 pad, then drops pad at each end */
    const int64_t length = a->length >= 0 ? a->length + 2 * a->pad : -1;
    g->trim = a->length >= 0 ? a->pad : 0;
    int64_t end = length >= 0 ? g->start + length : g->ola_len - g->center_pad;
    int64_t stop = end < g->ola_len ? end : g->ola_len;
    g->out_valid = stop > g->start ? stop - g->start : 0;
    g->out_len = end > g->start ? end - g->start : 0;
    double ss;
    if ((st = make_window(call, window, a, g, &ss)) != LOOM_OK)
        return st;
    g->scale = norm_scale(a, g, ss, 1);
    if (a->normalized != NULL ? audio_spec_norm(a->normalized) != 2 : !a->norm_bool)
        g->scale /= (double)g->n_fft;   /* irfft's norm='backward'; 'ortho' was set by norm_scale */
    return LOOM_OK;
}

loom_status audio_istft_envelope(const audio_stft_geom *g, void *inv)
{
    const int d = g->real == LOOM_DTYPE_F64;
    const int64_t n = g->out_valid;
    double *env = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (env == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory for the window envelope (%lld samples)", (long long)n);
    for (int64_t m = 0; m < g->n_frames; m++) {
        const int64_t fs = m * g->hop;
        for (int64_t i = 0; i < g->n_fft; i++) {
            const int64_t t = fs + i - g->start;
            if (t < 0 || t >= n)
                continue;
            const double w = d ? ((const double *)g->window)[i] : ((const float *)g->window)[i];
            env[t] += w * w;
        }
    }
    loom_status st = LOOM_OK;
    for (int64_t t = 0; t < n && st == LOOM_OK; t++) {
        if (fabs(env[t]) < 1e-11)
            st = pk_host->fail(LOOM_EINVAL, "the window's overlap-add is %g at output sample %lld, below 1e-11: "
                               "'window', 'hop_length' and 'n_fft' break the NOLA condition", env[t], (long long)t);
        else if (d)
            ((double *)inv)[t] = 1.0 / env[t];
        else
            ((float *)inv)[t] = (float)(1.0 / env[t]);
    }
    free(env);
    return st;
}

loom_status audio_alloc_lead(loom_call *call, int32_t index, loom_dtype dt, const loom_tensor *in, int32_t lead,
                             const int64_t *tail, int32_t n_tail, loom_tensor **out)
{
    int64_t shape[LOOM_MAX_NDIM];
    if (lead + n_tail > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "'%s' has %d dims: the output would have more than %d",
                             call->schema->inputs[0].name, in->ndim, LOOM_MAX_NDIM);
    for (int32_t i = 0; i < lead; i++)
        shape[i] = in->shape[i];
    for (int32_t i = 0; i < n_tail; i++)
        shape[lead + i] = tail[i];
    return pk_host->alloc_output(call, index, dt, lead + n_tail, shape, out);
}
