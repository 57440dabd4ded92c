/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_schemas.c - the schemas of the spectral ops, compiled into both
** packs (audio.so and audio-cuda.so define identical ops). Argument and
** attribute names are torch's and torchaudio's.
*/
#include "spectral.h"

const audio_spectral_op audio_spectral_ids[8] = {
    AUDIO_OP_STFT, AUDIO_OP_ISTFT, AUDIO_OP_SPECTROGRAM, AUDIO_OP_INVERSE_SPECTROGRAM,
    AUDIO_OP_MELSCALE_FBANKS, AUDIO_OP_CREATE_DCT, AUDIO_OP_MEL_SPECTROGRAM, AUDIO_OP_MFCC,
};

static const char *const pad_modes[] = { "reflect", "constant", "replicate", "circular", NULL };
static const char *const spec_norms[] = { "false", "true", "window", "frame_length", NULL };
static const char *const fbank_norms[] = { "none", "slaney", NULL };
static const char *const mel_scales[] = { "htk", "slaney", NULL };
static const char *const dct_norms[] = { "ortho", "none", NULL };

/* ------------------------------------------------------------------- stft */

static const loom_arg_def stft_inputs[] = {
    { .name = "input", .dtypes = AUDIO_REAL | AUDIO_COMPLEX, .ndim = -1,
      .doc = "(..., time) real or complex signal" },
    { .name = "window", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[win_length], the real type of input (default: ones)" },
};
static const loom_arg_def stft_outputs[] = {
    { .name = "output", .dtypes = AUDIO_COMPLEX | AUDIO_REAL, .ndim = -1,
      .doc = "(..., freq, frames) complex, or (..., freq, frames, 2) with return_complex=false" },
};
PK_ATTR_TABLE(audio_stft, AUDIO_STFT_ATTRS);
static const loom_attr_choices stft_choices[] = { { PK_ATTR(audio_stft, pad_mode), pad_modes } };
PK_SCHEMA(audio_stft_schema, "audio.stft", 1, "short-time Fourier transform (torch.stft)", PK_INPUTS(stft_inputs),
          PK_OUTPUTS(stft_outputs), PK_ATTRS(audio_stft_attrs), PK_CHOICES(stft_choices));

/* ------------------------------------------------------------------ istft */

static const loom_arg_def istft_inputs[] = {
    { .name = "input", .dtypes = AUDIO_COMPLEX | AUDIO_REAL, .ndim = -1,
      .doc = "(..., freq, frames) complex, or real (..., freq, frames, 2)" },
    { .name = "window", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[win_length], the real type of input (default: ones)" },
};
static const loom_arg_def istft_outputs[] = {
    { .name = "output", .dtypes = AUDIO_REAL | AUDIO_COMPLEX, .ndim = -1,
      .doc = "(..., time), complex with return_complex=true" },
};
PK_ATTR_TABLE(audio_istft, AUDIO_ISTFT_ATTRS);
PK_SCHEMA(audio_istft_schema, "audio.istft", 1, "inverse short-time Fourier transform by overlap-add (torch.istft)",
          PK_INPUTS(istft_inputs), PK_OUTPUTS(istft_outputs), PK_ATTRS(audio_istft_attrs));

/* ------------------------------------------------------------ spectrogram */

static const loom_arg_def spectrogram_inputs[] = {
    { .name = "waveform", .dtypes = AUDIO_REAL, .ndim = -1, .doc = "(..., time)" },
    { .name = "window", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_OPTIONAL | LOOM_ARG_SAME_DTYPE_AS(0), .ndim = 1,
      .doc = "[win_length] (default: periodic Hann)" },
};
static const loom_arg_def spectrogram_outputs[] = {
    { .name = "output", .dtypes = AUDIO_COMPLEX | AUDIO_REAL, .ndim = -1,
      .doc = "(..., freq, frames): |X|^power, or complex without power" },
};
PK_ATTR_TABLE(audio_spectrogram, AUDIO_SPECTROGRAM_ATTRS);
static const loom_attr_choices spectrogram_choices[] = {
    { PK_ATTR(audio_spectrogram, normalized), spec_norms },
    { PK_ATTR(audio_spectrogram, pad_mode), pad_modes },
};
PK_SCHEMA(audio_spectrogram_schema, "audio.spectrogram", 1,
          "spectrogram of a waveform (torchaudio.functional.spectrogram)", PK_INPUTS(spectrogram_inputs),
          PK_OUTPUTS(spectrogram_outputs), PK_ATTRS(audio_spectrogram_attrs), PK_CHOICES(spectrogram_choices));

static const loom_arg_def inverse_spectrogram_inputs[] = {
    { .name = "spectrogram", .dtypes = AUDIO_COMPLEX, .ndim = -1, .doc = "(..., freq, frames) complex" },
    { .name = "window", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[win_length], the real type of spectrogram (default: periodic Hann)" },
};
static const loom_arg_def inverse_spectrogram_outputs[] = {
    { .name = "output", .dtypes = AUDIO_REAL, .ndim = -1, .doc = "(..., time)" },
};
PK_ATTR_TABLE(audio_inverse_spectrogram, AUDIO_INVERSE_SPECTROGRAM_ATTRS);
static const loom_attr_choices inverse_spectrogram_choices[] = {
    { PK_ATTR(audio_inverse_spectrogram, normalized), spec_norms },
    { PK_ATTR(audio_inverse_spectrogram, pad_mode), pad_modes },
};
PK_SCHEMA(audio_inverse_spectrogram_schema, "audio.inverse_spectrogram", 1,
          "waveform of a complex spectrogram (torchaudio.functional.inverse_spectrogram)",
          PK_INPUTS(inverse_spectrogram_inputs), PK_OUTPUTS(inverse_spectrogram_outputs),
          PK_ATTRS(audio_inverse_spectrogram_attrs), PK_CHOICES(inverse_spectrogram_choices));

/* ------------------------------------------------------------ mel and dct */

static const loom_arg_def fbanks_outputs[] = {
    { .name = "fb", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "[n_freqs, n_mels]" },
};
PK_ATTR_TABLE(audio_melscale_fbanks, AUDIO_MELSCALE_FBANKS_ATTRS);
static const loom_attr_choices fbanks_choices[] = {
    { PK_ATTR(audio_melscale_fbanks, norm), fbank_norms },
    { PK_ATTR(audio_melscale_fbanks, mel_scale), mel_scales },
};
PK_SCHEMA(audio_melscale_fbanks_schema, "audio.melscale_fbanks", 1,
          "triangular mel filter bank (torchaudio.functional.melscale_fbanks)", PK_OUTPUTS(fbanks_outputs),
          PK_ATTRS(audio_melscale_fbanks_attrs), PK_CHOICES(fbanks_choices));

static const loom_arg_def dct_outputs[] = {
    { .name = "dct", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "[n_mels, n_mfcc]" },
};
PK_ATTR_TABLE(audio_create_dct, AUDIO_CREATE_DCT_ATTRS);
static const loom_attr_choices dct_choices[] = { { PK_ATTR(audio_create_dct, norm), dct_norms } };
PK_SCHEMA(audio_create_dct_schema, "audio.create_dct", 1, "DCT-II matrix (torchaudio.functional.create_dct)",
          PK_OUTPUTS(dct_outputs), PK_ATTRS(audio_create_dct_attrs), PK_CHOICES(dct_choices));

static const loom_arg_def mel_inputs[] = {
    { .name = "waveform", .dtypes = AUDIO_REAL, .ndim = -1, .doc = "(..., time)" },
    { .name = "window", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_OPTIONAL | LOOM_ARG_SAME_DTYPE_AS(0), .ndim = 1,
      .doc = "[win_length] (default: periodic Hann)" },
};
static const loom_arg_def mel_outputs[] = {
    { .name = "output", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., n_mels, frames)" },
};
PK_ATTR_TABLE(audio_mel_spectrogram, AUDIO_MEL_SPECTROGRAM_ATTRS);
static const loom_attr_choices mel_choices[] = {
    { PK_ATTR(audio_mel_spectrogram, normalized), spec_norms },
    { PK_ATTR(audio_mel_spectrogram, pad_mode), pad_modes },
    { PK_ATTR(audio_mel_spectrogram, norm), fbank_norms },
    { PK_ATTR(audio_mel_spectrogram, mel_scale), mel_scales },
};
PK_SCHEMA(audio_mel_spectrogram_schema, "audio.mel_spectrogram", 1,
          "mel-scale spectrogram (torchaudio.transforms.MelSpectrogram)", PK_INPUTS(mel_inputs),
          PK_OUTPUTS(mel_outputs), PK_ATTRS(audio_mel_spectrogram_attrs), PK_CHOICES(mel_choices));

static const loom_arg_def mfcc_outputs[] = {
    { .name = "output", .dtypes = AUDIO_REAL, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., n_mfcc, frames)" },
};
PK_ATTR_TABLE(audio_mfcc, AUDIO_MFCC_ATTRS);
static const loom_attr_choices mfcc_choices[] = {
    { PK_ATTR(audio_mfcc, normalized), spec_norms },
    { PK_ATTR(audio_mfcc, pad_mode), pad_modes },
    { PK_ATTR(audio_mfcc, norm), fbank_norms },
    { PK_ATTR(audio_mfcc, mel_scale), mel_scales },
    { PK_ATTR(audio_mfcc, dct_norm), dct_norms },
};
PK_SCHEMA(audio_mfcc_schema, "audio.mfcc", 1, "mel-frequency cepstral coefficients (torchaudio.transforms.MFCC)",
          PK_INPUTS(mel_inputs), PK_OUTPUTS(mfcc_outputs), PK_ATTRS(audio_mfcc_attrs), PK_CHOICES(mfcc_choices));

PK_OPS_DEFINE(audio_spectral_ops, AUDIO_SPECTRAL_OPS);
