/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_stream.c - the streaming methods of audio.ctc_decoder, torchaudio's
** decode_begin / decode_step / decode_end / get_final_hypothesis and
** flashlight's getBestHypothesis: one search per object, guarded by its
** lock, fed any number of frames per step. The result after the last step
** and end equals a one-shot decode of the same frames (the search state is
** exactly the one a batch decode builds frame after frame).
*/
#include <stdlib.h>

#include "ctc_decoder.h"

enum { STREAM_NONE, STREAM_BEGUN, STREAM_ENDED };

static ctc_decoder *decoder_of(loom_call *call)
{
    ctc_decoder *d = call->object;
    if (d == NULL)
        pk_host->fail(LOOM_EINVAL, "%s is a method: it needs an %s object", call->schema->name, CTC_DECODER_CLASS);
    return d;
}

static loom_status begin_run(loom_call *call)
{
    ctc_decoder *d = decoder_of(call);
    if (d == NULL)
        return LOOM_EINVAL;
    pthread_mutex_lock(&d->lock);
    loom_status st = LOOM_OK;
    if (d->stream == NULL)
        d->stream = ctc_search_new(&d->m);
    int r = d->stream == NULL ? -1 : ctc_search_begin(d->stream);
    if (r != 0)
        st = ctc_decoder_search_fail(r);
    d->stream_state = r == 0 ? STREAM_BEGUN : STREAM_NONE;
    pthread_mutex_unlock(&d->lock);
    return st;
}

static loom_status step_run(loom_call *call)
{
    ctc_decoder *d = decoder_of(call);
    if (d == NULL)
        return LOOM_EINVAL;
    const loom_tensor *e = call->inputs[0];
    loom_status st = ctc_decoder_check_emissions(d, e, 2);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&d->lock);
    if (d->stream_state != STREAM_BEGUN) {
        st = pk_host->fail(LOOM_EINVAL, "audio.ctc_decoder_step: %s", d->stream_state == STREAM_NONE
                           ? "call audio.ctc_decoder_begin first" : "the stream has ended: call "
                           "audio.ctc_decoder_begin for a new one");
    } else if (e->shape[0] > 0) {
        int r = ctc_search_step(d->stream, loom_data(e), e->shape[0], e->shape[1]);
        if (r != 0) {
            st = ctc_decoder_search_fail(r);
            d->stream_state = STREAM_NONE;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

static loom_status end_run(loom_call *call)
{
    ctc_decoder *d = decoder_of(call);
    if (d == NULL)
        return LOOM_EINVAL;
    loom_status st = LOOM_OK;
    pthread_mutex_lock(&d->lock);
    if (d->stream_state != STREAM_BEGUN) {
        st = pk_host->fail(LOOM_EINVAL, "audio.ctc_decoder_end: %s", d->stream_state == STREAM_NONE
                           ? "call audio.ctc_decoder_begin first" : "the stream has ended already");
    } else {
        int r = ctc_search_end(d->stream);
        if (r != 0)
            st = ctc_decoder_search_fail(r);
        d->stream_state = r == 0 ? STREAM_ENDED : STREAM_NONE;
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

/* final: after end, the nbest; best: mid-stream (or after end), one. */
static loom_status result_run(loom_call *call)
{
    ctc_decoder *d = decoder_of(call);
    if (d == NULL)
        return LOOM_EINVAL;
    const int final = call->kernel->user != NULL;
    loom_status st = LOOM_OK;
    ctc_results r;
    ctc_results_init(&r);
    pthread_mutex_lock(&d->lock);
    if (d->stream_state == STREAM_NONE || (final && d->stream_state != STREAM_ENDED)) {
        st = pk_host->fail(LOOM_EINVAL, "%s: %s", call->schema->name, d->stream_state == STREAM_NONE
                           ? "call audio.ctc_decoder_begin first" : "call audio.ctc_decoder_end first");
    } else {
        int e = final ? ctc_search_final(d->stream, &r) : ctc_search_best(d->stream, &r);
        if (e != 0)
            st = ctc_decoder_search_fail(e);
    }
    pthread_mutex_unlock(&d->lock);
    if (st == LOOM_OK) {
        const int64_t n = r.n_hyp;
        st = ctc_decoder_put_results(call, &r, 1, &n);
    }
    ctc_results_free(&r);
    return st;
}

static const int final_flag = 1;

const loom_kernel_desc audio_ctc_stream_kernels[] = {
    PK_KERNEL_CPU(ctc_decoder_begin_schema, "cpu:beam-search", 0, begin_run),
    PK_KERNEL_CPU(ctc_decoder_step_schema, "cpu:beam-search", 0, step_run),
    PK_KERNEL_CPU(ctc_decoder_end_schema, "cpu:beam-search", 0, end_run),
    PK_KERNEL_CPU(ctc_decoder_final_schema, "cpu:beam-search", 0, result_run, .user = &final_flag),
    PK_KERNEL_CPU(ctc_decoder_best_schema, "cpu:beam-search", 0, result_run),
};
const size_t audio_ctc_stream_n_kernels = PK_COUNT(audio_ctc_stream_kernels);
