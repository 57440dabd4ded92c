/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_decode_cpu.c - audio.stream_decode: one stream of a source
** decoded to one tensor, exactly as a StreamReader output with
** frames_per_chunk=-1 and buffer_chunk_size=-1 gives it after
** process_all_packets (audio: add_basic_audio_stream's filter, fltp by
** default, so 16-bit PCM comes out as int16 / 32768 in f32; video:
** add_basic_video_stream's, rgb24 by default). The reader's buffer of
** the whole stream is the output itself (host->adopt_output), not copied.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stream.h"
#include "stream_reader.h"

#define A(name) PK_ATTR(audio_stream_decode, name)

static const char *str_of(const loom_attr_value *a) { return a->is_set ? a->u.s : NULL; }

loom_status audio_stream_decode_run(loom_call *call);
loom_status audio_stream_decode_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    const loom_tensor *bytes = call->n_inputs > 0 ? call->inputs[0] : NULL;
    sr_source src = { .url = str_of(&a[A(src)]), .format = str_of(&a[A(format)]),
                      .option = str_of(&a[A(option)]), .buffer_size = 65536 };
    if (bytes != NULL) {
        if (src.url != NULL)
            return pk_host->fail(LOOM_EINVAL, "give the media as 'src' (a path or URL) or as input 'src', not both");
        if (loom_numel(bytes) == 0)
            return pk_host->fail(LOOM_EFORMAT, "input 'src' is empty");
        src.data = loom_data(bytes);
        src.size = (size_t)loom_numel(bytes);
    } else if (src.url == NULL)
        return pk_host->fail(LOOM_EINVAL, "give the media as 'src' (a path or URL, '-' for stdin) or as input 'src'");
    const int video = strcmp(a[A(media_type)].u.s, "video") == 0;
    const char *fmt = str_of(&a[A(sample_format)]);
    char desc[512];
    if (a[A(filter_desc)].is_set)
        snprintf(desc, sizeof desc, "%s", a[A(filter_desc)].u.s);
    else if (!video)
        sr_audio_filter_desc(desc, sizeof desc, a[A(sample_rate)].is_set ? a[A(sample_rate)].u.i : 0,
                             fmt != NULL ? fmt : "fltp", a[A(num_channels)].is_set ? a[A(num_channels)].u.i : 0);
    else
        sr_video_filter_desc(desc, sizeof desc, a[A(frame_rate)].is_set ? a[A(frame_rate)].u.f : 0,
                             a[A(width)].is_set ? a[A(width)].u.i : 0, a[A(height)].is_set ? a[A(height)].u.i : 0,
                             fmt != NULL ? fmt : "rgb24");
    /* the decoder's frame/slice threads: the call's thread budget (the
    ** core's pool, or loom_call_options.num_threads), as TorchCodec sets
    ** thread_count to its num_ffmpeg_threads, unless decoder_option names
    ** threads itself (the filter graph takes the same count) */
    const char *dopt = str_of(&a[A(decoder_option)]);
    char dopt_threads[600];
    if (dopt == NULL || (strncmp(dopt, "threads=", 8) != 0 && strstr(dopt, ";threads=") == NULL)) {
        int n = snprintf(dopt_threads, sizeof dopt_threads, "threads=%d%s%s",
                         call->ctx->n_threads > 0 ? call->ctx->n_threads : 1, dopt != NULL ? ";" : "",
                         dopt != NULL ? dopt : "");
        if (n > 0 && (size_t)n < sizeof dopt_threads)
            dopt = dopt_threads;
    }
    char err[SR_ERR_LEN];
    sr_reader *r;
    if (sr_open(&r, &src, err) != 0)
        return pk_host->fail(err[0] == '\'' ? LOOM_EINVAL : LOOM_EFORMAT, "%s", err);
    sr_output_config c = { .video = video, .frames_per_chunk = -1, .buffer_chunk_size = -1,
                           .stream_index = a[A(stream_index)].is_set
                                               ? (a[A(stream_index)].u.i > 1000000 ? 1000000 : (int)a[A(stream_index)].u.i)
                                               : -1,
                           .decoder = str_of(&a[A(decoder)]), .decoder_option = dopt,
                           .filter_desc = desc };
    loom_status st = LOOM_OK;
    int k = sr_add_output(r, &c);
    if (k < 0 || sr_process_all_packets(r) != 0)
        st = pk_host->fail(sr_error(r)[0] == '\'' ? LOOM_EINVAL : LOOM_EFORMAT, "%s", sr_error(r));
    sr_out_info in;
    if (st == LOOM_OK)
        sr_out_info_get(r, k, &in);
    double pts = NAN;
    int64_t n = st == LOOM_OK ? sr_peek_chunk(r, k, &pts) : 0;
    loom_tensor *t = NULL, *tp = NULL;
    int lent = 0;
    if (st == LOOM_OK) {
        /* the reader's buffer becomes the output (ABI 1.6), else a copy */
        int64_t shape[4] = { n, in.frame_shape[0], in.frame_shape[1], in.frame_shape[2] };
        st = audio_sr_lend_chunk(call, r, k, 0, (loom_dtype)in.dtype, 1 + in.ndim_frame, shape, &t, &lent);
        if (st == LOOM_OK && !lent)
            st = pk_host->alloc_output(call, 0, (loom_dtype)in.dtype, 1 + in.ndim_frame, shape, &t);
    }
    if (st == LOOM_OK && call->n_outputs > 1)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F64, 0, NULL, &tp);
    if (st == LOOM_OK) {
        if (tp != NULL)
            *(double *)loom_data(tp) = n > 0 ? pts : 0.0;
        if (n > 0 && !lent)
            sr_pop_chunk(r, k, loom_data(t));
    }
    sr_close(r);
    return st;
}
