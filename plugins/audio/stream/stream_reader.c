/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_reader.c - the reader's demuxing and decoding (stream_reader.h):
** opening a source, its metadata, one decoder per source stream that has
** outputs, the packet loop, drain at the end, and seek.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavdevice/avdevice.h>
#include <libavutil/hwcontext.h>
#include <libavutil/dict.h>
#include <libavutil/pixdesc.h>

#include "stream_internal.h"

int sr_fail(sr_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *sr_averr(int code, char buf[AV_ERROR_MAX_STRING_SIZE])
{
    av_strerror(code, buf, AV_ERROR_MAX_STRING_SIZE);
    return buf;
}

const char *sr_error(const sr_reader *r) { return r->err; }

void sr_set_log(sr_reader *r, void (*log)(void *user, const char *msg), void *user)
{
    r->log = log;
    r->log_user = user;
}

int sr_open(sr_reader **out, const sr_source *src, char err[SR_ERR_LEN])
{
    static int devices_registered;
    char eb[AV_ERROR_MAX_STRING_SIZE];
    *out = NULL;
    err[0] = '\0';
    if (!devices_registered) {      /* idempotent; makes alsa, v4l2, x11grab... known to -f */
        avdevice_register_all();
        devices_registered = 1;
    }
    int n_given = (src->url != NULL) + (src->data != NULL || (src->size > 0)) + (src->io != NULL);
    if (n_given != 1) {
        snprintf(err, SR_ERR_LEN, "give exactly one source: 'src' (a path or URL), the bytes of a file, or read "
                                  "callbacks (%d given)", n_given);
        return -1;
    }
    const AVInputFormat *ifmt = NULL;
    if (src->format != NULL && *src->format != '\0') {
        ifmt = av_find_input_format(src->format);
        if (ifmt == NULL) {
            snprintf(err, SR_ERR_LEN, "'format' \"%s\" is not a demuxer or input device of this FFmpeg", src->format);
            return -1;
        }
    }
    sr_reader *r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(err, SR_ERR_LEN, "out of memory");
        return -1;
    }
    AVDictionary *opts = NULL;
    int ret = -1;
    r->fmt = avformat_alloc_context();
    r->pkt = av_packet_alloc();
    r->frame = av_frame_alloc();
    r->filtered = av_frame_alloc();
    if (r->fmt == NULL || r->pkt == NULL || r->frame == NULL || r->filtered == NULL) {
        snprintf(err, SR_ERR_LEN, "out of memory");
        goto fail;
    }
    if (stream_parse_options(&opts, src->option, "option", err, SR_ERR_LEN) != 0)
        goto fail;
    const char *url = src->url;
    if (src->io != NULL) {
        if (src->io->struct_size < sizeof(loom_stream_io) || src->io->read == NULL) {
            snprintf(err, SR_ERR_LEN, "the %s callbacks need a read function", LOOM_STREAM_IO_V1);
            goto fail;
        }
        r->avio = sr_avio_callbacks(src->io, src->buffer_size, &r->avio_opaque);
    } else if (url == NULL)
        r->avio = sr_avio_memory(src->data, src->size, src->buffer_size, &r->avio_opaque);
    else if (strcmp(url, "-") == 0)
        url = "pipe:0";
    if (url == NULL) {
        if (r->avio == NULL) {
            snprintf(err, SR_ERR_LEN, "out of memory");
            goto fail;
        }
        r->fmt->pb = r->avio;
        r->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    }
    ret = avformat_open_input(&r->fmt, url != NULL ? url : "", ifmt, &opts);
    if (ret < 0) {
        r->fmt = NULL;      /* freed by avformat_open_input */
        snprintf(err, SR_ERR_LEN, "cannot open %s%s%s: %s", url != NULL ? "'" : "",
                 url != NULL ? url : src->io != NULL ? "the read callbacks' data" : "the in-memory media",
                 url != NULL ? "'" : "", sr_averr(ret, eb));
        goto fail;
    }
    if (stream_leftover_options(opts, "option", "this demuxer or protocol", err, SR_ERR_LEN) != 0)
        goto fail;
    ret = avformat_find_stream_info(r->fmt, NULL);
    if (ret < 0) {
        snprintf(err, SR_ERR_LEN, "cannot find the streams of %s: %s", url != NULL ? url : "the media",
                 sr_averr(ret, eb));
        goto fail;
    }
    r->decoders = calloc(r->fmt->nb_streams ? r->fmt->nb_streams : 1, sizeof *r->decoders);
    if (r->decoders == NULL) {
        snprintf(err, SR_ERR_LEN, "out of memory");
        goto fail;
    }
    av_dict_free(&opts);
    *out = r;
    return 0;
fail:
    av_dict_free(&opts);
    sr_close(r);
    return -1;
}

void sr_close(sr_reader *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->n_outs; i++) {
        sr_output_free(r->outs[i]);
        free(r->outs[i]);
    }
    free(r->outs);
    if (r->decoders != NULL && r->fmt != NULL)
        for (unsigned i = 0; i < r->fmt->nb_streams; i++)
            avcodec_free_context(&r->decoders[i].ctx);
    free(r->decoders);
    avformat_close_input(&r->fmt);
    sr_avio_free(&r->avio, &r->avio_opaque);
    av_packet_free(&r->pkt);
    av_frame_free(&r->frame);
    av_frame_free(&r->filtered);
    free(r);
}

/* ---------------------------------------------------------------- metadata */

int sr_num_src_streams(const sr_reader *r) { return (int)r->fmt->nb_streams; }

int sr_default_stream(const sr_reader *r, int video)
{
    int i = av_find_best_stream(r->fmt, video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
    return i < 0 ? -1 : i;
}

int sr_src_info_get(sr_reader *r, int index, sr_src_info *o)
{
    if (index < 0 || index >= (int)r->fmt->nb_streams)
        return sr_fail(r, "source stream %d does not exist: the source has %u", index, r->fmt->nb_streams);
    const AVStream *st = r->fmt->streams[index];
    const AVCodecParameters *p = st->codecpar;
    const AVCodecDescriptor *d = avcodec_descriptor_get(p->codec_id);
    const char *mt = av_get_media_type_string(p->codec_type);
    memset(o, 0, sizeof *o);
    o->media_type = mt != NULL ? mt : "unknown";
    o->codec = d != NULL ? d->name : "";
    o->codec_long_name = d != NULL && d->long_name != NULL ? d->long_name : "";
    o->format = "";
    o->bit_rate = p->bit_rate;
    o->num_frames = st->nb_frames;
    o->bits_per_sample = p->bits_per_raw_sample;
    o->sample_rate = NAN;
    o->frame_rate = NAN;
    if (p->codec_type == AVMEDIA_TYPE_AUDIO) {
        const char *f = av_get_sample_fmt_name(p->format);
        o->format = f != NULL ? f : "";
        o->sample_rate = p->sample_rate;
        o->num_channels = p->ch_layout.nb_channels;
    } else if (p->codec_type == AVMEDIA_TYPE_VIDEO) {
        const char *f = av_get_pix_fmt_name(p->format);
        o->format = f != NULL ? f : "";
        o->width = p->width;
        o->height = p->height;
        AVRational fr = st->avg_frame_rate;
        if (fr.num > 0 && fr.den > 0)
            o->frame_rate = av_q2d(fr);
    }
    return 0;
}

char *sr_metadata(const sr_reader *r)
{
    size_t cap = 1, len = 0;
    const AVDictionaryEntry *e = NULL;
    while ((e = av_dict_get(r->fmt->metadata, "", e, AV_DICT_IGNORE_SUFFIX)) != NULL)
        cap += strlen(e->key) + strlen(e->value) + 2;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    while ((e = av_dict_get(r->fmt->metadata, "", e, AV_DICT_IGNORE_SUFFIX)) != NULL)
        len += (size_t)snprintf(s + len, cap - len, "%s=%s\n", e->key, e->value);
    return s;
}

/* ----------------------------------------------------------------- outputs */

void sr_audio_filter_desc(char *buf, size_t n, int64_t sample_rate, const char *sample_fmt, int64_t num_channels)
{
    size_t k = 0;
    buf[0] = '\0';
    if (sample_rate > 0)
        k += (size_t)snprintf(buf + k, n - k, "aresample=%lld", (long long)sample_rate);
    if (k < n && ((sample_fmt != NULL && *sample_fmt) || num_channels > 0)) {
        k += (size_t)snprintf(buf + k, n - k, "%saformat=", k ? "," : "");
        if (k < n && sample_fmt != NULL && *sample_fmt)
            k += (size_t)snprintf(buf + k, n - k, "sample_fmts=%s", sample_fmt);
        if (k < n && num_channels > 0)
            snprintf(buf + k, n - k, "%schannel_layouts=%lldc", sample_fmt != NULL && *sample_fmt ? ":" : "",
                     (long long)num_channels);
    }
}

void sr_video_filter_desc(char *buf, size_t n, double frame_rate, int64_t width, int64_t height, const char *pix_fmt)
{
    size_t k = 0;
    buf[0] = '\0';
    if (frame_rate > 0)
        k += (size_t)snprintf(buf + k, n - k, "fps=%.17g", frame_rate);
    if (k < n && (width > 0 || height > 0)) {
        k += (size_t)snprintf(buf + k, n - k, "%sscale=", k ? "," : "");
        if (k < n && width > 0)
            k += (size_t)snprintf(buf + k, n - k, "width=%lld", (long long)width);
        if (k < n && height > 0)
            k += (size_t)snprintf(buf + k, n - k, "%sheight=%lld", width > 0 ? ":" : "", (long long)height);
    }
    if (k < n && pix_fmt != NULL && *pix_fmt)
        snprintf(buf + k, n - k, "%sformat=pix_fmts=%s", k ? "," : "", pix_fmt);
}

/* libavutil/hwcontext_cuda.h's flag (that header includes the CUDA driver's
** cuda.h, which a build without the toolkit lacks): share the primary context. */
#ifndef AV_CUDA_USE_PRIMARY_CONTEXT
#  define AV_CUDA_USE_PRIMARY_CONTEXT (1 << 0)
#endif

/* CUDA frames when the decoder offers them; otherwise its software format,
** which the output then refuses, naming it (a profile NVDEC lacks). */
static enum AVPixelFormat pick_cuda_format(AVCodecContext *c, const enum AVPixelFormat *fmts)
{
    for (const enum AVPixelFormat *p = fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == AV_PIX_FMT_CUDA)
            return *p;
    return avcodec_default_get_format(c, fmts);
}

/* hw_accel=cuda: FFmpeg's NVDEC hwaccel of codec on the reader's device, on
** the device's primary context (the CUDA runtime's, so the cuda pack reads
** the frames it decodes). 0, or -1 naming what is missing. */
static int attach_cuda(sr_reader *r, AVCodecContext *c, const AVCodec *codec, const sr_cuda_ops *cuda)
{
    char eb[AV_ERROR_MAX_STRING_SIZE], dev[16];
    int has = 0;
    for (int i = 0; !has; i++) {
        const AVCodecHWConfig *h = avcodec_get_hw_config(codec, i);
        if (h == NULL)
            break;
        has = h->device_type == AV_HWDEVICE_TYPE_CUDA && (h->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX);
    }
    if (!has)
        return sr_fail(r, "'hw_accel' \"cuda\": the %s decoder of this FFmpeg has no CUDA (NVDEC) hwaccel", codec->name);
    AVBufferRef *hw = NULL;
    snprintf(dev, sizeof dev, "%d", cuda->device_id);
    int ret = av_hwdevice_ctx_create(&hw, AV_HWDEVICE_TYPE_CUDA, dev, NULL, AV_CUDA_USE_PRIMARY_CONTEXT);
    if (ret < 0)
        return sr_fail(r, "'hw_accel' \"cuda\": FFmpeg cannot open CUDA device %d for NVDEC: %s", cuda->device_id,
                       sr_averr(ret, eb));
    c->hw_device_ctx = hw;
    c->get_format = pick_cuda_format;
    return 0;
}

static int open_decoder(sr_reader *r, int si, const sr_output_config *cfg)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    sr_decoder *d = &r->decoders[si];
    const AVStream *st = r->fmt->streams[si];
    if (d->ctx != NULL) {
        if (cfg->decoder != NULL || cfg->decoder_option != NULL)
            return sr_fail(r, "'decoder' and 'decoder_option' apply to the first output of a stream; stream %d "
                              "already has its decoder", si);
        if (d->hw_cuda != (cfg->cuda != NULL))
            return sr_fail(r, "'hw_accel': stream %d already decodes %s; its outputs share one decoder", si,
                           d->hw_cuda ? "on NVDEC (hw_accel=cuda)" : "on the CPU (no hw_accel)");
        return 0;
    }
    const AVCodec *codec = cfg->decoder != NULL && *cfg->decoder ? avcodec_find_decoder_by_name(cfg->decoder)
                                                                 : avcodec_find_decoder(st->codecpar->codec_id);
    if (codec == NULL) {
        if (cfg->decoder != NULL && *cfg->decoder)
            return sr_fail(r, "'decoder' \"%s\" is not a decoder of this FFmpeg", cfg->decoder);
        return sr_fail(r, "stream %d: this FFmpeg has no decoder for codec %s", si,
                       avcodec_get_name(st->codecpar->codec_id));
    }
    AVCodecContext *c = avcodec_alloc_context3(codec);
    if (c == NULL)
        return sr_fail(r, "out of memory for a decoder");
    AVDictionary *opts = NULL;
    int ret = avcodec_parameters_to_context(c, st->codecpar);
    if (ret < 0) {
        avcodec_free_context(&c);
        return sr_fail(r, "stream %d: bad codec parameters: %s", si, sr_averr(ret, eb));
    }
    c->pkt_timebase = st->time_base;
    if (cfg->cuda != NULL && attach_cuda(r, c, codec, cfg->cuda) != 0) {
        avcodec_free_context(&c);
        return -1;
    }
    if (stream_parse_options(&opts, cfg->decoder_option, "decoder_option", r->err, sizeof r->err) != 0) {
        avcodec_free_context(&c);
        return -1;
    }
    ret = avcodec_open2(c, codec, &opts);
    if (ret < 0) {
        av_dict_free(&opts);
        avcodec_free_context(&c);
        return sr_fail(r, "stream %d: cannot open decoder %s: %s", si, codec->name, sr_averr(ret, eb));
    }
    if (stream_leftover_options(opts, "decoder_option", "this decoder", r->err, sizeof r->err) != 0) {
        av_dict_free(&opts);
        avcodec_free_context(&c);
        return -1;
    }
    av_dict_free(&opts);
    d->ctx = c;
    d->hw_cuda = cfg->cuda != NULL;
    return 0;
}

/* torchaudio warns once and drops silently after that; loom reports every
** dropped chunk (the counters are in the output's info). */
static void log_drop(void *user, int64_t dropped)
{
    sr_output *o = user;
    if (o->owner->log != NULL) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "audio.stream_reader: output %d dropped its oldest chunk (%lld so far): more than "
                 "buffer_chunk_size=%lld chunks were buffered; pop chunks sooner or raise buffer_chunk_size",
                 o->index, (long long)dropped, (long long)o->buffer_chunk_size);
        o->owner->log(o->owner->log_user, msg);
    }
}

int sr_add_output(sr_reader *r, const sr_output_config *cfg)
{
    int si = cfg->stream_index;
    if (si < 0) {
        si = sr_default_stream(r, cfg->video);
        if (si < 0)
            return sr_fail(r, "'stream_index' (default): the source has no %s stream", cfg->video ? "video" : "audio");
    }
    if (si >= (int)r->fmt->nb_streams)
        return sr_fail(r, "'stream_index' %d does not exist: the source has %u streams", si, r->fmt->nb_streams);
    enum AVMediaType want = cfg->video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO;
    if (r->fmt->streams[si]->codecpar->codec_type != want) {
        const char *mt = av_get_media_type_string(r->fmt->streams[si]->codecpar->codec_type);
        return sr_fail(r, "'stream_index' %d is a %s stream, not %s", si, mt != NULL ? mt : "unknown",
                       cfg->video ? "video" : "audio");
    }
    if (cfg->frames_per_chunk == 0 || cfg->frames_per_chunk < -1)
        return sr_fail(r, "'frames_per_chunk' must be positive or -1 (%lld)", (long long)cfg->frames_per_chunk);
    if (cfg->buffer_chunk_size == 0 || cfg->buffer_chunk_size < -1)
        return sr_fail(r, "'buffer_chunk_size' must be positive or -1 (%lld)", (long long)cfg->buffer_chunk_size);
    const int hw = cfg->hw_accel != NULL && *cfg->hw_accel;
    if (hw && (!cfg->video || strcmp(cfg->hw_accel, "cuda") != 0))
        return sr_fail(r, "'hw_accel' \"%s\": only \"cuda\" (NVDEC), for video streams", cfg->hw_accel);
    if (hw && cfg->cuda == NULL)
        return sr_fail(r, "'hw_accel' \"cuda\": this reader is on the CPU; make it on a cuda device "
                          "(loom_object_options.device) so that audio-cuda.so (a CUDA build) decodes on NVDEC");
    sr_output_config c_ = *cfg;
    if (!hw)
        c_.cuda = NULL;         /* a cuda reader's software output: host chunks */
    cfg = &c_;
    const int had_decoder = r->decoders[si].ctx != NULL;
    if (open_decoder(r, si, cfg) != 0)
        return -1;
    sr_output **outs = realloc(r->outs, (size_t)(r->n_outs + 1) * sizeof *outs);
    if (outs == NULL)
        return sr_fail(r, "out of memory");
    r->outs = outs;
    sr_output *o = calloc(1, sizeof *o);
    if (o == NULL)
        return sr_fail(r, "out of memory");
    o->owner = r;
    o->index = r->n_outs;
    o->source_index = si;
    o->video = cfg->video;
    o->frames_per_chunk = cfg->frames_per_chunk;
    o->buffer_chunk_size = cfg->buffer_chunk_size;
    o->filter_desc = av_strdup(cfg->filter_desc != NULL && *cfg->filter_desc ? cfg->filter_desc
                                                                            : cfg->video ? "null" : "anull");
    o->buf.on_drop = log_drop;
    o->buf.drop_user = o;
    if (cfg->cuda != NULL) {
        o->on_cuda = 1;
        o->cuda = *cfg->cuda;
    }
    if (o->filter_desc != NULL && cfg->video && !o->on_cuda)
        sr_output_split_format(o);
    if (o->filter_desc == NULL || sr_output_build_graph(r, o, r->fmt->streams[si], r->decoders[si].ctx) != 0) {
        if (o->filter_desc == NULL)
            sr_fail(r, "out of memory");
        sr_output_free(o);
        free(o);
        if (!had_decoder)       /* a refused output leaves the reader as it was */
            avcodec_free_context(&r->decoders[si].ctx);
        return -1;
    }
    outs[r->n_outs] = o;
    return r->n_outs++;
}

int sr_num_outputs(const sr_reader *r) { return r->n_outs; }

int sr_out_info_get(const sr_reader *r, int index, sr_out_info *out)
{
    if (index < 0 || index >= r->n_outs)
        return sr_fail((sr_reader *)r, "output stream %d does not exist: %d were added", index, r->n_outs);
    const sr_output *o = r->outs[index];
    memset(out, 0, sizeof *out);
    out->source_index = o->source_index;
    out->filter_description = o->filter_desc;
    out->video = o->video;
    out->dtype = o->dtype;
    out->ndim_frame = o->ndim;
    memcpy(out->frame_shape, o->shape, sizeof o->shape);
    out->time_base = av_q2d(o->out_tb);
    out->dropped_chunks = o->buf.dropped_chunks;
    out->dropped_frames = o->buf.dropped_frames;
    out->frames_per_chunk = o->frames_per_chunk;
    out->buffer_chunk_size = o->buffer_chunk_size;
    out->on_cuda = o->on_cuda;
    return 0;
}

/* ------------------------------------------------------------------ reading */

static int send_to_outputs(sr_reader *r, int si, AVFrame *f)
{
    for (int i = 0; i < r->n_outs; i++)
        if (r->outs[i]->source_index == si && sr_output_send(r, r->outs[i], f) != 0)
            return -1;
    return 0;
}

/* torchaudio's StreamProcessor::process_packet: pkt NULL drains. */
static int decode(sr_reader *r, int si, const AVPacket *pkt)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    sr_decoder *d = &r->decoders[si];
    int ret = avcodec_send_packet(d->ctx, pkt);
    if (ret < 0 && ret != AVERROR_EOF)
        return sr_fail(r, "stream %d: the %s decoder refused a packet at byte %lld: %s", si, d->ctx->codec->name,
                       pkt != NULL ? (long long)pkt->pos : -1LL, sr_averr(ret, eb));
    for (;;) {
        ret = avcodec_receive_frame(d->ctx, r->frame);
        if (ret == AVERROR(EAGAIN))
            return 0;
        if (ret == AVERROR_EOF)
            return send_to_outputs(r, si, NULL);
        if (ret < 0)
            return sr_fail(r, "stream %d: decoding failed: %s", si, sr_averr(ret, eb));
        AVFrame *f = r->frame;
        if (f->pts == AV_NOPTS_VALUE)   /* the filter graph needs pts; torchaudio's fallback */
            f->pts = f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp
                                                                : (int64_t)d->ctx->frame_number + 1;
        int keep = d->discard_before_pts <= 0 || f->pts >= d->discard_before_pts;
        ret = keep ? send_to_outputs(r, si, f) : 0;
        av_frame_unref(f);
        if (ret != 0)
            return ret;
    }
}

static int drain(sr_reader *r)
{
    for (unsigned i = 0; i < r->fmt->nb_streams; i++)
        if (r->decoders[i].ctx != NULL && decode(r, (int)i, NULL) != 0)
            return -1;
    return 0;
}

int sr_process_packet(sr_reader *r)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (r->eof)
        return 1;
    int ret = av_read_frame(r->fmt, r->pkt);
    if (ret == AVERROR_EOF) {
        r->eof = 1;
        return drain(r) != 0 ? -1 : 1;
    }
    if (ret < 0) {
        if (ret == AVERROR_EXTERNAL)
            return sr_fail(r, "the read callback failed (it returned a negative value or more bytes than asked)");
        return sr_fail(r, "reading the source failed: %s", sr_averr(ret, eb));
    }
    int si = r->pkt->stream_index;
    ret = 0;
    if (si >= 0 && si < (int)r->fmt->nb_streams && r->decoders[si].ctx != NULL)
        ret = decode(r, si, r->pkt);
    av_packet_unref(r->pkt);
    return ret != 0 ? -1 : 0;
}

int sr_process_all_packets(sr_reader *r)
{
    int ret;
    while ((ret = sr_process_packet(r)) == 0) {
    }
    return ret < 0 ? -1 : 0;
}

int sr_is_buffer_ready(const sr_reader *r)
{
    for (int i = 0; i < r->n_outs; i++)
        if (!sb_ready(&r->outs[i]->buf))
            return 0;
    return 1;
}

int sr_eof(const sr_reader *r) { return r->eof; }

int sr_fill_buffer(sr_reader *r)
{
    while (!sr_is_buffer_ready(r)) {
        int ret = sr_process_packet(r);
        if (ret != 0)
            return ret;
    }
    return r->eof;
}

int sr_seek(sr_reader *r, double t, int mode)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (!(t >= 0) || !isfinite(t) || t > 9.2e12)
        return sr_fail(r, "'timestamp' must be a finite number of seconds >= 0 (%g)", t);
    if (r->fmt->nb_streams == 0)
        return sr_fail(r, "the source has no stream to seek in");
    int64_t ts = (int64_t)(t * AV_TIME_BASE);
    int flags = AVSEEK_FLAG_BACKWARD | (mode == 1 ? AVSEEK_FLAG_ANY : 0);
    int ret = av_seek_frame(r->fmt, -1, ts, flags);
    if (ret < 0)
        return sr_fail(r, "cannot seek to %g s: %s", t, sr_averr(ret, eb));
    r->eof = 0;
    for (unsigned i = 0; i < r->fmt->nb_streams; i++) {
        sr_decoder *d = &r->decoders[i];
        if (d->ctx == NULL)
            continue;
        avcodec_flush_buffers(d->ctx);
        d->discard_before_pts = mode == 2 ? av_rescale_q(ts, AV_TIME_BASE_Q, r->fmt->streams[i]->time_base) : 0;
    }
    for (int i = 0; i < r->n_outs; i++) {
        sr_output *o = r->outs[i];
        sb_flush(&o->buf);
        if (sr_output_build_graph(r, o, r->fmt->streams[o->source_index], r->decoders[o->source_index].ctx) != 0)
            return -1;
    }
    return 0;
}

int64_t sr_peek_chunk(const sr_reader *r, int index, double *pts)
{
    const sr_output *o = r->outs[index];
    int64_t p = 0;
    int64_t n = sb_peek(&o->buf, &p);
    *pts = n > 0 ? (double)p * av_q2d(o->out_tb) : NAN;
    return n;
}

int sr_pop_chunk(sr_reader *r, int index, void *dst)
{
    if (sb_pop_copy(&r->outs[index]->buf, dst) != 0)
        return sr_fail(r, "output %d: copying its chunk on the GPU failed", index);
    return 0;
}

uint8_t *sr_take_chunk(sr_reader *r, int index, int64_t *frames, size_t *bytes, sb_release_fn *release, void **user)
{
    return sb_pop_take(&r->outs[index]->buf, frames, bytes, release, user);
}
