/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stft_cpu.c - the drivers of the cpu engine (stft_cpu.h): scratch, plans,
** the window envelope, and the parallel_for passes of one call.
*/
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "fft_plans.h"
#include "stft_cpu.h"

const char *audio_stft_cpu_isa(void) { return pk_cpu_avx2(PK_CPU_FMA) ? "avx2" : "portable"; }

static const audio_stft_fns *fns(void) { return pk_cpu_avx2(PK_CPU_FMA) ? &audio_stft_avx2 : &audio_stft_portable; }

static int32_t threads_of(const loom_call *call) { return call->ctx->n_threads > 0 ? call->ctx->n_threads : 1; }

/* Per-thread FFT buffers of AUDIO_FRAME_BLOCK frames; at least `min_bytes` each. */
static loom_status take_work(loom_call *call, const audio_stft_geom *g, audio_stft_job *j, size_t min_bytes)
{
    const size_t es = g->real == LOOM_DTYPE_F64 ? 8 : 4;
    const int c2c = g->complex_in || g->complex_out;  /* n_fft complex values each way */
    j->rstride = audio_round64((size_t)g->n_fft * (c2c ? 2 : 1), es) / es;
    j->cstride = audio_round64((size_t)(c2c ? g->n_fft : g->n_fft / 2 + 1) * 2, es) / es;
    size_t bytes = AUDIO_FRAME_BLOCK * (j->rstride + j->cstride) * es;
    j->work_stride = bytes > min_bytes ? bytes : audio_round64(min_bytes, 1);
    j->work = pk_host->scratch(call->ctx, j->work_stride * (size_t)threads_of(call));
    return j->work != NULL ? LOOM_OK : LOOM_ENOMEM;
}

loom_status audio_stft_forward_cpu(loom_call *call, const audio_stft_geom *g, const void *x, void *out)
{
    const int d = g->real == LOOM_DTYPE_F64;
    const size_t es = d ? 8 : 4;
    audio_stft_job j = { .g = g, .x = x, .out = out };
    loom_status st;
    if (g->batch == 0 || g->n_frames == 0)
        return LOOM_OK;
    const int c = g->complex_in;
    if ((j.plan = audio_fft_plan(c ? AUDIO_FFT_C2C_FWD : AUDIO_FFT_R2C, g->n_fft, g->real)) == NULL)
        return LOOM_ENOMEM;
    j.padded_len = g->length + 2 * (g->pad + g->center_pad);
    j.padded_stride = (int64_t)(audio_round64((size_t)j.padded_len * (c ? 2 : 1), es) / es);
    j.padded = pk_host->scratch(call->ctx, (size_t)(g->batch * j.padded_stride) * es);
    if (j.padded == NULL || (st = take_work(call, g, &j, 0)) != LOOM_OK)
        return LOOM_ENOMEM;
    const audio_stft_fns *f = fns();
    if ((st = pk_host->parallel_for(call->ctx, g->batch, 1, c ? f->pad_c[d] : f->pad[d], &j)) != LOOM_OK)
        return st;
    const int64_t blocks = (g->n_frames + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    return pk_host->parallel_for(call->ctx, g->batch * blocks, 1, c ? f->forward_c[d] : f->forward[d], &j);
}

/* 1 / the envelope (audio_istft_envelope) in scratch. */
static loom_status envelope(loom_call *call, const audio_stft_geom *g, void **inv_out)
{
    const int64_t n = g->out_valid;
    void *inv = pk_host->scratch(call->ctx, (size_t)(n > 0 ? n : 1) * (g->real == LOOM_DTYPE_F64 ? 8 : 4));
    if (inv == NULL)
        return LOOM_ENOMEM;
    *inv_out = inv;
    return audio_istft_envelope(g, inv);
}

loom_status audio_stft_inverse_cpu(loom_call *call, const audio_stft_geom *g, const void *spec, void *out)
{
    const int d = g->real == LOOM_DTYPE_F64;
    const size_t es = d ? 8 : 4;
    audio_stft_job j = { .g = g, .x = spec, .out = out };
    void *inv = NULL;
    loom_status st;
    if ((st = envelope(call, g, &inv)) != LOOM_OK)
        return st;
    j.inv_env = inv;
    if (g->batch == 0 || g->out_len - 2 * g->trim <= 0)
        return LOOM_OK;
    const int c = g->complex_out, nc = c ? 2 : 1;
    if ((j.plan = audio_fft_plan(c ? AUDIO_FFT_C2C_BWD : AUDIO_FFT_C2R, g->n_fft, g->real)) == NULL)
        return LOOM_ENOMEM;
    j.frames = pk_host->scratch(call->ctx, (size_t)(g->batch * g->n_frames * g->n_fft * nc) * es);
    if (j.frames == NULL || (st = take_work(call, g, &j, AUDIO_OLA_CHUNK * es * (size_t)nc)) != LOOM_OK)
        return LOOM_ENOMEM;
    const audio_stft_fns *f = fns();
    const int64_t blocks = (g->n_frames + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    if ((st = pk_host->parallel_for(call->ctx, g->batch * blocks, 1, c ? f->inverse_frames_c[d] : f->inverse_frames[d],
                                    &j)) != LOOM_OK)
        return st;
    const int64_t chunks = (g->out_len + AUDIO_OLA_CHUNK - 1) / AUDIO_OLA_CHUNK;
    return pk_host->parallel_for(call->ctx, g->batch * chunks, 1, c ? f->overlap_add_c[d] : f->overlap_add[d], &j);
}
