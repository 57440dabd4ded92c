/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_schemas.c - the definitions of the beamforming ops and of the
** methods of the audio.PSD, audio.SoudenMVDR, audio.RTFMVDR and audio.MVDR
** objects. Compiled into audio.so and audio-cuda.so alike, so both define
** the very same schemas. Names and defaults are torchaudio's.
*/
#include "beamform.h"

static const loom_arg_def psd_inputs[] = {
    { .name = "specgram", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "c64|c128 (..., C, F, T) multi-channel STFT" },
    { .name = "mask", .dtypes = BF_REAL, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "f32 (c64) | f64 (c128) (..., F, T) time-frequency mask; none: a plain sum over time" },
};
static const loom_arg_def psd_outputs[] = {
    { .name = "psd", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C, C), the dtype of specgram" },
};

#define REF_INPUT                                                                                            \
    { .name = "reference_channel", .dtypes = BF_REAL, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,                 \
      .doc = "f32|f64 (C) or (..., C) one-hot reference weights (or the int attribute)" }

static const loom_arg_def souden_inputs[] = {
    { .name = "psd_s", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C, C) Hermitian PSD of the target" },
    { .name = "psd_n", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C, C) Hermitian PSD of the noise, the dtype of psd_s" },
    REF_INPUT,
};
static const loom_arg_def weights_outputs[] = {
    { .name = "beamform_weights", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C)" },
};

static const loom_arg_def rtf_weights_inputs[] = {
    { .name = "rtf", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C) relative transfer function" },
    { .name = "psd_n", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C, C) Hermitian PSD of the noise, the dtype of rtf" },
    REF_INPUT,
};

static const loom_arg_def rtf_evd_inputs[] = {
    { .name = "psd_s", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C, C) Hermitian PSD of the target" },
};
static const loom_arg_def rtf_outputs[] = {
    { .name = "rtf", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C)" },
};

static const loom_arg_def apply_inputs[] = {
    { .name = "beamform_weights", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, C)" },
    { .name = "specgram", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., C, F, T), the dtype of beamform_weights" },
};
static const loom_arg_def enhanced_outputs[] = {
    { .name = "specgram_enhanced", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., F, T): sum_c conj(w_c) X_c" },
};

static void psd_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[0];
    if (x->ndim < 3)
        return;
    double c = (double)x->shape[x->ndim - 3];
    double n = (double)loom_numel(x);
    *flops = 8.0 * n * (c + 1) / 2;   /* the upper triangle's complex multiply-adds */
    *bytes = n * (double)pk_host->dtype_size(loom_tensor_dtype_of(x));
}

PK_ATTR_TABLE(bf_psd, BF_PSD_ATTRS);
PK_SCHEMA(bf_psd_schema, "audio.psd", 1,
          "cross-channel power spectral density: psd[f] = sum_t m'[f,t] x[:,f,t] x[:,f,t]^H (torchaudio.functional.psd)",
          PK_INPUTS(psd_inputs), PK_OUTPUTS(psd_outputs), PK_ATTRS(bf_psd_attrs), .cost = psd_cost);

PK_ATTR_TABLE(bf_souden, BF_WEIGHTS_ATTRS);
PK_SCHEMA(bf_souden_schema, "audio.mvdr_weights_souden", 1,
          "MVDR weights after Souden: (psd_n^-1 psd_s) / (trace + eps), the reference channel's column",
          PK_INPUTS(souden_inputs), PK_OUTPUTS(weights_outputs), PK_ATTRS(bf_souden_attrs));

PK_ATTR_TABLE(bf_rtf_weights, BF_WEIGHTS_ATTRS);
PK_SCHEMA(bf_rtf_weights_schema, "audio.mvdr_weights_rtf", 1,
          "MVDR weights from the RTF: psd_n^-1 v / (Re(v^H psd_n^-1 v) + eps), times conj(v[ref]) when a "
          "reference channel is given",
          PK_INPUTS(rtf_weights_inputs), PK_OUTPUTS(weights_outputs), PK_ATTRS(bf_rtf_weights_attrs));

PK_SCHEMA(bf_rtf_evd_schema, "audio.rtf_evd", 1,
          "RTF as the eigenvector of psd_s's largest eigenvalue (LAPACK heevd; its phase is LAPACK's)",
          PK_INPUTS(rtf_evd_inputs), PK_OUTPUTS(rtf_outputs));

PK_ATTR_TABLE(bf_rtf_power, BF_RTF_POWER_ATTRS);
PK_SCHEMA(bf_rtf_power_schema, "audio.rtf_power", 1,
          "RTF by the power method on psd_n^-1 psd_s from the reference channel's column (torchaudio's "
          "rtf_power: no normalisation between iterations)",
          PK_INPUTS(souden_inputs), PK_OUTPUTS(rtf_outputs), PK_ATTRS(bf_rtf_power_attrs));

PK_SCHEMA(bf_apply_schema, "audio.apply_beamforming", 1,
          "the enhanced spectrum sum_c conj(w[f,c]) X[c,f,t] (torchaudio.functional.apply_beamforming)",
          PK_INPUTS(apply_inputs), PK_OUTPUTS(enhanced_outputs));

/* ------------------------------------------------------ object methods */

PK_SCHEMA(bf_psd_method_schema, "audio.PSD", 1,
          "torchaudio.transforms.PSD: the object's multi_mask, normalize and eps (1e-15) on specgram and mask",
          PK_INPUTS(psd_inputs), PK_OUTPUTS(psd_outputs), .object_class = "audio.PSD");

static const loom_arg_def souden_method_inputs[] = {
    { .name = "specgram", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., C, F, T) multi-channel STFT" },
    { .name = "psd_s", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C, C) PSD of the target" },
    { .name = "psd_n", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C, C) PSD of the noise" },
    REF_INPUT,
};
PK_ATTR_TABLE(bf_souden_method, BF_WEIGHTS_ATTRS);
PK_SCHEMA(bf_souden_method_schema, "audio.SoudenMVDR", 1,
          "torchaudio.transforms.SoudenMVDR: apply_beamforming(mvdr_weights_souden(psd_s, psd_n, ...), specgram)",
          PK_INPUTS(souden_method_inputs), PK_OUTPUTS(enhanced_outputs), PK_ATTRS(bf_souden_method_attrs),
          .object_class = "audio.SoudenMVDR");

static const loom_arg_def rtf_method_inputs[] = {
    { .name = "specgram", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., C, F, T) multi-channel STFT" },
    { .name = "rtf", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C) relative transfer function" },
    { .name = "psd_n", .dtypes = BF_COMPLEX, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1,
      .doc = "(..., F, C, C) PSD of the noise" },
    REF_INPUT,
};
PK_ATTR_TABLE(bf_rtf_method, BF_WEIGHTS_ATTRS);
PK_SCHEMA(bf_rtf_method_schema, "audio.RTFMVDR", 1,
          "torchaudio.transforms.RTFMVDR: apply_beamforming(mvdr_weights_rtf(rtf, psd_n, ...), specgram)",
          PK_INPUTS(rtf_method_inputs), PK_OUTPUTS(enhanced_outputs), PK_ATTRS(bf_rtf_method_attrs),
          .object_class = "audio.RTFMVDR");

static const loom_arg_def mvdr_method_inputs[] = {
    { .name = "specgram", .dtypes = BF_COMPLEX, .ndim = -1, .doc = "(..., C, F, T) multi-channel STFT" },
    { .name = "mask_s", .dtypes = BF_REAL, .ndim = -1,
      .doc = "f32|f64 (..., F, T), or (..., C, F, T) with multi_mask: mask of the target" },
    { .name = "mask_n", .dtypes = BF_REAL, .flags = LOOM_ARG_OPTIONAL | LOOM_ARG_SAME_DTYPE_AS(1), .ndim = -1,
      .doc = "mask of the noise, the shape and dtype of mask_s; none: 1 - mask_s" },
};
PK_SCHEMA(bf_mvdr_method_schema, "audio.MVDR", 1,
          "torchaudio.transforms.MVDR: mask-based MVDR computed in complex128 (c64 in, c64 out), online "
          "objects update their PSDs recursively over calls",
          PK_INPUTS(mvdr_method_inputs), PK_OUTPUTS(enhanced_outputs), .object_class = "audio.MVDR");

PK_OPS_DEFINE(audio_beamform_ops, AUDIO_BEAMFORM_OPS);
