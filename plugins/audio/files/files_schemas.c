/* SPDX-License-Identifier: BSD-3-Clause */
/*
** files_schemas.c - the schemas of audio.load, audio.save and audio.info
** (torchaudio's argument names; results as tensors).
*/
#include "files.h"

#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define SAMPLES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64) | LOOM_DTYPE_BIT(LOOM_DTYPE_I16) \
                 | LOOM_DTYPE_BIT(LOOM_DTYPE_I32) | LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_I8))

static const loom_arg_def file_inputs[] = {
    { .name = "src", .dtypes = U8, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "the file's bytes (instead of uri)" },
};

static const loom_arg_def load_outputs[] = {
    { .name = "waveform", .dtypes = SAMPLES, .ndim = 2,
      .doc = "[channels, frames] (channels_first): f32 when normalize, else i16 / i32 / u8 / i8 of PCM" },
    { .name = "sample_rate", .dtypes = I64, .ndim = 0, .doc = "Hz" },
};
PK_ATTR_TABLE(audio_load, AUDIO_LOAD_ATTRS);
PK_SCHEMA(audio_load_schema, "audio.load", 1, "decode an audio file (torchaudio.load, libsndfile)",
          PK_INPUTS(file_inputs), PK_OUTPUTS(load_outputs), PK_ATTRS(audio_load_attrs));

static const loom_arg_def info_outputs[] = {
    { .name = "sample_rate", .dtypes = I64, .ndim = 0, .doc = "Hz" },
    { .name = "num_frames", .dtypes = I64, .ndim = 0, .doc = "frames (samples per channel)" },
    { .name = "num_channels", .dtypes = I64, .ndim = 0, .doc = "channels" },
    { .name = "bits_per_sample", .dtypes = I64, .ndim = 0, .doc = "bits of a PCM sample; 0 for lossy codecs" },
    { .name = "encoding", .dtypes = U8, .ndim = 1,
      .doc = "torchaudio's name: PCM_S, PCM_U, PCM_F, ULAW, ALAW, FLAC, VORBIS, OPUS, ..." },
};
PK_ATTR_TABLE(audio_info, AUDIO_INFO_ATTRS);
PK_SCHEMA(audio_info_schema, "audio.info", 1, "an audio file's metadata (torchaudio.info, libsndfile)",
          PK_INPUTS(file_inputs), PK_OUTPUTS(info_outputs), PK_ATTRS(audio_info_attrs));

static const loom_arg_def save_inputs[] = {
    { .name = "src", .dtypes = SAMPLES, .ndim = 2,
      .doc = "[channels, frames] (channels_first): f32 / f64 in [-1, 1], or i16 / i32 / u8 / i8" },
};
static const loom_arg_def save_outputs[] = {
    { .name = "num_frames", .dtypes = I64, .ndim = 0, .doc = "frames written" },
};
PK_ATTR_TABLE(audio_save, AUDIO_SAVE_ATTRS);
PK_SCHEMA(audio_save_schema, "audio.save", 1, "encode an audio file (torchaudio.save, libsndfile)",
          PK_INPUTS(save_inputs), PK_OUTPUTS(save_outputs), PK_ATTRS(audio_save_attrs));

PK_OPS_DEFINE(audio_files_ops, AUDIO_FILES_OPS);
