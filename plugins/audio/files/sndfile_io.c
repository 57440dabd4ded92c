/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sndfile_io.c - see sndfile_io.h. libsndfile reads only through the
** callbacks below, which never go past the end of the bytes.
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "describe.h"
#include "pack.h"
#include "sndfile_io.h"

static sf_count_t mem_len(void *user) { return ((audio_memfile *)user)->size; }

static sf_count_t mem_seek(sf_count_t offset, int whence, void *user)
{
    audio_memfile *m = user;
    sf_count_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
    if (offset > 0 ? base > INT64_MAX - offset : base < INT64_MIN - offset)
        return -1;
    sf_count_t to = base + offset;
    if (to < 0)
        return -1;
    m->pos = to > m->size ? m->size : to;
    return m->pos;
}

static sf_count_t mem_read(void *ptr, sf_count_t count, void *user)
{
    audio_memfile *m = user;
    if (count <= 0 || m->pos >= m->size)
        return 0;
    sf_count_t n = m->size - m->pos < count ? m->size - m->pos : count;
    memcpy(ptr, m->data + m->pos, (size_t)n);
    m->pos += n;
    return n;
}

static sf_count_t mem_write(const void *ptr, sf_count_t count, void *user)
{
    (void)ptr, (void)count, (void)user;
    return 0;
}

static sf_count_t mem_tell(void *user) { return ((audio_memfile *)user)->pos; }

static SF_VIRTUAL_IO mem_io = { mem_len, mem_seek, mem_read, mem_write, mem_tell };

int audio_container_of(const char *name)
{
    static const struct { const char *name; int major; } names[] = {
        { "wav", SF_FORMAT_WAV }, { "wave", SF_FORMAT_WAV }, { "flac", SF_FORMAT_FLAC },
        { "ogg", SF_FORMAT_OGG }, { "vorbis", SF_FORMAT_OGG }, { "opus", SF_FORMAT_OGG },
        { "aiff", SF_FORMAT_AIFF }, { "aif", SF_FORMAT_AIFF }, { "au", SF_FORMAT_AU }, { "caf", SF_FORMAT_CAF },
        { "w64", SF_FORMAT_W64 }, { "rf64", SF_FORMAT_RF64 }, { "sph", SF_FORMAT_NIST },
    };
    for (size_t i = 0; name != NULL && i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0)
            return names[i].major;
    return 0;
}

/* Does the file's detected format (SF_INFO.format) fit the `format` a
** caller named? libsndfile has no demuxer to force (it reads headers), so
** `format` holds the file to that container, as a forced demuxer would
** fail on another: wav takes RIFF, WAVE_FORMAT_EXTENSIBLE and RF64 (one
** demuxer in FFmpeg), vorbis and opus an Ogg stream of that codec. */
static int format_fits(const char *format, int detected)
{
    const int major = detected & SF_FORMAT_TYPEMASK, sub = detected & SF_FORMAT_SUBMASK;
    const int want = audio_container_of(format);
    if (want == SF_FORMAT_WAV)
        return major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX || major == SF_FORMAT_RF64;
    if (strcasecmp(format, "vorbis") == 0)
        return major == SF_FORMAT_OGG && sub == SF_FORMAT_VORBIS;
    if (strcasecmp(format, "opus") == 0)
        return major == SF_FORMAT_OGG && sub == SF_FORMAT_OPUS;
    return major == want;
}

/* A name for a detected container, for messages. */
static const char *container_name(int detected)
{
    SF_FORMAT_INFO fi = { .format = detected & SF_FORMAT_TYPEMASK };
    return sf_command(NULL, SFC_GET_FORMAT_INFO, &fi, sizeof fi) == 0 && fi.name != NULL ? fi.name : "another";
}

loom_status audio_sf_open(const loom_tensor *src, const char *uri, const char *format, audio_sf *f)
{
    char b[160];
    memset(f, 0, sizeof *f);
    if (format != NULL && audio_container_of(format) == 0)
        return pk_host->fail(LOOM_EINVAL, "'format' '%s' is not a container libsndfile reads "
                             "(wav, flac, ogg, vorbis, opus, aiff, au, caf, w64, rf64, sph)", format);
    if (src != NULL) {
        snprintf(f->what, sizeof f->what, "'src' %s", pk_describe(pk_host, src, b, sizeof b));
        f->mem.data = loom_numel(src) > 0 ? loom_data(src) : NULL;
        f->mem.size = (sf_count_t)loom_numel(src);
    } else if (uri != NULL && uri[0] != 0) {
        snprintf(f->what, sizeof f->what, "'uri' %s", uri);
        const void *data = NULL;
        size_t n = 0;
        loom_status st = pk_host->map_file(uri, &data, &n);
        if (st != LOOM_OK)
            return st;
        f->mapped = data;
        f->mapped_size = n;
        f->mem.data = data;
        f->mem.size = (sf_count_t)n;
    } else {
        return pk_host->fail(LOOM_EINVAL, "no file: give 'uri' (a path) or the input 'src' (its bytes)");
    }
    if (f->mem.size == 0) {
        audio_sf_close(f);
        return pk_host->fail(LOOM_EINVAL, "%s is empty: not an audio file", f->what);
    }
    f->sf = sf_open_virtual(&mem_io, SFM_READ, &f->info, &f->mem);
    if (f->sf == NULL) {
        char why[200];
        snprintf(why, sizeof why, "%s", sf_strerror(NULL));
        audio_sf_close(f);
        return pk_host->fail(LOOM_EINVAL, "%s: libsndfile cannot read it: %s", f->what, why);
    }
    const SF_INFO *in = &f->info;
    if (format != NULL && !format_fits(format, in->format)) {
        loom_status st = pk_host->fail(LOOM_EINVAL, "%s: 'format' is '%s' but the file is %s", f->what, format,
                                       container_name(in->format));
        audio_sf_close(f);
        return st;
    }
    /* a header's values, before they size anything; libsndfile's own limit is 1024 channels */
    if (in->channels < 1 || in->channels > 1024 || in->samplerate < 1 || in->frames < 0) {
        loom_status st = pk_host->fail(LOOM_EINVAL, "%s: the header says %d channels at %d Hz and %lld frames",
                                       f->what, in->channels, in->samplerate, (long long)in->frames);
        audio_sf_close(f);
        return st;
    }
    /* a header's frame count sizes the output, so it is held to what the
    ** bytes can carry: FLAC's densest frames (constant subframes of 65535
    ** samples) store a few thousand samples per byte, Opus and Vorbis
    ** silence a few hundred; 2^14 per byte leaves room for every real file */
    if (in->frames / 16384 > f->mem.size / in->channels + 1) {
        loom_status st = pk_host->fail(LOOM_EINVAL, "%s: the header claims %lld frames of %d channels, more than "
                                       "%lld bytes can hold: truncated or corrupt",
                                       f->what, (long long)in->frames, in->channels, (long long)f->mem.size);
        audio_sf_close(f);
        return st;
    }
    return LOOM_OK;
}

void audio_sf_close(audio_sf *f)
{
    if (f->sf != NULL)
        sf_close(f->sf);
    if (f->mapped != NULL)
        pk_host->unmap_file(f->mapped, f->mapped_size);
    f->sf = NULL;
    f->mapped = NULL;
}

const char *audio_encoding_name(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: case SF_FORMAT_PCM_16: case SF_FORMAT_PCM_24: case SF_FORMAT_PCM_32:
        return (format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC ? "FLAC" : "PCM_S";
    case SF_FORMAT_PCM_U8: return "PCM_U";
    case SF_FORMAT_FLOAT: case SF_FORMAT_DOUBLE: return "PCM_F";
    case SF_FORMAT_ULAW: return "ULAW";
    case SF_FORMAT_ALAW: return "ALAW";
    case SF_FORMAT_VORBIS: return "VORBIS";
    case SF_FORMAT_OPUS: return "OPUS";
    case SF_FORMAT_MPEG_LAYER_III: return "MP3";
    default: return "UNKNOWN";
    }
}

int audio_bits_per_sample(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: case SF_FORMAT_PCM_U8: case SF_FORMAT_ULAW: case SF_FORMAT_ALAW: return 8;
    case SF_FORMAT_PCM_16: return 16;
    case SF_FORMAT_PCM_24: return 24;
    case SF_FORMAT_PCM_32: case SF_FORMAT_FLOAT: return 32;
    case SF_FORMAT_DOUBLE: return 64;
    default: return 0;
    }
}
