/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_writer.c - the writer's muxer, encoders and filter graphs
** (stream_writer.h). Return values: 0 success, -1 the caller's mistake (an
** argument, or a method called out of order: LOOM_EINVAL), -2 FFmpeg or
** the destination failed (LOOM_EIO).
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>

#include "loom/plugin.h"
#include "stream_internal.h"
#include "stream_pixels.h"
#include "stream_writer.h"

typedef struct sw_stream {
    int index, video;
    AVCodecContext *enc;
    AVStream *st;
    AVFilterGraph *graph;
    AVFilterContext *src, *sink;
    AVFrame *frame, *filtered;  /* the next source frame; the graph's output */
    AVPacket *pkt;
    int src_fmt, dtype, ndim;
    int64_t shape[3];
    size_t frame_bytes;         /* one chunk row */
    AVRational src_tb;          /* 1 / sample_rate, 1 / frame_rate */
    AVChannelLayout src_layout;
    int nb_samples;             /* audio: source frame capacity */
    int64_t next_pts;           /* in src_tb */
    int flushed, warned_pts;
    sp_interleave3_fn interleave3;
} sw_stream;

struct sw_writer {
    AVFormatContext *fmt;
    AVIOContext *mem_avio;
    sw_mem_sink *mem;
    int opened, closed;
    sw_stream **streams;
    int n_streams;
    char err[SW_ERR_LEN];
    void (*log)(void *user, const char *msg);
    void *log_user;
};

static int fail(sw_writer *w, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(sw_writer *w, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *sw_error(const sw_writer *w) { return w->err; }

void sw_set_log(sw_writer *w, void (*log)(void *user, const char *msg), void *user)
{
    w->log = log;
    w->log_user = user;
}

int sw_create(sw_writer **out, const char *dst, const char *format, char err[SW_ERR_LEN])
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    *out = NULL;
    err[0] = '\0';
    if (format != NULL && *format == '\0')
        format = NULL;
    if (dst != NULL && *dst == '\0') {
        snprintf(err, SW_ERR_LEN, "'dst' is empty: give a path or URL, or leave it out to write to memory");
        return -1;
    }
    if (format != NULL && av_guess_format(format, NULL, NULL) == NULL) {
        snprintf(err, SW_ERR_LEN, "'format' \"%s\" is not a muxer of this FFmpeg", format);
        return -1;
    }
    if (dst == NULL && format == NULL) {
        snprintf(err, SW_ERR_LEN, "'format' is needed when writing to memory (no 'dst'): wav, flac, mp4, ogg, ...");
        return -1;
    }
    /* encoders report their settings and statistics at FFmpeg's default
    ** level (libx264: a dozen lines per stream); a program that has not
    ** chosen a level gets warnings and errors only */
    if (av_log_get_level() == AV_LOG_INFO)
        av_log_set_level(AV_LOG_WARNING);
    sw_writer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(err, SW_ERR_LEN, "out of memory");
        return -2;
    }
    int ret = avformat_alloc_output_context2(&w->fmt, NULL, format, dst);
    if (ret < 0 || w->fmt == NULL) {
        snprintf(err, SW_ERR_LEN, "'dst' \"%s\": %s", dst != NULL ? dst : "",
                 ret == AVERROR(EINVAL) && format == NULL ? "the container cannot be guessed from the name; give 'format'"
                                                          : sr_averr(ret, eb));
        free(w);
        return -1;
    }
    if (dst == NULL) {
        w->mem_avio = sw_avio_memory_sink(&w->mem);
        if (w->mem_avio == NULL) {
            snprintf(err, SW_ERR_LEN, "out of memory");
            sw_free(w);
            return -2;
        }
        w->fmt->pb = w->mem_avio;
        w->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    }
    *out = w;
    return 0;
}

static void stream_free(sw_stream *s)
{
    if (s == NULL)
        return;
    avfilter_graph_free(&s->graph);
    avcodec_free_context(&s->enc);
    av_frame_free(&s->frame);
    av_frame_free(&s->filtered);
    av_packet_free(&s->pkt);
    av_channel_layout_uninit(&s->src_layout);
    free(s);
}

void sw_free(sw_writer *w)
{
    if (w == NULL)
        return;
    if (w->opened && !w->closed)    /* never lose what was written: the trailer goes in */
        sw_close(w);
    for (int i = 0; i < w->n_streams; i++)
        stream_free(w->streams[i]);
    free(w->streams);
    if (w->fmt != NULL && w->mem == NULL && w->fmt->pb != NULL && !(w->fmt->oformat->flags & AVFMT_NOFILE))
        avio_closep(&w->fmt->pb);
    if (w->fmt != NULL && w->mem != NULL)
        w->fmt->pb = NULL;
    avformat_free_context(w->fmt);
    sw_avio_memory_sink_free(&w->mem_avio, &w->mem);
    free(w);
}

int sw_is_open(const sw_writer *w) { return w->opened; }
int sw_is_closed(const sw_writer *w) { return w->closed; }
int sw_num_streams(const sw_writer *w) { return w->n_streams; }

const uint8_t *sw_bytes(const sw_writer *w, size_t *n, int *is_memory)
{
    *is_memory = w->mem != NULL;
    *n = 0;
    if (w->mem == NULL)
        return NULL;
    if (w->fmt->pb != NULL)     /* what the AVIO buffer still holds */
        avio_flush(w->fmt->pb);
    return sw_mem_sink_bytes(w->mem, n);
}

/* --------------------------------------------------------------- options */

static int parse_options(sw_writer *w, AVDictionary **d, const char *s, const char *what)
{
    return stream_parse_options(d, s, what, w->err, sizeof w->err);
}

static int leftover_options(sw_writer *w, AVDictionary *d, const char *what, const char *of)
{
    return stream_leftover_options(d, what, of, w->err, sizeof w->err);
}

static int check_state(sw_writer *w, const char *method, int need_open)
{
    if (w->closed)
        return fail(w, -1, "%s: the writer is closed", method);
    if (need_open && !w->opened)
        return fail(w, -1, "%s: call open first", method);
    if (!need_open && w->opened)
        return fail(w, -1, "%s: streams and metadata are set before open", method);
    return 0;
}

/* ---------------------------------------------------------- codec choice */

static int find_encoder(sw_writer *w, const char *name, enum AVMediaType type, const AVCodec **out)
{
    const char *kind = type == AVMEDIA_TYPE_AUDIO ? "audio" : "video";
    const AVCodec *c;
    if (name != NULL && *name) {
        c = avcodec_find_encoder_by_name(name);
        if (c == NULL)
            return fail(w, -1, "'encoder' \"%s\" is not an encoder of this FFmpeg", name);
        if (c->type != type)
            return fail(w, -1, "'encoder' \"%s\" is not an %s encoder", name, kind);
    } else {
        enum AVCodecID id = type == AVMEDIA_TYPE_AUDIO ? w->fmt->oformat->audio_codec : w->fmt->oformat->video_codec;
        if (id == AV_CODEC_ID_NONE)
            return fail(w, -1, "'encoder': the %s container has no default %s codec; name an encoder",
                        w->fmt->oformat->name, kind);
        c = avcodec_find_encoder(id);
        if (c == NULL)
            return fail(w, -1, "'encoder': this FFmpeg has no encoder for %s, the %s container's default; name one",
                        avcodec_get_name(id), w->fmt->oformat->name);
    }
    if (avformat_query_codec(w->fmt->oformat, c->id, FF_COMPLIANCE_NORMAL) == 0)
        return fail(w, -1, "'encoder' %s: the %s container cannot hold %s", c->name, w->fmt->oformat->name,
                    avcodec_get_name(c->id));
    *out = c;
    return 0;
}

static void codec_config(AVCodecContext *c, const sw_codec_config *k, int video)
{
    if (k->bit_rate > 0)
        c->bit_rate = k->bit_rate;
    if (k->compression_level != -1)
        c->compression_level = k->compression_level;
    if (!isnan(k->qscale)) {
        c->flags |= AV_CODEC_FLAG_QSCALE;
        c->global_quality = (int)lrint(FF_QP2LAMBDA * k->qscale);
    }
    if (video && k->gop_size > 0)
        c->gop_size = k->gop_size;
    if (video && k->max_b_frames != -1)
        c->max_b_frames = k->max_b_frames;
}

/* avcodec_open2 with torchaudio's defaults: one thread, and FFmpeg's own
** (experimental) opus and vorbis encoders allowed. */
static int open_encoder(sw_writer *w, AVCodecContext *c, const char *options)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    AVDictionary *opt = NULL;
    if (parse_options(w, &opt, options, "encoder_option") != 0)
        return -1;
    if ((strcmp(c->codec->name, "opus") == 0 || strcmp(c->codec->name, "vorbis") == 0)
        && av_dict_get(opt, "strict", NULL, 0) == NULL)
        av_dict_set(&opt, "strict", "experimental", 0);
    if (av_dict_get(opt, "threads", NULL, 0) == NULL)
        av_dict_set(&opt, "threads", "1", 0);
    if (w->fmt->oformat->flags & AVFMT_GLOBALHEADER)
        c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int ret = avcodec_open2(c, c->codec, &opt);
    if (ret < 0) {
        av_dict_free(&opt);
        return fail(w, -1, "cannot open encoder %s with these settings: %s", c->codec->name, sr_averr(ret, eb));
    }
    ret = leftover_options(w, opt, "encoder_option", c->codec->name);
    av_dict_free(&opt);
    return ret;
}

/* ---------------------------------------------------------- filter graphs */

static int build_graph(sw_writer *w, sw_stream *s, const char *src_args, const char *desc)
{
    s->graph = avfilter_graph_alloc();
    if (s->graph == NULL)
        return fail(w, -2, "out of memory for a filter graph");
    s->graph->nb_threads = 1;
    return stream_graph_build(s->graph, s->video, src_args, desc, &s->src, &s->sink, w->err, sizeof w->err);
}

static sw_stream *new_stream(sw_writer *w, int video)
{
    sw_stream **ss = realloc(w->streams, (size_t)(w->n_streams + 1) * sizeof *ss);
    if (ss == NULL)
        return NULL;
    w->streams = ss;
    sw_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->video = video;
    s->frame = av_frame_alloc();
    s->filtered = av_frame_alloc();
    s->pkt = av_packet_alloc();
    if (s->frame == NULL || s->filtered == NULL || s->pkt == NULL) {
        stream_free(s);
        return NULL;
    }
    return s;
}

/* The AVStream last: a refused configuration leaves the muxer as it was. */
static int attach_stream(sw_writer *w, sw_stream *s)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    s->st = avformat_new_stream(w->fmt, NULL);
    if (s->st == NULL)
        return fail(w, -2, "out of memory for a stream");
    s->st->time_base = s->enc->time_base;
    int ret = avcodec_parameters_from_context(s->st->codecpar, s->enc);
    if (ret < 0)
        return fail(w, -2, "cannot copy the encoder's parameters: %s", sr_averr(ret, eb));
    s->index = w->n_streams;
    w->streams[w->n_streams++] = s;
    return s->index;
}

/* ------------------------------------------------------------------ audio */

static int layout_in(const AVChannelLayout *list, const AVChannelLayout *l)
{
    for (; list != NULL && list->nb_channels != 0; list++)
        if (av_channel_layout_compare(list, l) == 0)
            return 1;
    return 0;
}

static int audio_encoder_setup(sw_writer *w, const sw_audio_config *cfg, const AVCodec *codec, sw_stream *s,
                               AVCodecContext *c)
{
    /* sample format: the one asked (if the encoder takes it), else the encoder's first */
    enum AVSampleFormat ef = (enum AVSampleFormat)s->src_fmt;
    if (cfg->encoder_format != NULL && *cfg->encoder_format) {
        ef = av_get_sample_fmt(cfg->encoder_format);
        if (ef == AV_SAMPLE_FMT_NONE)
            return fail(w, -1, "'encoder_format' \"%s\" is not a sample format", cfg->encoder_format);
        int ok = codec->sample_fmts == NULL;
        for (const enum AVSampleFormat *p = codec->sample_fmts; p != NULL && *p != AV_SAMPLE_FMT_NONE; p++)
            ok |= *p == ef;
        if (!ok)
            return fail(w, -1, "'encoder_format' %s: %s does not take it (its first: %s)", cfg->encoder_format,
                        codec->name, av_get_sample_fmt_name(codec->sample_fmts[0]));
    } else if (codec->sample_fmts != NULL)
        ef = codec->sample_fmts[0];
    /* sample rate (G.722 is 16 kHz without saying so) */
    int sr = cfg->encoder_sample_rate > 0 ? cfg->encoder_sample_rate : cfg->sample_rate;
    if (codec->id == AV_CODEC_ID_ADPCM_G722) {
        if (cfg->encoder_sample_rate > 0 && cfg->encoder_sample_rate != 16000)
            return fail(w, -1, "'encoder_sample_rate' %d: %s takes 16000 only", sr, codec->name);
        sr = 16000;
    } else if (codec->supported_samplerates != NULL) {
        int ok = 0;
        for (const int *p = codec->supported_samplerates; *p; p++)
            ok |= *p == sr;
        if (!ok && cfg->encoder_sample_rate > 0)
            return fail(w, -1, "'encoder_sample_rate' %d: %s does not take it (its first: %d)", sr, codec->name,
                        codec->supported_samplerates[0]);
        if (!ok)
            sr = codec->supported_samplerates[0];
    }
    /* channel layout: the default one of the count asked, else the source's, within what the encoder takes */
    AVChannelLayout el = { 0 };
    if (strcmp(codec->name, "vorbis") == 0)     /* stereo only, not listed */
        av_channel_layout_default(&el, 2);
    else if (cfg->encoder_num_channels > 0) {
        av_channel_layout_default(&el, cfg->encoder_num_channels);
        if (codec->ch_layouts != NULL && !layout_in(codec->ch_layouts, &el)) {
            int found = 0;
            for (const AVChannelLayout *p = codec->ch_layouts; p->nb_channels != 0 && !found; p++)
                if (p->nb_channels == cfg->encoder_num_channels) {
                    av_channel_layout_uninit(&el);
                    av_channel_layout_copy(&el, p);
                    found = 1;
                }
            if (!found) {
                av_channel_layout_uninit(&el);
                return fail(w, -1, "'encoder_num_channels' %d: %s takes no layout of that many channels",
                            cfg->encoder_num_channels, codec->name);
            }
        }
    } else if (codec->ch_layouts != NULL && !layout_in(codec->ch_layouts, &s->src_layout))
        av_channel_layout_copy(&el, &codec->ch_layouts[0]);
    else
        av_channel_layout_copy(&el, &s->src_layout);
    c->sample_fmt = ef;
    c->sample_rate = sr;
    c->time_base = (AVRational){ 1, sr };
    int ret = av_channel_layout_copy(&c->ch_layout, &el);
    av_channel_layout_uninit(&el);
    if (ret < 0)
        return fail(w, -2, "out of memory");
    codec_config(c, &cfg->codec, 0);
    return 0;
}

int sw_add_audio(sw_writer *w, const sw_audio_config *cfg)
{
    if (check_state(w, "add_audio_stream", 0) != 0)
        return -1;
    if (cfg->sample_rate <= 0)
        return fail(w, -1, "'sample_rate' must be positive (%d)", cfg->sample_rate);
    if (cfg->num_channels <= 0 || cfg->num_channels > 64)
        return fail(w, -1, "'num_channels' must be in 1..64 (%d)", cfg->num_channels);
    const char *fmt_name = cfg->format != NULL ? cfg->format : "flt";
    enum AVSampleFormat sf = av_get_sample_fmt(fmt_name);
    if (sr_dtype_of_sample_fmt(sf) < 0 || av_sample_fmt_is_planar(sf))
        return fail(w, -1, "'format' \"%s\" is not u8, s16, s32, s64, flt or dbl (the chunks' interleaved samples)",
                    fmt_name);
    if (cfg->encoder_sample_rate < 0 || cfg->encoder_num_channels < 0)
        return fail(w, -1, "'encoder_sample_rate' and 'encoder_num_channels' must be positive");
    const AVCodec *codec;
    if (find_encoder(w, cfg->encoder, AVMEDIA_TYPE_AUDIO, &codec) != 0)
        return -1;
    sw_stream *s = new_stream(w, 0);
    if (s == NULL)
        return fail(w, -2, "out of memory");
    s->src_fmt = sf;
    s->dtype = sr_dtype_of_sample_fmt(sf);
    s->ndim = 1;
    s->shape[0] = cfg->num_channels;
    s->frame_bytes = (size_t)cfg->num_channels * (size_t)av_get_bytes_per_sample(sf);
    s->src_tb = (AVRational){ 1, cfg->sample_rate };
    av_channel_layout_default(&s->src_layout, cfg->num_channels);
    s->enc = avcodec_alloc_context3(codec);
    int ret = s->enc == NULL ? fail(w, -2, "out of memory for an encoder") : 0;
    if (ret == 0)
        ret = audio_encoder_setup(w, cfg, codec, s, s->enc);
    if (ret == 0)
        ret = open_encoder(w, s->enc, cfg->encoder_option);
    char desc[1024], args[512], src_l[128], enc_l[128];
    if (ret == 0 && (av_channel_layout_describe(&s->src_layout, src_l, sizeof src_l) < 0
                     || av_channel_layout_describe(&s->enc->ch_layout, enc_l, sizeof enc_l) < 0))
        ret = fail(w, -2, "cannot name a channel layout");
    if (ret == 0) {
        /* torchaudio's graph: filter_desc, the encoder's format, fixed-size frames */
        int k = 0;
        const int has_desc = cfg->filter_desc != NULL && *cfg->filter_desc;
        desc[0] = '\0';
        if (has_desc)
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%s", cfg->filter_desc);
        if (has_desc || s->enc->sample_fmt != sf || s->enc->sample_rate != cfg->sample_rate
            || av_channel_layout_compare(&s->enc->ch_layout, &s->src_layout) != 0)
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%saformat=sample_fmts=%s:sample_rates=%d:channel_layouts=%s",
                          k ? "," : "", av_get_sample_fmt_name(s->enc->sample_fmt), s->enc->sample_rate, enc_l);
        if (s->enc->frame_size > 0 && k < (int)sizeof desc)
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%sasetnsamples=n=%d:p=0", k ? "," : "",
                          s->enc->frame_size);
        if (k >= (int)sizeof desc)
            ret = fail(w, -1, "'filter_desc' is too long");
        else if (k == 0)
            snprintf(desc, sizeof desc, "anull");
    }
    if (ret == 0) {
        snprintf(args, sizeof args, "time_base=1/%d:sample_rate=%d:sample_fmt=%s:channel_layout=%s", cfg->sample_rate,
                 cfg->sample_rate, av_get_sample_fmt_name(sf), src_l);
        ret = build_graph(w, s, args, desc);
    }
    /* the encoder's frame size; an encoder that takes any (PCM) gets 4096-sample
    ** frames (torchaudio cuts 256: the samples written are the same, with
    ** fewer trips through the graph) */
    s->nb_samples = s->enc != NULL && s->enc->frame_size > 0 ? s->enc->frame_size : 4096;
    if (ret == 0)
        ret = attach_stream(w, s);
    if (ret < 0)
        stream_free(s);
    return ret;
}

/* ------------------------------------------------------------------ video */

static int video_src_format(const char *name, int *channels)
{
    static const struct { const char *name; enum AVPixelFormat f; int c; } known[] = {
        { "rgb24", AV_PIX_FMT_RGB24, 3 }, { "bgr24", AV_PIX_FMT_BGR24, 3 }, { "yuv444p", AV_PIX_FMT_YUV444P, 3 },
        { "yuv420p", AV_PIX_FMT_YUV420P, 3 }, { "gray", AV_PIX_FMT_GRAY8, 1 }, { "gray8", AV_PIX_FMT_GRAY8, 1 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i].name) == 0) {
            *channels = known[i].c;
            return known[i].f;
        }
    return AV_PIX_FMT_NONE;
}

static int video_encoder_setup(sw_writer *w, const sw_video_config *cfg, const AVCodec *codec, sw_stream *s,
                               AVCodecContext *c)
{
    enum AVPixelFormat ef = (enum AVPixelFormat)s->src_fmt;
    if (cfg->encoder_format != NULL && *cfg->encoder_format) {
        ef = av_get_pix_fmt(cfg->encoder_format);
        if (ef == AV_PIX_FMT_NONE)
            return fail(w, -1, "'encoder_format' \"%s\" is not a pixel format", cfg->encoder_format);
        int ok = codec->pix_fmts == NULL;
        for (const enum AVPixelFormat *p = codec->pix_fmts; p != NULL && *p != AV_PIX_FMT_NONE; p++)
            ok |= *p == ef;
        if (!ok)
            return fail(w, -1, "'encoder_format' %s: %s does not take it (its first: %s)", cfg->encoder_format,
                        codec->name, av_get_pix_fmt_name(codec->pix_fmts[0]));
    } else if (codec->pix_fmts != NULL)
        ef = codec->pix_fmts[0];
    AVRational src_rate = av_inv_q(s->src_tb), rate = src_rate;
    if (cfg->encoder_frame_rate > 0)
        rate = av_d2q(cfg->encoder_frame_rate, 1 << 24);
    if (codec->supported_framerates != NULL) {
        int ok = 0;
        for (const AVRational *p = codec->supported_framerates; p->num != 0 || p->den != 0; p++)
            ok |= av_cmp_q(*p, rate) == 0;
        if (!ok && cfg->encoder_frame_rate > 0)
            return fail(w, -1, "'encoder_frame_rate' %g: %s does not take it (its first: %d/%d)",
                        cfg->encoder_frame_rate, codec->name, codec->supported_framerates[0].num,
                        codec->supported_framerates[0].den);
        if (!ok)
            rate = codec->supported_framerates[0];
    }
    c->pix_fmt = ef;
    c->width = cfg->encoder_width > 0 ? cfg->encoder_width : cfg->width;
    c->height = cfg->encoder_height > 0 ? cfg->encoder_height : cfg->height;
    c->time_base = av_inv_q(rate);
    c->framerate = rate;
    c->sample_aspect_ratio = (AVRational){ 1, 1 };
    codec_config(c, &cfg->codec, 1);
    return 0;
}

int sw_add_video(sw_writer *w, const sw_video_config *cfg)
{
    if (check_state(w, "add_video_stream", 0) != 0)
        return -1;
    if (!(cfg->frame_rate > 0) || !isfinite(cfg->frame_rate))
        return fail(w, -1, "'frame_rate' must be positive and finite (%g)", cfg->frame_rate);
    if (cfg->width <= 0 || cfg->height <= 0 || cfg->width > 16384 || cfg->height > 16384)
        return fail(w, -1, "'width' and 'height' must be in 1..16384 (%dx%d)", cfg->width, cfg->height);
    if (cfg->encoder_width < 0 || cfg->encoder_height < 0 || cfg->encoder_width > 16384 || cfg->encoder_height > 16384)
        return fail(w, -1, "'encoder_width' and 'encoder_height' must be in 1..16384");
    if (cfg->hw_accel != NULL && *cfg->hw_accel)
        return fail(w, -1, "'hw_accel' \"%s\": encoding on the GPU is not available in this build", cfg->hw_accel);
    const char *fmt_name = cfg->format != NULL ? cfg->format : "rgb24";
    int channels = 0;
    enum AVPixelFormat pf = video_src_format(fmt_name, &channels);
    if (pf == AV_PIX_FMT_NONE)
        return fail(w, -1, "'format' \"%s\" is not rgb24, bgr24, yuv444p, yuv420p or gray (the chunks' pictures)",
                    fmt_name);
    const AVCodec *codec;
    if (find_encoder(w, cfg->encoder, AVMEDIA_TYPE_VIDEO, &codec) != 0)
        return -1;
    sw_stream *s = new_stream(w, 1);
    if (s == NULL)
        return fail(w, -2, "out of memory");
    s->src_fmt = pf;
    s->dtype = LOOM_DTYPE_U8;
    s->ndim = 3;
    s->shape[0] = channels;
    s->shape[1] = cfg->height;
    s->shape[2] = cfg->width;
    s->frame_bytes = (size_t)channels * (size_t)cfg->height * (size_t)cfg->width;
    AVRational src_rate = av_d2q(cfg->frame_rate, 1 << 24);
    s->src_tb = av_inv_q(src_rate);
    s->nb_samples = 1;
    s->interleave3 = sp_interleave3();
    s->enc = avcodec_alloc_context3(codec);
    int ret = s->enc == NULL ? fail(w, -2, "out of memory for an encoder") : 0;
    if (ret == 0)
        ret = video_encoder_setup(w, cfg, codec, s, s->enc);
    if (ret == 0)
        ret = open_encoder(w, s->enc, cfg->encoder_option);
    char desc[1024], args[512];
    if (ret == 0) {
        /* torchaudio's graph: filter_desc, then scale, format and fps where they differ */
        int k = 0;
        const int has_desc = cfg->filter_desc != NULL && *cfg->filter_desc;
        AVRational er = av_inv_q(s->enc->time_base);
        desc[0] = '\0';
        if (has_desc)
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%s", cfg->filter_desc);
        if (k < (int)sizeof desc && (has_desc || s->enc->width != cfg->width || s->enc->height != cfg->height))
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%sscale=%d:%d", k ? "," : "", s->enc->width,
                          s->enc->height);
        if (k < (int)sizeof desc && (has_desc || s->enc->pix_fmt != pf))
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%sformat=%s", k ? "," : "",
                          av_get_pix_fmt_name(s->enc->pix_fmt));
        if (k < (int)sizeof desc && (has_desc || av_cmp_q(er, src_rate) != 0))
            k += snprintf(desc + k, sizeof desc - (size_t)k, "%sfps=%d/%d", k ? "," : "", er.num, er.den);
        if (k >= (int)sizeof desc)
            ret = fail(w, -1, "'filter_desc' is too long");
        else if (k == 0)
            snprintf(desc, sizeof desc, "null");
    }
    if (ret == 0) {
        snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:frame_rate=%d/%d:pixel_aspect=1/1",
                 cfg->width, cfg->height, pf, s->src_tb.num, s->src_tb.den, src_rate.num, src_rate.den);
        ret = build_graph(w, s, args, desc);
    }
    if (ret == 0)
        ret = attach_stream(w, s);
    if (ret < 0)
        stream_free(s);
    return ret;
}

/* ------------------------------------------------------- metadata, open */

int sw_set_metadata(sw_writer *w, const char *kv)
{
    if (check_state(w, "set_metadata", 0) != 0)
        return -1;
    AVDictionary *d = NULL;
    if (parse_options(w, &d, kv, "metadata") != 0)
        return -1;
    av_dict_free(&w->fmt->metadata);
    w->fmt->metadata = d;
    return 0;
}

int sw_open(sw_writer *w, const char *option)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (w->closed)
        return fail(w, -1, "open: the writer is closed");
    if (w->opened)
        return fail(w, -1, "open: the writer is already open");
    if (w->n_streams == 0)
        return fail(w, -1, "open: add a stream first (add_audio_stream, add_video_stream)");
    AVDictionary *opt = NULL;
    if (parse_options(w, &opt, option, "option") != 0)
        return -1;
    int ret;
    if (w->mem == NULL && !(w->fmt->oformat->flags & AVFMT_NOFILE)) {
        ret = avio_open2(&w->fmt->pb, w->fmt->url, AVIO_FLAG_WRITE, NULL, &opt);
        if (ret < 0) {
            av_dict_free(&opt);
            return fail(w, -2, "cannot open '%s' for writing: %s", w->fmt->url, sr_averr(ret, eb));
        }
    }
    ret = avformat_write_header(w->fmt, &opt);
    if (ret < 0) {
        av_dict_free(&opt);
        return fail(w, -2, "cannot write the %s header: %s", w->fmt->oformat->name, sr_averr(ret, eb));
    }
    w->opened = 1;
    ret = leftover_options(w, opt, "option", "the muxer or the protocol");
    av_dict_free(&opt);
    return ret;
}

int sw_stream_shape(const sw_writer *w, int i, int *video, int *dtype, int64_t shape[3])
{
    if (i < 0 || i >= w->n_streams)
        return -1;
    const sw_stream *s = w->streams[i];
    *video = s->video;
    *dtype = s->dtype;
    memcpy(shape, s->shape, sizeof s->shape);
    return 0;
}

/* --------------------------------------------------------------- encoding */

static int write_packets(sw_writer *w, sw_stream *s)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    for (;;) {
        int ret = avcodec_receive_packet(s->enc, s->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0)
            return fail(w, -2, "stream %d: encoding failed: %s", s->index, sr_averr(ret, eb));
        /* a picture lasts one frame of the encoder's rate: without it MP4's
        ** edit list ends at the last picture's start and hides it */
        if (s->video && s->pkt->duration <= 0)
            s->pkt->duration = 1;
        av_packet_rescale_ts(s->pkt, s->enc->time_base, s->st->time_base);
        s->pkt->stream_index = s->st->index;
        ret = av_interleaved_write_frame(w->fmt, s->pkt);
        if (ret < 0)
            return fail(w, -2, "stream %d: the %s muxer refused a packet: %s", s->index, w->fmt->oformat->name,
                        w->mem != NULL && sw_mem_sink_failed(w->mem) ? "out of memory" : sr_averr(ret, eb));
    }
}

/* frame NULL: the end of the stream through the graph and the encoder. */
static int encode(sw_writer *w, sw_stream *s, AVFrame *frame)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    int ret = av_buffersrc_add_frame_flags(s->src, frame, 0);
    if (ret < 0)
        return fail(w, -2, "stream %d: the filter graph refused a frame: %s", s->index, sr_averr(ret, eb));
    const AVRational sink_tb = av_buffersink_get_time_base(s->sink);
    for (;;) {
        ret = av_buffersink_get_frame(s->sink, s->filtered);
        if (ret == AVERROR(EAGAIN))
            return 0;
        if (ret == AVERROR_EOF) {
            ret = avcodec_send_frame(s->enc, NULL);
            if (ret < 0 && ret != AVERROR_EOF)
                return fail(w, -2, "stream %d: the encoder cannot be drained: %s", s->index, sr_averr(ret, eb));
            return write_packets(w, s);
        }
        if (ret < 0)
            return fail(w, -2, "stream %d: filtering failed: %s", s->index, sr_averr(ret, eb));
        if (s->filtered->pts != AV_NOPTS_VALUE)
            s->filtered->pts = av_rescale_q(s->filtered->pts, sink_tb, s->enc->time_base);
        s->filtered->pict_type = AV_PICTURE_TYPE_NONE;
        ret = avcodec_send_frame(s->enc, s->filtered);
        av_frame_unref(s->filtered);
        if (ret < 0)
            return fail(w, -2, "stream %d: the %s encoder refused a frame: %s", s->index, s->enc->codec->name,
                        sr_averr(ret, eb));
        if (write_packets(w, s) != 0)
            return -2;
    }
}

/* A fresh source frame: the graph keeps references to the ones it was given. */
static int next_frame(sw_writer *w, sw_stream *s, int nb_samples)
{
    AVFrame *f = s->frame;
    av_frame_unref(f);
    if (s->video) {
        f->format = s->src_fmt;
        f->width = (int)s->shape[2];
        f->height = (int)s->shape[1];
        f->sample_aspect_ratio = (AVRational){ 1, 1 };
    } else {
        f->format = s->src_fmt;
        f->sample_rate = s->src_tb.den;
        f->nb_samples = nb_samples;
        if (av_channel_layout_copy(&f->ch_layout, &s->src_layout) < 0)
            return fail(w, -2, "out of memory");
    }
    if (av_frame_get_buffer(f, 0) < 0)
        return fail(w, -2, "out of memory for a frame");
    return 0;
}

static int begin_chunk(sw_writer *w, int i, int video, double pts, sw_stream **out)
{
    const char *method = video ? "write_video_chunk" : "write_audio_chunk";
    if (check_state(w, method, 1) != 0)
        return -1;
    if (i < 0 || i >= w->n_streams)
        return fail(w, -1, "'i' %d: the writer has %d streams", i, w->n_streams);
    sw_stream *s = w->streams[i];
    if (s->video != video)
        return fail(w, -1, "'i' %d is %s stream; use %s", i, s->video ? "a video" : "an audio",
                    s->video ? "write_video_chunk" : "write_audio_chunk");
    if (s->flushed)
        return fail(w, -1, "%s: stream %d was flushed; nothing more can be written to it", method, i);
    if (!isnan(pts)) {
        const double units = pts * s->src_tb.den / s->src_tb.num;
        if (!(pts >= 0) || !isfinite(pts) || units > 4e18)
            return fail(w, -1, "'pts' must be finite, >= 0 and below %g s (%g)", 4e18 * av_q2d(s->src_tb), pts);
        int64_t v = llround(units);
        if (v < s->next_pts && w->log != NULL && !s->warned_pts) {
            char msg[256];
            snprintf(msg, sizeof msg, "audio.stream_writer: stream %d: pts %g s is before the next expected one "
                                      "(%g s)", i, pts, (double)s->next_pts * av_q2d(s->src_tb));
            w->log(w->log_user, msg);
            s->warned_pts = 1;
        }
        s->next_pts = v;
    }
    *out = s;
    return 0;
}

int sw_write_audio(sw_writer *w, int i, const void *data, int64_t frames, double pts)
{
    sw_stream *s;
    if (begin_chunk(w, i, 0, pts, &s) != 0)
        return -1;
    const uint8_t *p = data;
    for (int64_t done = 0; done < frames;) {
        int n = frames - done < s->nb_samples ? (int)(frames - done) : s->nb_samples;
        if (next_frame(w, s, n) != 0)
            return -2;
        memcpy(s->frame->data[0], p + (size_t)done * s->frame_bytes, (size_t)n * s->frame_bytes);
        s->frame->pts = s->next_pts;
        s->next_pts += n;
        done += n;
        if (encode(w, s, s->frame) != 0)
            return -2;
    }
    return 0;
}

/* One [C, H, W] picture into the source frame (yuv420p: each chroma sample
** the rounded mean of its 2x2 block, so that the reader's repeated chroma
** comes back unchanged). */
static void picture_to_frame(const sw_stream *s, const uint8_t *src, AVFrame *f)
{
    const int64_t h = s->shape[1], wd = s->shape[2];
    const size_t plane = (size_t)(h * wd);
    switch (s->src_fmt) {
    case AV_PIX_FMT_RGB24:
    case AV_PIX_FMT_BGR24:
        for (int64_t y = 0; y < h; y++) {
            const uint8_t *r = src + y * wd;
            s->interleave3(r, r + plane, r + 2 * plane, (size_t)wd, f->data[0] + y * f->linesize[0]);
        }
        break;
    case AV_PIX_FMT_YUV420P:
        for (int64_t y = 0; y < h; y++)
            memcpy(f->data[0] + y * f->linesize[0], src + y * wd, (size_t)wd);
        for (int p = 1; p < 3; p++)
            for (int64_t y = 0; y < (h + 1) / 2; y++) {
                const uint8_t *r0 = src + (size_t)p * plane + (size_t)(2 * y * wd);
                const uint8_t *r1 = 2 * y + 1 < h ? r0 + wd : r0;
                uint8_t *d = f->data[p] + y * f->linesize[p];
                for (int64_t x = 0; x < (wd + 1) / 2; x++) {
                    const int64_t x1 = 2 * x + 1 < wd ? 2 * x + 1 : 2 * x;
                    d[x] = (uint8_t)((r0[2 * x] + r0[x1] + r1[2 * x] + r1[x1] + 2) >> 2);
                }
            }
        break;
    default:    /* gray, yuv444p: planes as they are */
        for (int64_t p = 0; p < s->shape[0]; p++)
            for (int64_t y = 0; y < h; y++)
                memcpy(f->data[p] + y * f->linesize[p], src + (size_t)p * plane + (size_t)(y * wd), (size_t)wd);
        break;
    }
}

int sw_write_video(sw_writer *w, int i, const uint8_t *data, int64_t frames, double pts)
{
    sw_stream *s;
    if (begin_chunk(w, i, 1, pts, &s) != 0)
        return -1;
    for (int64_t k = 0; k < frames; k++) {
        if (next_frame(w, s, 1) != 0)
            return -2;
        picture_to_frame(s, data + (size_t)k * s->frame_bytes, s->frame);
        s->frame->pts = s->next_pts++;
        if (encode(w, s, s->frame) != 0)
            return -2;
    }
    return 0;
}

int sw_flush(sw_writer *w)
{
    if (check_state(w, "flush", 1) != 0)
        return -1;
    for (int i = 0; i < w->n_streams; i++) {
        sw_stream *s = w->streams[i];
        if (s->flushed)
            continue;
        s->flushed = 1;
        if (encode(w, s, NULL) != 0)
            return -2;
    }
    return 0;
}

int sw_close(sw_writer *w)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (w->closed)
        return 0;
    int ret = 0;
    if (w->opened) {
        ret = sw_flush(w);
        int t = av_write_trailer(w->fmt);
        if (t < 0 && ret == 0)
            ret = fail(w, -2, "cannot write the %s trailer: %s", w->fmt->oformat->name, sr_averr(t, eb));
        if (w->mem != NULL)
            avio_flush(w->fmt->pb);
        else if (!(w->fmt->oformat->flags & AVFMT_NOFILE)) {
            t = avio_closep(&w->fmt->pb);
            if (t < 0 && ret == 0)
                ret = fail(w, -2, "closing '%s' failed: %s", w->fmt->url, sr_averr(t, eb));
        }
        if (ret == 0 && w->mem != NULL && sw_mem_sink_failed(w->mem))
            ret = fail(w, -2, "out of memory for the written bytes");
    }
    w->closed = 1;
    return ret;
}
