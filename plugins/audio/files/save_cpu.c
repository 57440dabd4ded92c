/* SPDX-License-Identifier: BSD-3-Clause */
/*
** save_cpu.c - audio.save (torchaudio.save) through libsndfile.
**
** Defaults as torchaudio's: the container from the extension of uri; the
** encoding from src's dtype (f32 -> 32-bit float, f64 -> 64-bit float,
** i32 -> 32-bit PCM, i16 -> 16-bit PCM, u8 -> unsigned 8-bit); FLAC
** stores at most 24 bits (float and i32 input become 24-bit), OGG is
** Vorbis unless format is opus. Float samples beyond [-1, 1] are clipped
** (libsndfile's SFC_SET_CLIPPING), never wrapped. The file is written
** under a temporary name next to uri and renamed over it only once
** complete, so a failed save leaves an existing file as it was.
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "describe.h"
#include "files.h"
#include "sndfile_io.h"

#define SAVE_CHUNK 65536

static const char *extension(const char *uri)
{
    const char *dot = strrchr(uri, '.'), *slash = strrchr(uri, '/');
    return dot != NULL && (slash == NULL || dot > slash) ? dot + 1 : NULL;
}

/* The SF_FORMAT_* subtype for encoding / bits (either may be NULL / 0). */
static loom_status subtype_of(const char *enc, int64_t bits, loom_dtype dt, int major, int opus, int *sub)
{
    if (major == SF_FORMAT_OGG) {
        if (enc != NULL && strcasecmp(enc, opus ? "OPUS" : "VORBIS") != 0)
            return pk_host->fail(LOOM_EINVAL, "'encoding' %s: an %s file holds %s", enc, opus ? "opus" : "ogg",
                                 opus ? "OPUS" : "VORBIS");
        *sub = opus ? SF_FORMAT_OPUS : SF_FORMAT_VORBIS;
        return LOOM_OK;
    }
    if (enc == NULL)
        enc = dt == LOOM_DTYPE_F32 || dt == LOOM_DTYPE_F64 ? (major == SF_FORMAT_FLAC ? "PCM_S" : "PCM_F")
            : dt == LOOM_DTYPE_U8 ? (major == SF_FORMAT_FLAC ? "PCM_S" : "PCM_U") : "PCM_S";
    if (bits == 0)
        bits = dt == LOOM_DTYPE_F64 ? 64 : dt == LOOM_DTYPE_F32 || dt == LOOM_DTYPE_I32 ? 32
             : dt == LOOM_DTYPE_I16 ? 16 : 8;
    if (strcasecmp(enc, "PCM_F") != 0 && bits == 64)
        bits = 32;
    if (major == SF_FORMAT_FLAC && bits > 24)
        bits = 24;
    if (strcasecmp(enc, "PCM_S") == 0 && (bits == 8 || bits == 16 || bits == 24 || bits == 32))
        *sub = bits == 8 ? SF_FORMAT_PCM_S8 : bits == 16 ? SF_FORMAT_PCM_16 : bits == 24 ? SF_FORMAT_PCM_24
             : SF_FORMAT_PCM_32;
    else if (strcasecmp(enc, "PCM_U") == 0 && bits == 8)
        *sub = SF_FORMAT_PCM_U8;
    else if (strcasecmp(enc, "PCM_F") == 0 && (bits == 32 || bits == 64))
        *sub = bits == 32 ? SF_FORMAT_FLOAT : SF_FORMAT_DOUBLE;
    else if ((strcasecmp(enc, "ULAW") == 0 || strcasecmp(enc, "ALAW") == 0) && bits == 8)
        *sub = strcasecmp(enc, "ULAW") == 0 ? SF_FORMAT_ULAW : SF_FORMAT_ALAW;
    else
        return pk_host->fail(LOOM_EINVAL, "'encoding' %s with 'bits_per_sample' %lld is not an encoding "
                             "(PCM_S 8/16/24/32, PCM_U 8, PCM_F 32/64, ULAW 8, ALAW 8)", enc, (long long)bits);
    return LOOM_OK;
}

/* Frames [done, done + n) of src into buf, interleaved, as the type libsndfile is given. */
static void gather(const loom_tensor *src, int channels_first, int64_t frames, int64_t c, int64_t done, int64_t n,
                   void *buf)
{
    const loom_dtype dt = loom_tensor_dtype_of(src);
    const size_t es = pk_host->dtype_size(dt);
    const char *p = loom_data(src);
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++) {
            const char *e = p + (size_t)(channels_first ? ch * frames + done + i : (done + i) * c + ch) * es;
            const size_t o = (size_t)(i * c + ch);
            if (dt == LOOM_DTYPE_U8)        /* libsndfile's shorts: the sample << 8 */
                ((short *)buf)[o] = (short)((*(const uint8_t *)e - 128) * 256);
            else if (dt == LOOM_DTYPE_I8)
                ((short *)buf)[o] = (short)(*(const int8_t *)e * 256);
            else
                memcpy((char *)buf + o * es, e, es);
        }
}

static sf_count_t write_frames(SNDFILE *sf, loom_dtype dt, const void *buf, sf_count_t n)
{
    switch (dt) {
    case LOOM_DTYPE_F32: return sf_writef_float(sf, buf, n);
    case LOOM_DTYPE_F64: return sf_writef_double(sf, buf, n);
    case LOOM_DTYPE_I32: return sf_writef_int(sf, buf, n);
    default: return sf_writef_short(sf, buf, n);
    }
}

loom_status audio_save_run_cpu(loom_call *call);
loom_status audio_save_run_cpu(loom_call *call)
{
    const loom_tensor *src = call->inputs[0];
    const loom_attr_value *v = call->attrs;
    const char *uri = v[PK_ATTR(audio_save, uri)].u.s;
    const int channels_first = v[PK_ATTR(audio_save, channels_first)].u.b;
    const loom_dtype dt = loom_tensor_dtype_of(src);
    char b[160];
    const int64_t c = src->shape[channels_first ? 0 : 1], frames = src->shape[channels_first ? 1 : 0];
    if (c < 1 || c > 1024)
        return pk_host->fail(LOOM_EINVAL, "'src' %s has %lld channels (channels_first=%s): 1 to 1024",
                             pk_describe(pk_host, src, b, sizeof b), (long long)c, channels_first ? "true" : "false");
    if (v[PK_ATTR(audio_save, sample_rate)].u.i > INT32_MAX)
        return pk_host->fail(LOOM_EINVAL, "'sample_rate' %lld is too large", (long long)v[PK_ATTR(audio_save, sample_rate)].u.i);
    const char *fmt = v[PK_ATTR(audio_save, format)].is_set ? v[PK_ATTR(audio_save, format)].u.s : extension(uri);
    const int major = audio_container_of(fmt);
    if (major == 0)
        return pk_host->fail(LOOM_EINVAL, "%s '%s' is not a container libsndfile writes (wav, flac, ogg, vorbis, "
                             "opus, aiff, au, caf, w64, rf64)", v[PK_ATTR(audio_save, format)].is_set ? "'format'"
                             : "the extension of 'uri'", fmt != NULL ? fmt : uri);
    SF_INFO info = { .samplerate = (int)v[PK_ATTR(audio_save, sample_rate)].u.i, .channels = (int)c };
    int sub = 0;
    loom_status st = subtype_of(v[PK_ATTR(audio_save, encoding)].is_set ? v[PK_ATTR(audio_save, encoding)].u.s : NULL,
                                v[PK_ATTR(audio_save, bits_per_sample)].is_set ? v[PK_ATTR(audio_save, bits_per_sample)].u.i : 0,
                                dt, major, fmt != NULL && strcasecmp(fmt, "opus") == 0, &sub);
    if (st != LOOM_OK)
        return st;
    info.format = major | sub;
    if (sub == SF_FORMAT_OPUS && info.samplerate != 8000 && info.samplerate != 12000 && info.samplerate != 16000
        && info.samplerate != 24000 && info.samplerate != 48000)
        return pk_host->fail(LOOM_EINVAL, "'sample_rate' %d: Opus takes 8000, 12000, 16000, 24000 or 48000 Hz",
                             info.samplerate);
    if (!sf_format_check(&info))
        return pk_host->fail(LOOM_EINVAL, "libsndfile cannot write %s as %s (%s bits) at %d Hz with %d channels: "
                             "check 'format', 'encoding', 'bits_per_sample', 'sample_rate'", fmt,
                             audio_encoding_name(info.format), v[PK_ATTR(audio_save, bits_per_sample)].is_set ? "given"
                             : "default", info.samplerate, info.channels);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.partial-%ld", uri, (long)getpid()) >= (int)sizeof tmp)
        return pk_host->fail(LOOM_EINVAL, "'uri' is too long");
    SNDFILE *sf = sf_open(tmp, SFM_WRITE, &info);
    if (sf == NULL)
        return pk_host->fail(LOOM_EIO, "'uri' %s: cannot write: %s", uri, sf_strerror(NULL));
    sf_command(sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
    const size_t es = dt == LOOM_DTYPE_U8 || dt == LOOM_DTYPE_I8 ? 2 : pk_host->dtype_size(dt);
    void *buf = pk_host->scratch(call->ctx, (size_t)SAVE_CHUNK * (size_t)c * es);
    st = buf != NULL ? LOOM_OK : LOOM_ENOMEM;
    for (int64_t done = 0; st == LOOM_OK && done < frames;) {
        const int64_t n = frames - done < SAVE_CHUNK ? frames - done : SAVE_CHUNK;
        gather(src, channels_first, frames, c, done, n, buf);
        if (write_frames(sf, dt, buf, n) != n)
            st = pk_host->fail(LOOM_EIO, "'uri' %s: writing failed: %s", uri, sf_strerror(sf));
        done += n;
    }
    if (sf_close(sf) != 0 && st == LOOM_OK)
        st = pk_host->fail(LOOM_EIO, "'uri' %s: closing failed", uri);
    if (st == LOOM_OK && rename(tmp, uri) != 0)
        st = pk_host->fail(LOOM_EIO, "'uri' %s: cannot replace it with the written file", uri);
    if (st != LOOM_OK) {
        remove(tmp);
        return st;
    }
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 0, NULL, &out)) == LOOM_OK)
        *(int64_t *)loom_data(out) = frames;
    return st;
}
