/* SPDX-License-Identifier: BSD-3-Clause */
/*
** load_cpu.c - audio.load and audio.info (torchaudio.load / torchaudio.info)
** through libsndfile.
**
** load's dtype: float32 in [-1, 1) when normalize (libsndfile's normalised
** float reads: PCM_16 / 32768, PCM_24 / 2^23, PCM_32 / 2^31, as soundfile
** and torchaudio give); with normalize=false the native type of PCM:
** int16 (16 bit), int32 (24 bit left-justified, 32 bit), uint8 (8 bit
** unsigned), int8 (8 bit signed), float32 / float64 for float files, and
** float32 for lossy codecs.
*/
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "sndfile_io.h"

enum { READ_FLOAT, READ_DOUBLE, READ_SHORT, READ_INT, READ_U8, READ_S8 };

#define LOAD_CHUNK 65536        /* frames decoded per libsndfile call */

static void pick_type(int format, int normalize, loom_dtype *dt, int *how)
{
    const int sub = format & SF_FORMAT_SUBMASK;
    *dt = LOOM_DTYPE_F32;
    *how = READ_FLOAT;
    if (normalize)
        return;
    switch (sub) {
    case SF_FORMAT_PCM_16: *dt = LOOM_DTYPE_I16; *how = READ_SHORT; break;
    case SF_FORMAT_PCM_24: case SF_FORMAT_PCM_32: *dt = LOOM_DTYPE_I32; *how = READ_INT; break;
    case SF_FORMAT_PCM_U8: *dt = LOOM_DTYPE_U8; *how = READ_U8; break;
    case SF_FORMAT_PCM_S8: *dt = LOOM_DTYPE_I8; *how = READ_S8; break;
    case SF_FORMAT_DOUBLE: *dt = LOOM_DTYPE_F64; *how = READ_DOUBLE; break;
    default: break;
    }
}

/* n frames into buf (interleaved, element size of how's type); returns frames read. */
static sf_count_t read_frames(SNDFILE *sf, int how, void *buf, sf_count_t n, int channels)
{
    switch (how) {
    case READ_DOUBLE: return sf_readf_double(sf, buf, n);
    case READ_INT: return sf_readf_int(sf, buf, n);
    case READ_FLOAT: return sf_readf_float(sf, buf, n);
    default: {
        /* 8-bit PCM: libsndfile's shorts are the samples << 8 (offset for unsigned) */
        short *s = buf;
        sf_count_t got = sf_readf_short(sf, s, n);
        for (sf_count_t i = 0; i < got * channels; i++) {
            if (how == READ_U8)
                ((uint8_t *)buf)[i] = (uint8_t)((s[i] >> 8) + 128);
            else if (how == READ_S8)
                ((int8_t *)buf)[i] = (int8_t)(s[i] >> 8);
        }
        return got;
    }
    }
}

static size_t element_size(int how)
{
    return how == READ_DOUBLE ? 8 : how == READ_INT || how == READ_FLOAT ? 4 : how == READ_SHORT ? 2 : 1;
}

static loom_status scalar_i64(loom_call *call, int32_t index, int64_t v)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, LOOM_DTYPE_I64, 0, NULL, &t);
    if (st == LOOM_OK)
        *(int64_t *)loom_data(t) = v;
    return st;
}

static loom_status load(loom_call *call, audio_sf *f)
{
    const loom_attr_value *v = call->attrs;
    const int64_t offset = v[PK_ATTR(audio_load, frame_offset)].u.i, want = v[PK_ATTR(audio_load, num_frames)].u.i;
    const int channels_first = v[PK_ATTR(audio_load, channels_first)].u.b;
    const int64_t frames = f->info.frames, c = f->info.channels;
    if (want == 0 || want < -1)     /* torchaudio: "Expected value of num_frames to be -1 or positive" */
        return pk_host->fail(LOOM_EINVAL, "'num_frames' %lld must be -1 or positive", (long long)want);
    if (offset > frames)
        return pk_host->fail(LOOM_EINVAL, "'frame_offset' %lld is past the end of %s (%lld frames)",
                             (long long)offset, f->what, (long long)frames);
    const int64_t n = want < 0 || want > frames - offset ? frames - offset : want;
    loom_dtype dt;
    int how;
    pick_type(f->info.format, v[PK_ATTR(audio_load, normalize)].u.b, &dt, &how);
    const int64_t shape[2] = { channels_first ? c : n, channels_first ? n : c };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, dt, 2, shape, &out);
    if (st != LOOM_OK || (st = scalar_i64(call, 1, f->info.samplerate)) != LOOM_OK || n == 0)
        return st;
    if (offset > 0 && sf_seek(f->sf, offset, SEEK_SET) != offset)
        return pk_host->fail(LOOM_EINVAL, "%s: cannot seek to frame %lld: %s", f->what, (long long)offset,
                             sf_strerror(f->sf));
    const size_t es = element_size(how);
    /* libsndfile writes 8-bit reads as shorts first: room for 2 bytes a sample */
    const size_t chunk_bytes = (size_t)LOAD_CHUNK * (size_t)c * (es < 2 ? 2 : es);
    char *chunk = channels_first && c > 1 ? pk_host->scratch(call->ctx, chunk_bytes) : NULL;
    char *small = !(channels_first && c > 1) && es < 2 ? pk_host->scratch(call->ctx, chunk_bytes) : NULL;
    if ((channels_first && c > 1 && chunk == NULL) || (es < 2 && !(channels_first && c > 1) && small == NULL))
        return LOOM_ENOMEM;
    char *dst = loom_data(out);
    for (int64_t done = 0; done < n;) {
        const sf_count_t step = n - done < LOAD_CHUNK ? n - done : LOAD_CHUNK;
        char *buf = chunk != NULL ? chunk : small != NULL ? small : dst + (size_t)(done * c) * es;
        const sf_count_t got = read_frames(f->sf, how, buf, step, (int)c);
        if (got <= 0)
            return pk_host->fail(LOOM_EINVAL, "%s is truncated or corrupt: %lld of the %lld frames it declares "
                                 "could be decoded (%s)", f->what, (long long)(offset + done), (long long)frames,
                                 sf_error(f->sf) ? sf_strerror(f->sf) : "no more data");
        if (chunk != NULL) {
            for (int64_t ch = 0; ch < c; ch++)
                for (sf_count_t i = 0; i < got; i++)
                    memcpy(dst + (size_t)(ch * n + done + i) * es, chunk + (size_t)(i * c + ch) * es, es);
        } else if (small != NULL) {
            memcpy(dst + (size_t)(done * c) * es, small, (size_t)(got * c) * es);
        }
        done += got;
    }
    return LOOM_OK;
}

static loom_status load_run_cpu(loom_call *call)
{
    audio_sf f;
    const loom_attr_value *v = call->attrs;
    loom_status st = audio_sf_open(call->inputs[0], v[PK_ATTR(audio_load, uri)].is_set ? v[PK_ATTR(audio_load, uri)].u.s
                                                                                      : NULL,
                                   v[PK_ATTR(audio_load, format)].is_set ? v[PK_ATTR(audio_load, format)].u.s : NULL,
                                   &f);
    if (st != LOOM_OK)
        return st;
    st = load(call, &f);
    audio_sf_close(&f);
    return st;
}

static loom_status info_run_cpu(loom_call *call)
{
    audio_sf f;
    const loom_attr_value *v = call->attrs;
    loom_status st = audio_sf_open(call->inputs[0], v[PK_ATTR(audio_info, uri)].is_set ? v[PK_ATTR(audio_info, uri)].u.s
                                                                                      : NULL,
                                   v[PK_ATTR(audio_info, format)].is_set ? v[PK_ATTR(audio_info, format)].u.s : NULL,
                                   &f);
    if (st != LOOM_OK)
        return st;
    const char *enc = audio_encoding_name(f.info.format);
    const int64_t len = (int64_t)strlen(enc);
    loom_tensor *name;
    if ((st = scalar_i64(call, 0, f.info.samplerate)) == LOOM_OK && (st = scalar_i64(call, 1, f.info.frames)) == LOOM_OK
        && (st = scalar_i64(call, 2, f.info.channels)) == LOOM_OK
        && (st = scalar_i64(call, 3, audio_bits_per_sample(f.info.format))) == LOOM_OK
        && (st = pk_host->alloc_output(call, 4, LOOM_DTYPE_U8, 1, &len, &name)) == LOOM_OK)
        memcpy(loom_data(name), enc, (size_t)len);
    audio_sf_close(&f);
    return st;
}

loom_status audio_save_run_cpu(loom_call *call);

static const loom_kernel_desc files_cpu_kernels[] = {
    PK_KERNEL_CPU(audio_load_schema, "cpu:libsndfile", 0, load_run_cpu),
    PK_KERNEL_CPU(audio_info_schema, "cpu:libsndfile", 0, info_run_cpu),
    PK_KERNEL_CPU(audio_save_schema, "cpu:libsndfile", 0, audio_save_run_cpu),
};

const pk_module audio_files_cpu = PK_MODULE("files", audio_files_ops, files_cpu_kernels, NULL);
