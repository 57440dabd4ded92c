/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_reader_cpu.c - the audio.stream_reader object class and its
** methods on the reader (stream_reader.h), and the stream module's tables
** (the writer's methods are in stream_writer_cpu.c). A reader is used by one method
** call at a time (its lock): FFmpeg's demuxer and decoders are not
** reentrant.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "loom/stream_io.h"
#include "stream.h"
#include "stream_reader.h"

typedef struct sr_object {
    sr_reader *r;
    pthread_mutex_t lock;
} sr_object;

PK_ATTR_TABLE(audio_sr_class, AUDIO_SR_CLASS_ATTRS);

/* Messages that name an argument start with it in quotes (stream_reader.c);
** everything else is about the media. */
static loom_status fail_with(const char *msg)
{
    return pk_host->fail(msg[0] == '\'' ? LOOM_EINVAL : LOOM_EFORMAT, "%s", msg);
}

static void log_to_host(void *user, const char *msg)
{
    (void)user;
    pk_host->log(LOOM_LOG_WARN, "%s", msg);
}

static void sr_destroy(void *state)
{
    sr_object *o = state;
    if (o == NULL)
        return;
    sr_close(o->r);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

static const char *attr_str(const loom_attr_value *a) { return a->is_set ? a->u.s : NULL; }

static loom_status sr_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    sr_source src = { .url = attr_str(&a[PK_ATTR(audio_sr_class, src)]),
                      .format = attr_str(&a[PK_ATTR(audio_sr_class, format)]),
                      .option = attr_str(&a[PK_ATTR(audio_sr_class, option)]),
                      .buffer_size = a[PK_ATTR(audio_sr_class, buffer_size)].u.i };
    int n_src = src.url != NULL;
    for (int32_t i = 0; i < args->n_files; i++)
        if (args->files[i].name != NULL && strcmp(args->files[i].name, "src") == 0) {
            src.url = args->files[i].path;
            n_src++;
        }
    const loom_tensor *bytes = NULL;
    if (args->weights != NULL && pk_host->safetensors_get(args->weights, "src", &bytes) == LOOM_OK) {
        if (loom_tensor_dtype_of(bytes) != LOOM_DTYPE_U8 || bytes->ndim != 1)
            return pk_host->fail(LOOM_EINVAL, "%s: the tensor 'src' must be u8 [n], the bytes of a media file",
                                 AUDIO_STREAM_READER_CLASS);
        src.data = loom_data(bytes);
        src.size = (size_t)bytes->shape[0];
        if (src.size == 0)
            return pk_host->fail(LOOM_EFORMAT, "%s: the tensor 'src' is empty", AUDIO_STREAM_READER_CLASS);
        n_src++;
    }
    if (args->callbacks != NULL) {
        if (args->callbacks_name == NULL || strcmp(args->callbacks_name, LOOM_STREAM_IO_V1) != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: callbacks \"%s\" are not %s (loom/stream_io.h)",
                                 AUDIO_STREAM_READER_CLASS, args->callbacks_name ? args->callbacks_name : "(unnamed)",
                                 LOOM_STREAM_IO_V1);
        src.io = args->callbacks;
        n_src++;
    }
    if (n_src != 1)
        return pk_host->fail(LOOM_EINVAL,
                             "%s: give exactly one source: 'src' (path or URL), a file or tensor named src, or %s "
                             "callbacks (%d given)",
                             AUDIO_STREAM_READER_CLASS, LOOM_STREAM_IO_V1, n_src);
    sr_object *o = calloc(1, sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", AUDIO_STREAM_READER_CLASS);
    char err[SR_ERR_LEN];
    if (sr_open(&o->r, &src, err) != 0) {
        free(o);
        return pk_host->fail(err[0] == '\'' ? LOOM_EINVAL : LOOM_EFORMAT, "%s: %s", AUDIO_STREAM_READER_CLASS, err);
    }
    sr_set_log(o->r, log_to_host, NULL);
    pthread_mutex_init(&o->lock, NULL);
    *state_out = o;
    return LOOM_OK;
}

const loom_object_class audio_stream_reader_class = {
    .struct_size = sizeof(loom_object_class),
    .name = AUDIO_STREAM_READER_CLASS,
    .doc = "torchaudio StreamReader on FFmpeg: a path/URL/device, bytes, or read callbacks; chunked decode "
           "through libavfilter graphs; methods audio.stream_reader_*",
    PK_ATTRS(audio_sr_class_attrs),
    .create = sr_create,
    .destroy = sr_destroy,
};

/* ---------------------------------------------------------------- helpers */

static loom_status out_i64(loom_call *call, int32_t index, int64_t v)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, LOOM_DTYPE_I64, 0, NULL, &t);
    if (st == LOOM_OK)
        *(int64_t *)loom_data(t) = v;
    return st;
}

static loom_status out_f64(loom_call *call, int32_t index, double v)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, LOOM_DTYPE_F64, 0, NULL, &t);
    if (st == LOOM_OK)
        *(double *)loom_data(t) = v;
    return st;
}

static loom_status out_text(loom_call *call, int32_t index, const char *s)
{
    loom_tensor *t;
    const int64_t n = (int64_t)strlen(s);
    loom_status st = pk_host->alloc_output(call, index, LOOM_DTYPE_U8, 1, &n, &t);
    if (st == LOOM_OK && n > 0)
        memcpy(loom_data(t), s, (size_t)n);
    return st;
}

#define LOCKED(call, ...)                                                                                      \
    do {                                                                                                       \
        sr_object *o_ = (call)->object;                                                                        \
        pthread_mutex_lock(&o_->lock);                                                                         \
        sr_reader *r = o_->r;                                                                                  \
        loom_status st_ = LOOM_OK;                                                                             \
        __VA_ARGS__;                                                                                                \
        pthread_mutex_unlock(&o_->lock);                                                                       \
        return st_;                                                                                            \
    } while (0)

static const char *str_attr(const loom_call *call, int idx) { return attr_str(&call->attrs[idx]); }

/* ---------------------------------------------------------------- methods */

static loom_status num_src_run(loom_call *call)
{
    LOCKED(call, st_ = out_i64(call, 0, sr_num_src_streams(r)));
}

static loom_status src_info_run(loom_call *call)
{
    LOCKED(call, {
        sr_src_info in;
        int64_t i = call->attrs[PK_ATTR(audio_sr_index, i)].u.i;
        if (sr_src_info_get(r, i > 1000000 ? 1000000 : (int)i, &in) != 0)
            st_ = pk_host->fail(LOOM_EINVAL, "'i' %lld: %s", (long long)i, sr_error(r));
        if (st_ == LOOM_OK) st_ = out_text(call, 0, in.media_type);
        if (st_ == LOOM_OK) st_ = out_text(call, 1, in.codec);
        if (st_ == LOOM_OK) st_ = out_text(call, 2, in.format);
        if (st_ == LOOM_OK) st_ = out_f64(call, 3, in.sample_rate);
        if (st_ == LOOM_OK) st_ = out_i64(call, 4, in.num_channels);
        if (st_ == LOOM_OK) st_ = out_i64(call, 5, in.width);
        if (st_ == LOOM_OK) st_ = out_i64(call, 6, in.height);
        if (st_ == LOOM_OK) st_ = out_f64(call, 7, in.frame_rate);
        if (st_ == LOOM_OK) st_ = out_i64(call, 8, in.bit_rate);
        if (st_ == LOOM_OK) st_ = out_i64(call, 9, in.num_frames);
        if (st_ == LOOM_OK) st_ = out_i64(call, 10, in.bits_per_sample);
    });
}

static loom_status metadata_run(loom_call *call)
{
    LOCKED(call, {
        char *m = sr_metadata(r);
        st_ = m == NULL ? pk_host->fail(LOOM_ENOMEM, "out of memory") : out_text(call, 0, m);
        free(m);
    });
}

/* The common attributes of the add_*_stream methods sit first, in the same
** order, in every one of their tables (AUDIO_SR_OUT_COMMON). */
static void common_config(const loom_call *call, int video, sr_output_config *c)
{
    const loom_attr_value *a = call->attrs;
    memset(c, 0, sizeof *c);
    c->video = video;
    c->frames_per_chunk = a[PK_ATTR(audio_sr_add_audio, frames_per_chunk)].u.i;
    c->buffer_chunk_size = a[PK_ATTR(audio_sr_add_audio, buffer_chunk_size)].u.i;
    c->stream_index = a[PK_ATTR(audio_sr_add_audio, stream_index)].is_set
                          ? (a[PK_ATTR(audio_sr_add_audio, stream_index)].u.i > 1000000
                                 ? 1000000 : (int)a[PK_ATTR(audio_sr_add_audio, stream_index)].u.i)
                          : -1;
    c->decoder = str_attr(call, PK_ATTR(audio_sr_add_audio, decoder));
    c->decoder_option = str_attr(call, PK_ATTR(audio_sr_add_audio, decoder_option));
}

/* A scalar output of a call on the CPU, or (cuda != NULL: the cuda pack's
** kernels, whose outputs are device memory) copied to the device. */
static loom_status out_scalar(loom_call *call, int32_t index, loom_dtype dt, const void *v, size_t n,
                              const sr_cuda_ops *cuda)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, dt, 0, NULL, &t);
    if (st != LOOM_OK)
        return st;
    if (cuda == NULL)
        memcpy(loom_data(t), v, n);
    else if (cuda->to_device(cuda->mem.user, loom_data(t), v, n) != 0)
        return pk_host->fail(LOOM_EDEVICE, "copying output %d to the GPU failed", index);
    return LOOM_OK;
}

static loom_status add_output(loom_call *call, const sr_output_config *c)
{
    LOCKED(call, {
        int64_t k = sr_add_output(r, c);
        st_ = k < 0 ? fail_with(sr_error(r)) : out_scalar(call, 0, LOOM_DTYPE_I64, &k, sizeof k, c->cuda);
    });
}

static loom_status add_audio_run(loom_call *call)
{
    sr_output_config c;
    common_config(call, 0, &c);
    c.filter_desc = str_attr(call, PK_ATTR(audio_sr_add_audio, filter_desc));
    return add_output(call, &c);
}

static const char *const sample_formats[] = { "u8p", "s16p", "s32p", "s64p", "fltp", "dblp",
                                              "u8", "s16", "s32", "s64", "flt", "dbl", NULL };

static loom_status add_basic_audio_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    sr_output_config c;
    common_config(call, 0, &c);
    const char *fmt = str_attr(call, PK_ATTR(audio_sr_add_basic_audio, format));
    int known = fmt == NULL;
    for (int i = 0; !known && sample_formats[i] != NULL; i++)
        known = strcmp(fmt, sample_formats[i]) == 0;
    if (!known)
        return pk_host->fail(LOOM_EINVAL, "'format' \"%s\" is not u8p, s16p, s32p, s64p, fltp or dblp", fmt);
    char desc[256];
    const loom_attr_value *sr = &a[PK_ATTR(audio_sr_add_basic_audio, sample_rate)];
    const loom_attr_value *nc = &a[PK_ATTR(audio_sr_add_basic_audio, num_channels)];
    sr_audio_filter_desc(desc, sizeof desc, sr->is_set ? sr->u.i : 0, fmt, nc->is_set ? nc->u.i : 0);
    c.filter_desc = desc;
    return add_output(call, &c);
}

loom_status audio_sr_add_video_on(loom_call *call, const sr_cuda_ops *cuda)
{
    sr_output_config c;
    common_config(call, 1, &c);
    c.filter_desc = str_attr(call, PK_ATTR(audio_sr_add_video, filter_desc));
    c.hw_accel = str_attr(call, PK_ATTR(audio_sr_add_video, hw_accel));
    c.cuda = cuda;
    return add_output(call, &c);
}

static loom_status add_video_run(loom_call *call) { return audio_sr_add_video_on(call, NULL); }

static const char *const pixel_formats[] = { "rgb24", "bgr24", "yuv420p", "yuv444p", "gray", NULL };

loom_status audio_sr_add_basic_video_on(loom_call *call, const sr_cuda_ops *cuda)
{
    const loom_attr_value *a = call->attrs;
    sr_output_config c;
    common_config(call, 1, &c);
    const char *fmt = str_attr(call, PK_ATTR(audio_sr_add_basic_video, format));
    int known = fmt == NULL;
    for (int i = 0; !known && pixel_formats[i] != NULL; i++)
        known = strcmp(fmt, pixel_formats[i]) == 0;
    if (!known)
        return pk_host->fail(LOOM_EINVAL, "'format' \"%s\" is not rgb24, bgr24, yuv420p, yuv444p or gray", fmt);
    const loom_attr_value *fr = &a[PK_ATTR(audio_sr_add_basic_video, frame_rate)];
    const loom_attr_value *w = &a[PK_ATTR(audio_sr_add_basic_video, width)];
    const loom_attr_value *h = &a[PK_ATTR(audio_sr_add_basic_video, height)];
    char desc[256];
    sr_video_filter_desc(desc, sizeof desc, fr->is_set ? fr->u.f : 0, w->is_set ? w->u.i : 0, h->is_set ? h->u.i : 0,
                         fmt);
    c.filter_desc = desc;
    c.hw_accel = str_attr(call, PK_ATTR(audio_sr_add_basic_video, hw_accel));
    c.cuda = cuda;
    return add_output(call, &c);
}

static loom_status add_basic_video_run(loom_call *call) { return audio_sr_add_basic_video_on(call, NULL); }

static loom_status out_info_run(loom_call *call)
{
    LOCKED(call, {
        sr_out_info in;
        int64_t i = call->attrs[PK_ATTR(audio_sr_index, i)].u.i;
        if (sr_out_info_get(r, i > 1000000 ? 1000000 : (int)i, &in) != 0)
            st_ = pk_host->fail(LOOM_EINVAL, "'i' %lld: %s", (long long)i, sr_error(r));
        if (st_ == LOOM_OK) st_ = out_i64(call, 0, in.source_index);
        if (st_ == LOOM_OK) st_ = out_text(call, 1, in.filter_description);
        if (st_ == LOOM_OK) st_ = out_i64(call, 2, in.dropped_chunks);
        if (st_ == LOOM_OK) st_ = out_i64(call, 3, in.dropped_frames);
    });
}

static loom_status process_packet_run(loom_call *call)
{
    LOCKED(call, {
        int ret = sr_process_packet(r);
        st_ = ret < 0 ? fail_with(sr_error(r)) : out_i64(call, 0, ret);
    });
}

static loom_status process_all_run(loom_call *call)
{
    LOCKED(call, {
        if (sr_process_all_packets(r) != 0)
            st_ = fail_with(sr_error(r));
    });
}

static loom_status fill_buffer_run(loom_call *call)
{
    LOCKED(call, {
        int ret = sr_fill_buffer(r);
        st_ = ret < 0 ? fail_with(sr_error(r)) : out_i64(call, 0, ret);
    });
}

static loom_status is_ready_run(loom_call *call)
{
    LOCKED(call, st_ = out_i64(call, 0, sr_is_buffer_ready(r)));
}

static loom_status seek_run(loom_call *call)
{
    const char *m = call->attrs[PK_ATTR(audio_sr_seek, mode)].u.s;
    int mode = strcmp(m, "key") == 0 ? 0 : strcmp(m, "any") == 0 ? 1 : 2;
    LOCKED(call, {
        if (sr_seek(r, call->attrs[PK_ATTR(audio_sr_seek, timestamp)].u.f, mode) != 0)
            st_ = fail_with(sr_error(r));
    });
}

/* pop_chunk on the CPU (cuda NULL), or on the reader's GPU (the cuda pack):
** there the chunk and its pts are device tensors, NVDEC chunks copied on the
** device and host chunks (audio, software video) copied up once. On the CPU
** a chunked output's chunk leaves as its own pool block, adopted as the
** output (host->adopt_output, ABI 1.6) with no copy; an unchunked output
** (frames_per_chunk=-1, several segments) and a core before 1.6 copy. */
loom_status audio_sr_pop_chunk_on(loom_call *call, const sr_cuda_ops *cuda)
{
    LOCKED(call, {
        sr_out_info in;
        int64_t i = call->attrs[PK_ATTR(audio_sr_pop, output)].u.i;
        if (sr_out_info_get(r, i > 1000000 ? 1000000 : (int)i, &in) != 0)
            st_ = pk_host->fail(LOOM_EINVAL, "'output' %lld: %s", (long long)i, sr_error(r));
        else if (in.on_cuda && cuda == NULL)
            st_ = pk_host->fail(LOOM_EINVAL, "'output' %lld holds NVDEC pictures on the GPU (hw_accel=cuda); this "
                                "pop_chunk ran on the CPU: make the reader on cuda, with a core of ABI 1.5 or "
                                "newer (object methods go to the object's device)", (long long)i);
        double pts = NAN;
        int64_t n = st_ == LOOM_OK ? sr_peek_chunk(r, (int)i, &pts) : 0;
        int64_t shape[4] = { n, in.frame_shape[0], in.frame_shape[1], in.frame_shape[2] };
        loom_tensor *t = NULL;
        int lent = 0;
        if (st_ == LOOM_OK && cuda == NULL)
            st_ = audio_sr_lend_chunk(call, r, (int)i, 0, (loom_dtype)in.dtype, 1 + in.ndim_frame, shape, &t, &lent);
        if (st_ == LOOM_OK && !lent)
            st_ = pk_host->alloc_output(call, 0, (loom_dtype)in.dtype, 1 + in.ndim_frame, shape, &t);
        if (st_ == LOOM_OK)
            st_ = out_scalar(call, 1, LOOM_DTYPE_F64, &pts, sizeof pts, cuda);
        if (st_ == LOOM_OK && n > 0 && !lent) {
            if (cuda == NULL || in.on_cuda) {
                if (sr_pop_chunk(r, (int)i, loom_data(t)) != 0)
                    st_ = pk_host->fail(LOOM_EDEVICE, "%s", sr_error(r));
            } else {
                size_t nbytes = (size_t)loom_numel(t) * (size_t)(t->dtype.bits / 8);
                void *host = malloc(nbytes ? nbytes : 1);
                if (host == NULL)
                    st_ = pk_host->fail(LOOM_ENOMEM, "out of memory for a chunk of %zu bytes", nbytes);
                else if (sr_pop_chunk(r, (int)i, host) != 0 || cuda->to_device(cuda->mem.user, loom_data(t), host, nbytes) != 0)
                    st_ = pk_host->fail(LOOM_EDEVICE, "copying the chunk of output %lld to the GPU failed", (long long)i);
                free(host);
            }
        }
    });
}

loom_status audio_sr_lend_chunk(loom_call *call, sr_reader *r, int index, int32_t out_index, loom_dtype dtype,
                                int32_t ndim, const int64_t *shape, loom_tensor **t, int *lent)
{
    int64_t frames = 0;
    size_t bytes = 0;
    sb_release_fn release = NULL;
    void *user = NULL;
    *lent = 0;
    if (shape[0] == 0 || !LOOM_HAS_MEMBER(pk_host, loom_host_api, adopt_output))
        return LOOM_OK;
    uint8_t *mem = sr_take_chunk(r, index, &frames, &bytes, &release, &user);
    if (mem == NULL)
        return LOOM_OK;
    loom_output_storage s = { .struct_size = sizeof s, .dtype = dtype, .ndim = ndim, .shape = shape,
                              .data = mem, .nbytes = bytes, .release = release, .user = user };
    *lent = 1;
    return pk_host->adopt_output(call, out_index, &s, t);   /* the memory is the core's now, whatever it says */
}

static loom_status pop_chunk_run(loom_call *call) { return audio_sr_pop_chunk_on(call, NULL); }

loom_status audio_stream_decode_run(loom_call *call);

static const loom_object_class *const stream_classes[] = { &audio_stream_reader_class, &audio_stream_writer_class };

static const loom_kernel_desc stream_cpu_kernels[] = {
    PK_KERNEL_CPU(audio_sr_num_src_streams_schema, "cpu:ffmpeg", 0, num_src_run),
    PK_KERNEL_CPU(audio_sr_src_stream_info_schema, "cpu:ffmpeg", 0, src_info_run),
    PK_KERNEL_CPU(audio_sr_metadata_schema, "cpu:ffmpeg", 0, metadata_run),
    PK_KERNEL_CPU(audio_sr_add_audio_schema, "cpu:ffmpeg", 0, add_audio_run),
    PK_KERNEL_CPU(audio_sr_add_basic_audio_schema, "cpu:ffmpeg", 0, add_basic_audio_run),
    PK_KERNEL_CPU(audio_sr_add_video_schema, "cpu:ffmpeg", 0, add_video_run),
    PK_KERNEL_CPU(audio_sr_add_basic_video_schema, "cpu:ffmpeg", 0, add_basic_video_run),
    PK_KERNEL_CPU(audio_sr_out_stream_info_schema, "cpu:ffmpeg", 0, out_info_run),
    PK_KERNEL_CPU(audio_sr_process_packet_schema, "cpu:ffmpeg", 0, process_packet_run),
    PK_KERNEL_CPU(audio_sr_process_all_packets_schema, "cpu:ffmpeg", 0, process_all_run),
    PK_KERNEL_CPU(audio_sr_fill_buffer_schema, "cpu:ffmpeg", 0, fill_buffer_run),
    PK_KERNEL_CPU(audio_sr_is_buffer_ready_schema, "cpu:ffmpeg", 0, is_ready_run),
    PK_KERNEL_CPU(audio_sr_seek_schema, "cpu:ffmpeg", 0, seek_run),
    PK_KERNEL_CPU(audio_sr_pop_chunk_schema, "cpu:ffmpeg", 0, pop_chunk_run),
    PK_KERNEL_CPU(audio_stream_decode_schema, "cpu:ffmpeg", 0, audio_stream_decode_run),
    PK_KERNEL_CPU(audio_sw_add_audio_schema, "cpu:ffmpeg", 0, audio_sw_add_audio_run),
    PK_KERNEL_CPU(audio_sw_add_video_schema, "cpu:ffmpeg", 0, audio_sw_add_video_run),
    PK_KERNEL_CPU(audio_sw_set_metadata_schema, "cpu:ffmpeg", 0, audio_sw_set_metadata_run),
    PK_KERNEL_CPU(audio_sw_open_schema, "cpu:ffmpeg", 0, audio_sw_open_run),
    PK_KERNEL_CPU(audio_sw_write_audio_schema, "cpu:ffmpeg", 0, audio_sw_write_audio_run),
    PK_KERNEL_CPU(audio_sw_write_video_schema, "cpu:ffmpeg", 0, audio_sw_write_video_run),
    PK_KERNEL_CPU(audio_sw_flush_schema, "cpu:ffmpeg", 0, audio_sw_flush_run),
    PK_KERNEL_CPU(audio_sw_close_schema, "cpu:ffmpeg", 0, audio_sw_close_run),
    PK_KERNEL_CPU(audio_sw_bytes_schema, "cpu:ffmpeg", 0, audio_sw_bytes_run),
};

const pk_module audio_stream_cpu = {
    .name = "stream",
    .ops = audio_stream_ops, .n_ops = PK_COUNT(audio_stream_ops),
    .classes = stream_classes, .n_classes = PK_COUNT(stream_classes),
    .kernels = stream_cpu_kernels, .n_kernels = PK_COUNT(stream_cpu_kernels),
};
