/* SPDX-License-Identifier: BSD-3-Clause */
/*
** files.h - the files module of audio.so: audio.load, audio.save and
** audio.info with torchaudio's arguments and results, through libsndfile
** (WAV, FLAC, OGG/Vorbis, OGG/Opus and whatever else the system's
** libsndfile decodes).
**
** A file is read from the bytes of the optional `src` input (the CLI's
** --in src=@FILE) or from the path in `uri`; both go through the same
** in-memory reader (sndfile_io.c), which libsndfile sees through
** sf_open_virtual, so a path is mapped once and never read past its end.
** Every header value libsndfile reports is checked before it sizes an
** allocation: a file that claims more samples than its bytes can hold, or
** decodes to fewer frames than it claims, is refused naming the argument.
*/
#ifndef LOOM_AUDIO_FILES_H
#define LOOM_AUDIO_FILES_H

#include "pack.h"

/* torchaudio.load(uri, frame_offset=0, num_frames=-1, normalize=True,
** channels_first=True, format=None) */
#define AUDIO_LOAD_ATTRS(A, op)                                                                                 \
    A(op, uri, STRING, LOOM_DEFAULT_NONE, 0, "path of the file (or give its bytes as input src)", )          \
    A(op, frame_offset, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "frames skipped first", )                  \
    A(op, num_frames, INT, LOOM_DEFAULT_INT(-1), 0, "frames read at most; -1: to the end", )                  \
    A(op, normalize, BOOL, LOOM_DEFAULT_BOOL(1), 0, "float32 in [-1, 1); false: the native integer type of PCM", ) \
    A(op, channels_first, BOOL, LOOM_DEFAULT_BOOL(1), 0, "[channels, frames]; false: [frames, channels]", )    \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "container when the bytes do not say (wav, flac, ogg, ...)", )
PK_ATTR_ENUM(audio_load, AUDIO_LOAD_ATTRS);

/* torchaudio.info(uri, format=None) */
#define AUDIO_INFO_ATTRS(A, op)                                                                                 \
    A(op, uri, STRING, LOOM_DEFAULT_NONE, 0, "path of the file (or give its bytes as input src)", )          \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "container when the bytes do not say", )
PK_ATTR_ENUM(audio_info, AUDIO_INFO_ATTRS);

/* torchaudio.save(uri, src, sample_rate, channels_first=True, format=None,
** encoding=None, bits_per_sample=None) */
#define AUDIO_SAVE_ATTRS(A, op)                                                                                 \
    A(op, uri, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "path of the file written", )                   \
    A(op, sample_rate, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "sample rate, Hz", ) \
    A(op, channels_first, BOOL, LOOM_DEFAULT_BOOL(1), 0, "src is [channels, frames]; false: [frames, channels]", ) \
    A(op, format, STRING, LOOM_DEFAULT_NONE, 0, "wav, flac, ogg / vorbis, opus (default: from uri's extension)", ) \
    A(op, encoding, STRING, LOOM_DEFAULT_NONE, 0, "PCM_S, PCM_U, PCM_F, ULAW, ALAW (default: from src's dtype)", ) \
    A(op, bits_per_sample, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "8, 16, 24, 32 or 64 (default: from src's dtype)", )
PK_ATTR_ENUM(audio_save, AUDIO_SAVE_ATTRS);

#define AUDIO_FILES_OPS(X) X(audio_load_schema) X(audio_save_schema) X(audio_info_schema)
PK_OPS_DECLARE(audio_files_ops, AUDIO_FILES_OPS);

extern const pk_module audio_files_cpu;

#endif /* LOOM_AUDIO_FILES_H */
