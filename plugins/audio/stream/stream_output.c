/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_output.c - an output stream of the reader: its libavfilter graph
** (torchaudio's FilterGraph: abuffer -> filter_desc -> abuffersink for
** audio, buffer -> filter_desc -> buffersink for video, the source in the
** stream's time base) and the conversion of each filtered frame to chunk
** rows, as torchaudio's converters lay them out:
**   audio  [frames, channels], interleaved from planar formats, in the
**          sink's sample type (fltp: f32, s16: i16, ...);
**   video  one [C, H, W] u8 row per frame: rgb24 / bgr24 (3), gray (1),
**          yuv444p (3), yuv420p (3, chroma repeated 2x2 as torchaudio's
**          YUV420P converter does).
*/
#include <stdio.h>
#include <string.h>

#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "loom/plugin.h"
#include "stream_internal.h"
#include "stream_pixels.h"

int sr_dtype_of_sample_fmt(int fmt)
{
    switch (av_get_packed_sample_fmt((enum AVSampleFormat)fmt)) {
    case AV_SAMPLE_FMT_U8: return LOOM_DTYPE_U8;
    case AV_SAMPLE_FMT_S16: return LOOM_DTYPE_I16;
    case AV_SAMPLE_FMT_S32: return LOOM_DTYPE_I32;
    case AV_SAMPLE_FMT_S64: return LOOM_DTYPE_I64;
    case AV_SAMPLE_FMT_FLT: return LOOM_DTYPE_F32;
    case AV_SAMPLE_FMT_DBL: return LOOM_DTYPE_F64;
    default: return -1;
    }
}

static int video_channels(int pix_fmt)
{
    switch (pix_fmt) {
    case AV_PIX_FMT_RGB24:
    case AV_PIX_FMT_BGR24:
    case AV_PIX_FMT_YUV444P:
    case AV_PIX_FMT_YUV420P: return 3;
    case AV_PIX_FMT_GRAY8: return 1;
    default: return 0;
    }
}

static int source_args(char *args, size_t n, const AVStream *st, const AVCodecContext *dec, int video)
{
    AVRational tb = st->time_base;
    if (!video) {
        const char *fmt = av_get_sample_fmt_name(dec->sample_fmt);
        if (fmt == NULL || dec->sample_rate <= 0 || dec->ch_layout.nb_channels <= 0)
            return -1;
        int k = snprintf(args, n, "time_base=%d/%d:sample_rate=%d:sample_fmt=%s:", tb.num, tb.den, dec->sample_rate,
                         fmt);
        /* an unknown layout (WAV without a channel mask) is taken as the
        ** default one of its channel count, as the ffmpeg CLI guesses it */
        AVChannelLayout cl;
        if (dec->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
            av_channel_layout_default(&cl, dec->ch_layout.nb_channels);
        else if (av_channel_layout_copy(&cl, &dec->ch_layout) < 0)
            return -1;
        char desc[128];
        int ok = av_channel_layout_describe(&cl, desc, sizeof desc) >= 0;
        av_channel_layout_uninit(&cl);
        if (!ok)
            return -1;
        snprintf(args + k, n - (size_t)k, "channel_layout=%s", desc);
        return 0;
    }
    if (dec->width <= 0 || dec->height <= 0 || dec->pix_fmt == AV_PIX_FMT_NONE)
        return -1;
    AVRational fr = av_guess_frame_rate(NULL, (AVStream *)st, NULL);
    if (fr.num <= 0 || fr.den <= 0)
        fr = (AVRational){ 0, 1 };
    AVRational sar = dec->sample_aspect_ratio.num > 0 ? dec->sample_aspect_ratio : (AVRational){ 0, 1 };
    snprintf(args, n, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:frame_rate=%d/%d:pixel_aspect=%d/%d", dec->width,
             dec->height, dec->pix_fmt, tb.num, tb.den, fr.num, fr.den, sar.num, sar.den);
    return 0;
}

void sr_output_split_format(sr_output *o)
{
    static const char *const tails[] = { "format=pix_fmts=rgb24", "format=pix_fmts=bgr24" };
    const size_t n = strlen(o->filter_desc);
    for (int i = 0; i < 2; i++) {
        const size_t k = strlen(tails[i]);
        if (n < k || strcmp(o->filter_desc + n - k, tails[i]) != 0 || (n > k && o->filter_desc[n - k - 1] != ',')
            || strstr(o->filter_desc, "scale") != NULL)
            continue;
        o->graph_desc = n > k ? av_strndup(o->filter_desc, n - k - 1) : av_strdup("null");
        o->direct_fmt = i == 0 ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_BGR24;
        return;
    }
}

static int build_once(sr_reader *r, sr_output *o, const AVStream *st, const AVCodecContext *dec, const char *desc)
{
    char args[512];
    avfilter_graph_free(&o->graph);
    o->graph = avfilter_graph_alloc();
    if (o->graph == NULL)
        return sr_fail(r, "out of memory for a filter graph");
    /* as many threads as the decoder was given (decoder_option threads=N; 1 by
    ** default, torchaudio's setting): scale and the converters slice over them */
    o->graph->nb_threads = dec->thread_count > 0 ? dec->thread_count : 1;
    if (source_args(args, sizeof args, st, dec, o->video) != 0)
        return sr_fail(r, "stream %d: the decoder reports no usable %s parameters", o->source_index,
                       o->video ? "picture" : "sample");
    return stream_graph_build(o->graph, o->video, args, desc, &o->src, &o->sink, r->err, sizeof r->err) != 0 ? -1 : 0;
}

int sr_output_cuda_configure(sr_reader *r, sr_output *o, const AVStream *st, const AVCodecContext *dec)
{
    if (o->configured)
        return 0;               /* a seek: the same pictures, the same buffer */
    if (strcmp(o->filter_desc, "null") == 0 || strcmp(o->filter_desc, "format=pix_fmts=yuv420p") == 0)
        o->cuda_rgb = 0;
    else if (strcmp(o->filter_desc, "format=pix_fmts=rgb24") == 0)
        o->cuda_rgb = 1;
    else
        return sr_fail(r, "'filter_desc' \"%s\" with hw_accel=cuda: the pictures stay on the GPU, where only "
                          "format=pix_fmts=rgb24 or yuv420p applies (no frame rate, scaling or other filters)",
                       o->filter_desc);
    if (dec->width <= 0 || dec->height <= 0 || dec->width % 2 != 0 || dec->height % 2 != 0)
        return sr_fail(r, "stream %d: NVDEC pictures of %dx%d: the NV12 conversion needs an even, known size",
                       o->source_index, dec->width, dec->height);
    o->out_tb = st->time_base;
    o->out_format = o->cuda_rgb ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_YUV420P;
    o->dtype = LOOM_DTYPE_U8;
    o->ndim = 3;
    o->shape[0] = 3;
    o->shape[1] = dec->height;
    o->shape[2] = dec->width;
    void (*on_drop)(void *, int64_t) = o->buf.on_drop;
    void *du = o->buf.drop_user;
    sb_init(&o->buf, o->frames_per_chunk, o->buffer_chunk_size, (size_t)(3 * dec->width * dec->height), &o->cuda.mem);
    o->buf.on_drop = on_drop;
    o->buf.drop_user = du;
    o->configured = 1;
    return 0;
}

/* One decoded CUDA frame into the device buffer. */
static int push_cuda(sr_reader *r, sr_output *o, const AVFrame *f)
{
    if (f->format != AV_PIX_FMT_CUDA || f->hw_frames_ctx == NULL)
        return sr_fail(r, "stream %d: NVDEC does not decode this stream (the decoder gave %s pictures, not cuda "
                          "ones: a profile or size the GPU lacks); read it without hw_accel",
                       o->source_index, av_get_pix_fmt_name(f->format));
    const AVHWFramesContext *fc = (const AVHWFramesContext *)f->hw_frames_ctx->data;
    if (fc->sw_format != AV_PIX_FMT_NV12)
        return sr_fail(r, "stream %d: NVDEC gives %s pictures; only 8-bit 4:2:0 (nv12) is converted on the GPU",
                       o->source_index, av_get_pix_fmt_name(fc->sw_format));
    if (f->width != o->shape[2] || f->height != o->shape[1])
        return sr_fail(r, "stream %d: the picture size changed mid-stream (%dx%d, was %lldx%lld)", o->source_index,
                       f->width, f->height, (long long)o->shape[2], (long long)o->shape[1]);
    uint8_t *dst = sb_push_one(&o->buf, f->pts == AV_NOPTS_VALUE ? 0 : f->pts);
    if (dst == NULL)
        return sr_fail(r, "out of GPU memory buffering stream %d", o->source_index);
    /* swscale's choice on the cpu path: BT.601 unless the stream says BT.709 */
    if (o->cuda.nv12(o->cuda.mem.user, dst, f->data[0], f->linesize[0], f->data[1], f->linesize[1], f->width,
                     f->height, o->cuda_rgb, f->colorspace == AVCOL_SPC_BT709, f->color_range == AVCOL_RANGE_JPEG) != 0)
        return sr_fail(r, "stream %d: the NV12 conversion on the GPU failed", o->source_index);
    return 0;
}

int sr_output_build_graph(sr_reader *r, sr_output *o, const AVStream *st, const AVCodecContext *dec)
{
    if (o->on_cuda)
        return sr_output_cuda_configure(r, o, st, dec);
    /* the graph without its final rgb24 / bgr24 conversion, where that
    ** leaves yuv420p pictures of an even height (swscale's yuv2rgb path,
    ** which this reader then runs itself); otherwise the whole graph */
    o->sink_fmt = AV_PIX_FMT_NONE;
    if (o->graph_desc != NULL) {
        if (build_once(r, o, st, dec, o->graph_desc) != 0)
            return -1;
        const int f = av_buffersink_get_format(o->sink);
        if (f == AV_PIX_FMT_YUV420P && av_buffersink_get_h(o->sink) % 2 == 0 && av_buffersink_get_w(o->sink) % 2 == 0)
            o->sink_fmt = f;
    }
    if (o->sink_fmt == AV_PIX_FMT_NONE && build_once(r, o, st, dec, o->filter_desc) != 0)
        return -1;
    o->out_tb = av_buffersink_get_time_base(o->sink);
    o->out_format = o->sink_fmt != AV_PIX_FMT_NONE ? o->direct_fmt : av_buffersink_get_format(o->sink);
    if (!o->video) {
        AVChannelLayout cl;
        if (av_buffersink_get_ch_layout(o->sink, &cl) < 0)
            return sr_fail(r, "out of memory");
        int ch = cl.nb_channels;
        av_channel_layout_uninit(&cl);
        o->dtype = sr_dtype_of_sample_fmt(o->out_format);
        if (o->dtype < 0 || ch <= 0)
            return sr_fail(r, "stream %d: the filter graph gives sample format %s, which has no tensor dtype",
                           o->source_index, av_get_sample_fmt_name(o->out_format));
        o->ndim = 1;
        o->shape[0] = ch;
    } else {
        int c = video_channels(o->out_format);
        if (c == 0)
            return sr_fail(r, "stream %d: the filter graph gives pixel format %s; use format rgb24, bgr24, yuv420p, "
                              "yuv444p or gray (format=pix_fmts=...)",
                           o->source_index, av_get_pix_fmt_name(o->out_format));
        o->dtype = LOOM_DTYPE_U8;
        o->ndim = 3;
        o->shape[0] = c;
        o->shape[1] = av_buffersink_get_h(o->sink);
        o->shape[2] = av_buffersink_get_w(o->sink);
    }
    size_t fb = (size_t)(o->dtype == LOOM_DTYPE_U8 ? 1 : o->dtype == LOOM_DTYPE_I16 ? 2
                         : o->dtype == LOOM_DTYPE_I32 || o->dtype == LOOM_DTYPE_F32 ? 4 : 8);
    for (int d = 0; d < o->ndim; d++)
        fb *= (size_t)o->shape[d];
    if (o->configured && fb != o->buf.frame_bytes)
        return sr_fail(r, "stream %d: the filter graph's output changed shape after a seek", o->source_index);
    if (!o->configured) {
        void (*on_drop)(void *, int64_t) = o->buf.on_drop;
        void *du = o->buf.drop_user;
        sb_init(&o->buf, o->frames_per_chunk, o->buffer_chunk_size, fb, NULL);
        o->buf.on_drop = on_drop;
        o->buf.drop_user = du;
    }
    o->deinterleave3 = sp_deinterleave3();
    o->configured = 1;
    return 0;
}

static uint8_t *rows_for(sr_reader *r, sr_output *o, size_t bytes)
{
    if (bytes > o->rows_cap) {
        uint8_t *p = av_realloc(o->rows, bytes);
        if (p == NULL) {
            sr_fail(r, "out of memory for %zu bytes of frames", bytes);
            return NULL;
        }
        o->rows = p;
        o->rows_cap = bytes;
    }
    return o->rows;
}

static int convert_audio(sr_reader *r, sr_output *o, const AVFrame *f, int64_t *n_out)
{
    const int64_t n = f->nb_samples, ch = o->shape[0];
    if (f->format != o->out_format || f->ch_layout.nb_channels != ch)
        return sr_fail(r, "stream %d: the filter graph changed its output format mid-stream", o->source_index);
    const size_t bps = (size_t)av_get_bytes_per_sample(f->format);
    uint8_t *dst = rows_for(r, o, (size_t)n * (size_t)ch * bps);
    if (dst == NULL)
        return -1;
    if (!av_sample_fmt_is_planar(f->format) || ch == 1)
        memcpy(dst, f->extended_data[0], (size_t)n * (size_t)ch * bps);
    else if (bps == 4) {
        for (int64_t c = 0; c < ch; c++) {
            const uint32_t *s = (const uint32_t *)f->extended_data[c];
            uint32_t *d = (uint32_t *)dst + c;
            for (int64_t i = 0; i < n; i++)
                d[i * ch] = s[i];
        }
    } else {
        for (int64_t c = 0; c < ch; c++)
            for (int64_t i = 0; i < n; i++)
                memcpy(dst + ((size_t)i * (size_t)ch + (size_t)c) * bps, f->extended_data[c] + (size_t)i * bps, bps);
    }
    *n_out = n;
    return 0;
}

#define SLICE_ROWS 16

/* vf_scale's colour set-up of its frame (in_color_matrix auto): the
** frame's matrix (BT.601 when unknown), its range when it has one. */
static void sws_colour(struct SwsContext *sws, const AVFrame *f)
{
    int *inv, *tab, in_full, out_full, bri, con, sat;
    sws_getColorspaceDetails(sws, &inv, &in_full, &tab, &out_full, &bri, &con, &sat);
    int space = f->colorspace;
    if (space < 1 || space > 10 || space == 8)
        space = AVCOL_SPC_BT470BG;
    const int *coef = sws_getCoefficients(space);
    if (f->color_range != AVCOL_RANGE_UNSPECIFIED)
        in_full = f->color_range == AVCOL_RANGE_JPEG;
    sws_setColorspaceDetails(sws, coef, in_full, coef, out_full, bri, con, sat);
}

/* yuv420p -> rgb24/bgr24 [C, H, W] at dst: swscale's conversion as the
** graph's format filter runs it (same formats, size, flags and colour
** details), 16 rows at a time into the slice, split into planes. */
static int convert_direct(sr_reader *r, sr_output *o, const AVFrame *f, uint8_t *dst)
{
    const int h = (int)o->shape[1], w = (int)o->shape[2];
    if (o->sws == NULL) {
        o->sws = sws_getContext(w, h, (enum AVPixelFormat)o->sink_fmt, w, h, (enum AVPixelFormat)o->direct_fmt,
                                SWS_BICUBIC, NULL, NULL, NULL);
        o->sws_space = o->sws_range = -1;
        if (o->sws == NULL)
            return sr_fail(r, "stream %d: swscale cannot convert %s to %s", o->source_index,
                           av_get_pix_fmt_name(o->sink_fmt), av_get_pix_fmt_name(o->direct_fmt));
    }
    if ((int)f->colorspace != o->sws_space || (int)f->color_range != o->sws_range) {
        sws_colour(o->sws, f);
        o->sws_space = f->colorspace;
        o->sws_range = f->color_range;
    }
    const int stride = (3 * w + 63) & ~63;
    uint8_t *slice = rows_for(r, o, (size_t)stride * SLICE_ROWS + 64);
    if (slice == NULL)
        return -1;
    const size_t plane = (size_t)h * (size_t)w;
    for (int y = 0; y < h; y += SLICE_ROWS) {
        const int n = h - y < SLICE_ROWS ? h - y : SLICE_ROWS;
        /* each slice as a picture of its own from row 0 (y and n even: the
        ** chroma rows of yuv420p go with it) */
        const uint8_t *src[4] = { f->data[0] + (ptrdiff_t)y * f->linesize[0],
                                  f->data[1] + (ptrdiff_t)(y / 2) * f->linesize[1],
                                  f->data[2] + (ptrdiff_t)(y / 2) * f->linesize[2], NULL };
        uint8_t *out[4] = { slice, NULL, NULL, NULL };
        int out_stride[4] = { stride, 0, 0, 0 };
        if (sws_scale(o->sws, src, f->linesize, 0, n, out, out_stride) != n)
            return sr_fail(r, "stream %d: swscale failed on rows %d..%d", o->source_index, y, y + n - 1);
        for (int k = 0; k < n; k++) {
            uint8_t *d0 = dst + (size_t)(y + k) * (size_t)w;
            o->deinterleave3(slice + (size_t)k * (size_t)stride, (size_t)w, d0, d0 + plane, d0 + 2 * plane);
        }
    }
    return 0;
}

/* One picture as [C, H, W] at dst (in the chunk buffer itself). */
static int convert_video(sr_reader *r, sr_output *o, const AVFrame *f, int64_t pts)
{
    const int64_t c = o->shape[0], h = o->shape[1], w = o->shape[2];
    if (o->sink_fmt != AV_PIX_FMT_NONE) {
        if (f->format != o->sink_fmt || f->width != w || f->height != h)
            return sr_fail(r, "stream %d: the picture changed to %dx%d %s mid-stream; add a scale and format filter",
                           o->source_index, f->width, f->height, av_get_pix_fmt_name(f->format));
        uint8_t *dst = sb_push_one(&o->buf, pts);
        if (dst == NULL)
            return sr_fail(r, "out of memory buffering stream %d", o->source_index);
        return convert_direct(r, o, f, dst);
    }
    if (f->format != o->out_format || f->width != w || f->height != h)
        return sr_fail(r, "stream %d: the picture changed to %dx%d %s mid-stream; add a scale and format filter",
                       o->source_index, f->width, f->height, av_get_pix_fmt_name(f->format));
    uint8_t *dst = sb_push_one(&o->buf, pts);
    if (dst == NULL)
        return sr_fail(r, "out of memory buffering stream %d", o->source_index);
    const size_t plane = (size_t)(h * w);
    switch (f->format) {
    case AV_PIX_FMT_RGB24:
    case AV_PIX_FMT_BGR24:
        for (int64_t y = 0; y < h; y++) {
            uint8_t *d0 = dst + y * w;
            o->deinterleave3(f->data[0] + y * f->linesize[0], (size_t)w, d0, d0 + plane, d0 + 2 * plane);
        }
        break;
    case AV_PIX_FMT_GRAY8:
    case AV_PIX_FMT_YUV444P:
        for (int64_t p = 0; p < c; p++)
            for (int64_t y = 0; y < h; y++)
                memcpy(dst + (size_t)p * plane + (size_t)(y * w), f->data[p] + y * f->linesize[p], (size_t)w);
        break;
    case AV_PIX_FMT_YUV420P:
        for (int64_t y = 0; y < h; y++)
            memcpy(dst + (size_t)(y * w), f->data[0] + y * f->linesize[0], (size_t)w);
        for (int64_t p = 1; p < 3; p++)
            for (int64_t y = 0; y < h; y++) {
                const uint8_t *s = f->data[p] + (y / 2) * f->linesize[p];
                uint8_t *d = dst + (size_t)p * plane + (size_t)(y * w);
                for (int64_t x = 0; x < w; x++)
                    d[x] = s[x / 2];
            }
        break;
    default:
        return sr_fail(r, "stream %d: pixel format %s has no converter", o->source_index,
                       av_get_pix_fmt_name(f->format));
    }
    return 0;
}

static int push_filtered(sr_reader *r, sr_output *o, const AVFrame *f)
{
    int64_t pts = f->pts == AV_NOPTS_VALUE ? 0 : f->pts;
    if (o->video)
        return convert_video(r, o, f, pts);
    int64_t n = 0;
    int ret = convert_audio(r, o, f, &n);
    if (ret != 0)
        return ret;
    /* pts of sample i of an audio frame: pts + i / sample_rate in the sink's
    ** time base (torchaudio adds i, which is the same when the time base is
    ** 1 / sample_rate, as aresample and most decoders make it) */
    int sr = av_buffersink_get_sample_rate(o->sink);
    int64_t num = o->out_tb.den, den = (int64_t)o->out_tb.num * (sr > 0 ? sr : 1);
    if (den <= 0)
        den = 1;
    if (sb_push(&o->buf, o->rows, n, pts, num, den) != 0)
        return sr_fail(r, "out of memory buffering stream %d", o->source_index);
    return 0;
}

int sr_output_send(sr_reader *r, sr_output *o, AVFrame *frame)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    if (o->on_cuda)
        return frame != NULL ? push_cuda(r, o, frame) : 0;
    int ret = av_buffersrc_add_frame_flags(o->src, frame, AV_BUFFERSRC_FLAG_KEEP_REF);
    if (ret < 0 && ret != AVERROR_EOF)
        return sr_fail(r, "stream %d: the filter graph refused a frame: %s", o->source_index, sr_averr(ret, eb));
    for (;;) {
        ret = av_buffersink_get_frame(o->sink, r->filtered);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0)
            return sr_fail(r, "stream %d: filtering failed: %s", o->source_index, sr_averr(ret, eb));
        ret = push_filtered(r, o, r->filtered);
        av_frame_unref(r->filtered);
        if (ret != 0)
            return ret;
    }
}

void sr_output_free(sr_output *o)
{
    sws_freeContext(o->sws);
    o->sws = NULL;
    av_freep(&o->graph_desc);
    avfilter_graph_free(&o->graph);
    sb_free(&o->buf);
    av_freep(&o->rows);
    av_freep(&o->filter_desc);
}
