/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sndfile_io.h - libsndfile over bytes in memory: the one reader of
** audio.load and audio.info (a path is mapped with the host's map_file),
** and the names torchaudio gives encodings.
*/
#ifndef LOOM_AUDIO_SNDFILE_IO_H
#define LOOM_AUDIO_SNDFILE_IO_H

#include <sndfile.h>

#include "loom/plugin.h"

typedef struct audio_memfile {
    const unsigned char *data;
    sf_count_t size, pos;
} audio_memfile;

/* An open file: libsndfile's handle and what it found in the header. */
typedef struct audio_sf {
    SNDFILE *sf;
    SF_INFO info;
    audio_memfile mem;
    const void *mapped;         /* the mapping of uri, or NULL for src bytes */
    size_t mapped_size;
    char what[200];             /* "'uri' x.wav" or "'src' u8[1234]": names the argument in messages */
} audio_sf;

/* Open the bytes of src (when not NULL) or the file at uri for reading,
** checking what libsndfile reports (channels, rate, frames against the
** byte count). On failure nothing stays open and the error names the
** argument. `format` (NULL for none) must be a container name libsndfile
** knows; the container itself is read from the bytes. */
loom_status audio_sf_open(const loom_tensor *src, const char *uri, const char *format, audio_sf *f);
void audio_sf_close(audio_sf *f);

/* torchaudio's encoding name ("PCM_S", "FLAC", ...) and bits per sample
** (0 for lossy codecs) of an SF_INFO format. */
const char *audio_encoding_name(int format);
int audio_bits_per_sample(int format);

/* The SF_FORMAT_* major format of a container name (wav, flac, ogg,
** vorbis, opus, ...), 0 if unknown. */
int audio_container_of(const char *name);

#endif /* LOOM_AUDIO_SNDFILE_IO_H */
