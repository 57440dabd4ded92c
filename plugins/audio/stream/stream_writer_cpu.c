/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_writer_cpu.c - the audio.stream_writer object class and its
** methods on the writer (stream_writer.h). One method call at a time per
** writer (its lock): FFmpeg's muxer and encoders are not reentrant. The
** chunks are checked here against what their stream takes (dtype, shape),
** naming 'chunk'.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "stream_writer.h"

typedef struct sw_object {
    sw_writer *w;
    pthread_mutex_t lock;
} sw_object;

PK_ATTR_TABLE(audio_sw_class, AUDIO_SW_CLASS_ATTRS);

static loom_status fail_code(int code, const char *msg)
{
    return pk_host->fail(code == -1 ? LOOM_EINVAL : LOOM_EIO, "%s: %s", AUDIO_STREAM_WRITER_CLASS, msg);
}

static void log_to_host(void *user, const char *msg)
{
    (void)user;
    pk_host->log(LOOM_LOG_WARN, "%s", msg);
}

static const char *attr_str(const loom_attr_value *a) { return a->is_set ? a->u.s : NULL; }

static loom_status sw_obj_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    char err[SW_ERR_LEN];
    sw_object *o = calloc(1, sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", AUDIO_STREAM_WRITER_CLASS);
    int ret = sw_create(&o->w, attr_str(&a[PK_ATTR(audio_sw_class, dst)]), attr_str(&a[PK_ATTR(audio_sw_class, format)]),
                        err);
    if (ret != 0) {
        free(o);
        return fail_code(ret, err);
    }
    sw_set_log(o->w, log_to_host, NULL);
    pthread_mutex_init(&o->lock, NULL);
    *state_out = o;
    return LOOM_OK;
}

static void sw_obj_destroy(void *state)
{
    sw_object *o = state;
    if (o == NULL)
        return;
    sw_free(o->w);      /* closes an open writer: the trailer is written */
    pthread_mutex_destroy(&o->lock);
    free(o);
}

const loom_object_class audio_stream_writer_class = {
    .struct_size = sizeof(loom_object_class),
    .name = AUDIO_STREAM_WRITER_CLASS,
    .doc = "torchaudio StreamWriter on FFmpeg: audio and video streams encoded and muxed into a path/URL or memory; "
           "methods audio.stream_writer_*",
    PK_ATTRS(audio_sw_class_attrs),
    .create = sw_obj_create,
    .destroy = sw_obj_destroy,
};

#define LOCKED(call, ...)                                                                                      \
    do {                                                                                                       \
        sw_object *o_ = (call)->object;                                                                        \
        pthread_mutex_lock(&o_->lock);                                                                         \
        sw_writer *w = o_->w;                                                                                  \
        loom_status st_ = LOOM_OK;                                                                             \
        __VA_ARGS__;                                                                                           \
        pthread_mutex_unlock(&o_->lock);                                                                       \
        return st_;                                                                                            \
    } while (0)

static loom_status out_i64(loom_call *call, int64_t v)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 0, NULL, &t);
    if (st == LOOM_OK)
        *(int64_t *)loom_data(t) = v;
    return st;
}

static int int_attr(const loom_attr_value *a, int unset)
{
    if (!a->is_set)
        return unset;
    return a->u.i > 1 << 30 ? 1 << 30 : a->u.i < -(1 << 30) ? -(1 << 30) : (int)a->u.i;
}

/* The common attributes sit first, in the same order, in both add tables. */
static void common_config(const loom_call *call, const char **encoder, const char **option, const char **format,
                          const char **filter, sw_codec_config *k)
{
    const loom_attr_value *a = call->attrs;
    *encoder = attr_str(&a[PK_ATTR(audio_sw_add_audio, encoder)]);
    *option = attr_str(&a[PK_ATTR(audio_sw_add_audio, encoder_option)]);
    *format = attr_str(&a[PK_ATTR(audio_sw_add_audio, encoder_format)]);
    *filter = attr_str(&a[PK_ATTR(audio_sw_add_audio, filter_desc)]);
    k->bit_rate = a[PK_ATTR(audio_sw_add_audio, bit_rate)].u.i;
    k->compression_level = int_attr(&a[PK_ATTR(audio_sw_add_audio, compression_level)], -1);
    k->qscale = a[PK_ATTR(audio_sw_add_audio, qscale)].is_set ? a[PK_ATTR(audio_sw_add_audio, qscale)].u.f : NAN;
    k->gop_size = -1;
    k->max_b_frames = -1;
}

loom_status audio_sw_add_audio_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    sw_audio_config c = { 0 };
    common_config(call, &c.encoder, &c.encoder_option, &c.encoder_format, &c.filter_desc, &c.codec);
    c.sample_rate = int_attr(&a[PK_ATTR(audio_sw_add_audio, sample_rate)], 0);
    c.num_channels = int_attr(&a[PK_ATTR(audio_sw_add_audio, num_channels)], 0);
    c.format = attr_str(&a[PK_ATTR(audio_sw_add_audio, format)]);
    c.encoder_sample_rate = int_attr(&a[PK_ATTR(audio_sw_add_audio, encoder_sample_rate)], 0);
    c.encoder_num_channels = int_attr(&a[PK_ATTR(audio_sw_add_audio, encoder_num_channels)], 0);
    LOCKED(call, {
        int k = sw_add_audio(w, &c);
        st_ = k < 0 ? fail_code(k, sw_error(w)) : out_i64(call, k);
    });
}

loom_status audio_sw_add_video_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    sw_video_config c = { 0 };
    common_config(call, &c.encoder, &c.encoder_option, &c.encoder_format, &c.filter_desc, &c.codec);
    c.frame_rate = a[PK_ATTR(audio_sw_add_video, frame_rate)].u.f;
    c.width = int_attr(&a[PK_ATTR(audio_sw_add_video, width)], 0);
    c.height = int_attr(&a[PK_ATTR(audio_sw_add_video, height)], 0);
    c.format = attr_str(&a[PK_ATTR(audio_sw_add_video, format)]);
    const loom_attr_value *efr = &a[PK_ATTR(audio_sw_add_video, encoder_frame_rate)];
    c.encoder_frame_rate = efr->is_set ? efr->u.f : 0;
    c.encoder_width = int_attr(&a[PK_ATTR(audio_sw_add_video, encoder_width)], 0);
    c.encoder_height = int_attr(&a[PK_ATTR(audio_sw_add_video, encoder_height)], 0);
    c.hw_accel = attr_str(&a[PK_ATTR(audio_sw_add_video, hw_accel)]);
    c.codec.gop_size = int_attr(&a[PK_ATTR(audio_sw_add_video, gop_size)], -1);
    c.codec.max_b_frames = int_attr(&a[PK_ATTR(audio_sw_add_video, max_b_frames)], -1);
    LOCKED(call, {
        int k = sw_add_video(w, &c);
        st_ = k < 0 ? fail_code(k, sw_error(w)) : out_i64(call, k);
    });
}

loom_status audio_sw_set_metadata_run(loom_call *call)
{
    const char *kv = attr_str(&call->attrs[PK_ATTR(audio_sw_metadata, metadata)]);
    LOCKED(call, {
        int ret = sw_set_metadata(w, kv);
        if (ret != 0)
            st_ = fail_code(ret, sw_error(w));
    });
}

loom_status audio_sw_open_run(loom_call *call)
{
    const char *opt = attr_str(&call->attrs[PK_ATTR(audio_sw_open, option)]);
    LOCKED(call, {
        int ret = sw_open(w, opt);
        if (ret != 0)
            st_ = fail_code(ret, sw_error(w));
    });
}

static const char *const dtype_names[] = { [LOOM_DTYPE_U8] = "u8", [LOOM_DTYPE_I16] = "i16",
                                           [LOOM_DTYPE_I32] = "i32", [LOOM_DTYPE_I64] = "i64",
                                           [LOOM_DTYPE_F32] = "f32", [LOOM_DTYPE_F64] = "f64" };

static const char *dtype_name(int d)
{
    const char *n = d >= 0 && d < (int)(sizeof dtype_names / sizeof dtype_names[0]) ? dtype_names[d] : NULL;
    return n != NULL ? n : "another dtype";
}

/* The chunk against stream i: dtype, rank and frame shape (the frame count
** may be 0: nothing is written). */
static loom_status check_chunk(sw_writer *w, int i, int video, const loom_tensor *t)
{
    int sv = 0, dt = 0;
    int64_t shape[3];
    if (sw_stream_shape(w, i, &sv, &dt, shape) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'i' %d: the writer has %d streams", AUDIO_STREAM_WRITER_CLASS, i,
                             sw_num_streams(w));
    if (sv != video)
        return pk_host->fail(LOOM_EINVAL, "%s: 'i' %d is %s stream; use write_%s_chunk", AUDIO_STREAM_WRITER_CLASS, i,
                             sv ? "a video" : "an audio", sv ? "video" : "audio");
    if (t == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' is missing", AUDIO_STREAM_WRITER_CLASS);
    if (t->device.device_type != LOOM_DEVICE_CPU)
        return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' must be in host memory", AUDIO_STREAM_WRITER_CLASS);
    const int want_ndim = video ? 4 : 2;
    if (loom_tensor_dtype_of(t) != (loom_dtype)dt)
        return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' is %s; stream %d takes %s (its format)",
                             AUDIO_STREAM_WRITER_CLASS, dtype_name(loom_tensor_dtype_of(t)), i, dtype_name(dt));
    int ok = t->ndim == want_ndim;
    for (int d = 0; ok && d < want_ndim - 1; d++)
        ok = t->shape[d + 1] == shape[d];
    if (!ok) {
        if (video)
            return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' must be [frames, %lld, %lld, %lld] for stream %d (ndim %d given)",
                                 AUDIO_STREAM_WRITER_CLASS, (long long)shape[0], (long long)shape[1],
                                 (long long)shape[2], i, (int)t->ndim);
        return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' must be [frames, %lld] for stream %d (ndim %d given)",
                             AUDIO_STREAM_WRITER_CLASS, (long long)shape[0], i, (int)t->ndim);
    }
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: 'chunk' must be contiguous", AUDIO_STREAM_WRITER_CLASS);
    return LOOM_OK;
}

static loom_status write_chunk(loom_call *call, int video)
{
    const loom_attr_value *a = call->attrs;
    const int i = int_attr(&a[PK_ATTR(audio_sw_write, i)], 0);
    const double pts = a[PK_ATTR(audio_sw_write, pts)].is_set ? a[PK_ATTR(audio_sw_write, pts)].u.f : NAN;
    const loom_tensor *t = call->n_inputs > 0 ? call->inputs[0] : NULL;
    LOCKED(call, {
        int ret = 0;
        if (sw_is_closed(w) || !sw_is_open(w))  /* the writer's own message for the order of calls */
            ret = video ? sw_write_video(w, i, NULL, 0, pts) : sw_write_audio(w, i, NULL, 0, pts);
        else if ((st_ = check_chunk(w, i, video, t)) == LOOM_OK) {
            const int64_t frames = t->shape[0];
            ret = video ? sw_write_video(w, i, loom_data(t), frames, pts) : sw_write_audio(w, i, loom_data(t), frames, pts);
        }
        if (ret != 0)
            st_ = fail_code(ret, sw_error(w));
    });
}

loom_status audio_sw_write_audio_run(loom_call *call) { return write_chunk(call, 0); }
loom_status audio_sw_write_video_run(loom_call *call) { return write_chunk(call, 1); }

loom_status audio_sw_flush_run(loom_call *call)
{
    LOCKED(call, {
        int ret = sw_flush(w);
        if (ret != 0)
            st_ = fail_code(ret, sw_error(w));
    });
}

loom_status audio_sw_close_run(loom_call *call)
{
    LOCKED(call, {
        int ret = sw_close(w);
        if (ret != 0)
            st_ = fail_code(ret, sw_error(w));
    });
}

loom_status audio_sw_bytes_run(loom_call *call)
{
    LOCKED(call, {
        size_t n = 0;
        int mem = 0;
        const uint8_t *b = sw_bytes(w, &n, &mem);
        if (!mem)
            st_ = pk_host->fail(LOOM_EINVAL, "%s: bytes: the writer writes to a path ('dst'), not to memory",
                                AUDIO_STREAM_WRITER_CLASS);
        loom_tensor *t = NULL;
        const int64_t len = (int64_t)n;
        if (st_ == LOOM_OK)
            st_ = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, &len, &t);
        if (st_ == LOOM_OK && n > 0)
            memcpy(loom_data(t), b, n);
    });
}
