/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_cuda.c - the cuda kernels of stft, istft, spectrogram,
** inverse_spectrogram, mel_spectrogram and mfcc, and the spectral module
** of audio-cuda.so: the framing is resolved on the host by the checks every
** backend shares (the window copied to the host for that and back as the
** padded n_fft window; the envelope and the mel filters are made on the
** host too), then the cuFFT engine (spectral_kernels.cu) runs on the
** call's stream. mfcc is mel_spectrogram's path, the decibel kernel and
** the DCT as one strided-batched cuBLAS GEMM (the pack's cached handle,
** beamform_cuda.c). melscale_fbanks and create_dct (no tensor inputs) stay
** on the cpu.
*/
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "audio_pack.h"
#include "spectral.h"
#include "spectral_kernels.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* Host copies the resolve needs: the window input's values and a buffer
** for the padded window. Freed by release_host. */
typedef struct host_bufs {
    void *window_values, *window_buf, *inv, *fb;
} host_bufs;

static void release_host(host_bufs *h)
{
    free(h->window_values);
    free(h->window_buf);
    free(h->inv);
    free(h->fb);
}

static loom_status prepare_host(loom_call *call, const loom_tensor *window, loom_dtype real, audio_stft_args *a,
                                host_bufs *h)
{
    const size_t es = real == LOOM_DTYPE_F64 ? 8 : 4;
    memset(h, 0, sizeof *h);
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (a->n_fft > INT32_MAX)   /* as the shared checks say it, before a buffer of that size */
        return pk_host->fail(LOOM_EINVAL, "'n_fft' %lld is over 2^31 - 1, the largest FFTW and cuFFT transform",
                             (long long)a->n_fft);
    h->window_buf = malloc((size_t)a->n_fft * es);
    if (h->window_buf == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory for the window");
    a->window_buf = h->window_buf;
    if (window != NULL && loom_numel(window) > 0) {
        const size_t bytes = (size_t)loom_numel(window) * pk_host->dtype_size(loom_tensor_dtype_of(window));
        if ((h->window_values = malloc(bytes)) == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of host memory for the window");
        if ((e = cudaMemcpy(h->window_values, loom_data(window), bytes, cudaMemcpyDeviceToHost)) != cudaSuccess)
            return cuda_fail(e, "copying 'window' to the host");
        a->window_values = h->window_values;
    }
    return LOOM_OK;
}

/* host bytes into call scratch on the device (synchronous: the host buffer may go after) */
static loom_status upload(loom_call *call, const void *host, size_t bytes, void **dev)
{
    *dev = pk_host->scratch(call->ctx, bytes > 0 ? bytes : 1);
    if (*dev == NULL)
        return LOOM_ENOMEM;
    cudaError_t e = bytes > 0 ? cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice) : cudaSuccess;
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "copying to the device");
}

static void to_cu(const audio_stft_geom *g, audio_cu_geom *c)
{
    *c = (audio_cu_geom){ .f64 = g->real == LOOM_DTYPE_F64, .batch = g->batch, .length = g->length, .pad = g->pad,
                          .center_pad = g->center_pad, .n_fft = g->n_fft, .hop = g->hop, .win_length = g->win_length,
                          .n_frames = g->n_frames, .n_freq = g->n_freq, .pad_mode = g->pad_mode,
                          .out_kind = g->out_kind, .complex_in = g->complex_in, .complex_out = g->complex_out,
                          .scale = g->scale, .power = g->power, .start = g->start,
                          .out_valid = g->out_valid, .out_len = g->out_len, .trim = g->trim };
}

static loom_status launched(int bad, const char *err)
{
    return bad ? pk_host->fail(LOOM_EDEVICE, "%s", err) : LOOM_OK;
}

/* The spectrum of x into out (device), as g->out_kind says. */
static loom_status forward_into(loom_call *call, const audio_stft_geom *g, const void *x, void *out)
{
    audio_cu_geom c;
    void *w, *scratch;
    char err[200];
    to_cu(g, &c);
    const size_t es = g->real == LOOM_DTYPE_F64 ? 8 : 4;
    loom_status st = upload(call, g->window, (size_t)g->n_fft * es, &w);
    if (st != LOOM_OK)
        return st;
    if ((scratch = pk_host->scratch(call->ctx, audio_cu_forward_scratch(&c))) == NULL)
        return LOOM_ENOMEM;
    return launched(audio_cu_forward(&c, x, w, out, scratch, call->ctx->stream, err, sizeof err), err);
}

/* The mel spectrogram of x into mel (device, [batch, n_mels, n_frames]):
** the power spectrum, then the filters (made on the host, in h->fb). */
static loom_status mel_into(loom_call *call, const audio_stft_geom *g, const audio_mel_args *m, const void *x,
                            void *mel, host_bufs *h)
{
    const size_t es = g->real == LOOM_DTYPE_F64 ? 8 : 4;
    float *work = malloc((size_t)(m->n_freqs + m->n_mels + 2) * sizeof(float));
    h->fb = malloc((size_t)(m->n_freqs * m->n_mels) * es);
    void *spec = pk_host->scratch(call->ctx, (size_t)(g->batch * g->n_freq * g->n_frames) * es), *fb;
    if (work == NULL || h->fb == NULL || spec == NULL) {
        free(work);
        return pk_host->fail(LOOM_ENOMEM, "out of memory for the mel filters");
    }
    audio_melscale_fbanks_fill(m, g->real, h->fb, work);
    free(work);
    char err[200];
    audio_cu_geom c;
    to_cu(g, &c);
    loom_status st;
    if ((st = upload(call, h->fb, (size_t)(m->n_freqs * m->n_mels) * es, &fb)) != LOOM_OK
        || (st = forward_into(call, g, x, spec)) != LOOM_OK)
        return st;
    return launched(audio_cu_mel(&c, fb, m->n_mels, spec, mel, call->ctx->stream, err, sizeof err), err);
}

/* mfcc's DCT: out[b] (n_mfcc x T) = dct^T @ mel[b] (n_mels x T), dct
** (n_mels, n_mfcc) shared; row-major, so cuBLAS (column-major) computes
** out[b]^T (T x n_mfcc) = mel[b]^T (T x n_mels) @ dct. */
static loom_status dct_gemm(loom_call *call, const audio_stft_geom *g, int64_t n_mels, int64_t n_mfcc,
                            const void *dct, const void *mel, void *out)
{
    if (g->n_frames > INT32_MAX || n_mels > INT32_MAX || n_mfcc > INT32_MAX || g->batch > INT32_MAX)
        return pk_host->fail(LOOM_EINVAL, "mfcc: %lld x %lld frames is over cuBLAS's int sizes",
                             (long long)g->batch, (long long)g->n_frames);
    void *hv;
    loom_status st = audio_cuda_blas_get(call, &hv);
    if (st != LOOM_OK)
        return st;
    cublasHandle_t h = hv;
    const int t = (int)g->n_frames, k = (int)n_mels, n = (int)n_mfcc, count = (int)g->batch;
    const long long a_bs = (long long)n_mels * g->n_frames, c_bs = (long long)n_mfcc * g->n_frames;
    cublasStatus_t bs;
    if (g->real == LOOM_DTYPE_F64) {
        const double one = 1.0, zero = 0.0;
        bs = cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, t, n, k, &one, mel, t, a_bs, dct, n, 0, &zero,
                                       out, t, c_bs, count);
    } else {
        const float one = 1.0f, zero = 0.0f;
        bs = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, t, n, k, &one, mel, t, a_bs, dct, n, 0, &zero,
                                       out, t, c_bs, count);
    }
    audio_cuda_blas_put();
    return bs == CUBLAS_STATUS_SUCCESS ? LOOM_OK
                                       : pk_host->fail(LOOM_EDEVICE, "mfcc DCT: cuBLAS gemm error %d", (int)bs);
}

/* mel_spectrogram and mfcc: the mel spectrogram, and for mfcc the
** decibels (or log) in place and the DCT, as the cpu kernel does. */
static loom_status run_mel(loom_call *call, audio_stft_args *a, int mfcc)
{
    const loom_tensor *x = call->inputs[0], *window = call->inputs[1];
    const loom_attr_value *v = call->attrs;
    audio_stft_geom g;
    audio_mel_args m;
    host_bufs h;
    loom_tensor *out;
    void *dct_host = NULL;
    loom_status st = prepare_host(call, window, loom_tensor_dtype_of(x), a, &h);
    if (st == LOOM_OK)
        st = audio_stft_resolve(call, x, window, a, &g);
    if (st == LOOM_OK)
        st = audio_mel_read_fbank_args(call, g.n_fft, &m);
    const int64_t n_mfcc = mfcc && st == LOOM_OK ? v[PK_ATTR(audio_mfcc, n_mfcc)].u.i : 0;
    if (st == LOOM_OK && mfcc && v[PK_ATTR(audio_mfcc, dct_type)].u.i != 2)
        st = pk_host->fail(LOOM_EINVAL, "'dct_type' %lld is not supported: only 2",
                           (long long)v[PK_ATTR(audio_mfcc, dct_type)].u.i);
    if (st == LOOM_OK && mfcc && n_mfcc > m.n_mels)
        st = pk_host->fail(LOOM_EINVAL, "'n_mfcc' %lld exceeds 'n_mels' %lld", (long long)n_mfcc,
                           (long long)m.n_mels);
    if (st != LOOM_OK)
        goto done;
    const int64_t tail[2] = { mfcc ? n_mfcc : m.n_mels, g.n_frames };
    if ((st = audio_alloc_lead(call, 0, g.real, x, x->ndim - 1, tail, 2, &out)) != LOOM_OK || g.batch == 0
        || g.n_frames == 0)
        goto done;
    const size_t es = g.real == LOOM_DTYPE_F64 ? 8 : 4;
    const int64_t total = g.batch * m.n_mels * g.n_frames;
    void *mel = mfcc ? pk_host->scratch(call->ctx, (size_t)total * es) : loom_data(out), *dct;
    if (mel == NULL) {
        st = LOOM_ENOMEM;
        goto done;
    }
    if ((st = mel_into(call, &g, &m, loom_data(x), mel, &h)) != LOOM_OK || !mfcc)
        goto done;
    /* torchaudio packs (..., C, mels, time) per item; fewer dims are one item */
    const int64_t group = x->ndim >= 2 ? x->shape[x->ndim - 2] * m.n_mels * g.n_frames : total;
    char err[200];
    if ((st = launched(audio_cu_db(g.real == LOOM_DTYPE_F64, mel, total, group, v[PK_ATTR(audio_mfcc, log_mels)].u.b,
                                   v[PK_ATTR(audio_mfcc, top_db)].u.f, call->ctx->stream, err, sizeof err), err))
        != LOOM_OK)
        goto done;
    if ((dct_host = malloc((size_t)(m.n_mels * n_mfcc) * es)) == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "out of host memory for the DCT");
        goto done;
    }
    audio_create_dct_fill(n_mfcc, m.n_mels, strcmp(v[PK_ATTR(audio_mfcc, dct_norm)].u.s, "ortho") == 0, g.real,
                          dct_host);
    /* on the call's stream, after the kernels queued there (a pageable
    ** source is staged before the call returns, so dct_host may go) */
    const size_t dct_bytes = (size_t)(m.n_mels * n_mfcc) * es;
    if ((dct = pk_host->scratch(call->ctx, dct_bytes)) == NULL) {
        st = LOOM_ENOMEM;
        goto done;
    }
    cudaError_t e = cudaMemcpyAsync(dct, dct_host, dct_bytes, cudaMemcpyHostToDevice, call->ctx->stream);
    st = e != cudaSuccess ? cuda_fail(e, "copying the DCT to the device")
                          : dct_gemm(call, &g, m.n_mels, n_mfcc, dct, mel, loom_data(out));
done:
    free(dct_host);
    release_host(&h);
    return st;
}

/* stft and spectrogram: the spectrum as g.out_kind says. */
static loom_status run_forward(loom_call *call, audio_stft_args *a)
{
    const loom_tensor *x = call->inputs[0], *window = call->inputs[1];
    audio_stft_geom g;
    host_bufs h;
    loom_tensor *out;
    const loom_dtype xdt = loom_tensor_dtype_of(x);
    const loom_dtype xreal = xdt == LOOM_DTYPE_C64 ? LOOM_DTYPE_F32 : xdt == LOOM_DTYPE_C128 ? LOOM_DTYPE_F64 : xdt;
    loom_status st = prepare_host(call, window, xreal, a, &h);
    if (st == LOOM_OK)
        st = audio_stft_resolve(call, x, window, a, &g);
    if (st != LOOM_OK)
        goto done;
    const int64_t tail[3] = { g.n_freq, g.n_frames, 2 };
    loom_dtype dt = g.out_kind == AUDIO_OUT_COMPLEX ? audio_complex_of(g.real) : g.real;
    st = audio_alloc_lead(call, 0, dt, x, x->ndim - 1, tail, g.out_kind == AUDIO_OUT_REAL_PAIRS ? 3 : 2, &out);
    if (st == LOOM_OK && g.batch > 0 && g.n_frames > 0)
        st = forward_into(call, &g, loom_data(x), loom_data(out));
done:
    release_host(&h);
    return st;
}

static loom_status run_inverse(loom_call *call, audio_stft_args *a)
{
    const loom_tensor *s = call->inputs[0], *window = call->inputs[1];
    const loom_dtype dt = loom_tensor_dtype_of(s);
    const int pairs = !(dt == LOOM_DTYPE_C64 || dt == LOOM_DTYPE_C128);
    const loom_dtype real = dt == LOOM_DTYPE_C64 || dt == LOOM_DTYPE_F32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F64;
    audio_stft_geom g;
    host_bufs h;
    loom_tensor *out;
    loom_status st = prepare_host(call, window, real, a, &h);
    if (st == LOOM_OK)
        st = audio_istft_resolve(call, s, pairs, window, a, &g);
    const size_t es = real == LOOM_DTYPE_F64 ? 8 : 4;
    if (st == LOOM_OK && (h.inv = malloc((size_t)(g.out_valid > 0 ? g.out_valid : 1) * es)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "out of host memory for the window envelope");
    if (st == LOOM_OK)
        st = audio_istft_envelope(&g, h.inv);
    const int64_t len = st == LOOM_OK && g.out_len - 2 * g.trim > 0 ? g.out_len - 2 * g.trim : 0;
    if (st == LOOM_OK)
        st = audio_alloc_lead(call, 0, g.complex_out ? audio_complex_of(g.real) : g.real, s, s->ndim - 2 - pairs,
                              &len, 1, &out);
    if (st == LOOM_OK && g.batch > 0 && len > 0) {
        audio_cu_geom c;
        void *w, *inv, *scratch;
        char err[200];
        to_cu(&g, &c);
        if ((st = upload(call, g.window, (size_t)g.n_fft * es, &w)) == LOOM_OK
            && (st = upload(call, h.inv, (size_t)g.out_valid * es, &inv)) == LOOM_OK) {
            scratch = pk_host->scratch(call->ctx, audio_cu_inverse_scratch(&c));
            st = scratch == NULL ? LOOM_ENOMEM
               : launched(audio_cu_inverse(&c, loom_data(s), w, inv, loom_data(out), scratch, call->ctx->stream, err,
                                           sizeof err), err);
        }
    }
    release_host(&h);
    return st;
}

static loom_status spectral_run_cuda(loom_call *call)
{
    audio_stft_args a;
    loom_status st;
    switch (*(const audio_spectral_op *)call->kernel->user) {
    case AUDIO_OP_STFT:
        return (st = audio_stft_read_args(call, &a)) != LOOM_OK ? st : run_forward(call, &a);
    case AUDIO_OP_SPECTROGRAM:
        return (st = audio_spectrogram_read_args(call, &a)) != LOOM_OK ? st : run_forward(call, &a);
    case AUDIO_OP_MEL_SPECTROGRAM:
        return (st = audio_mel_read_args(call, &a)) != LOOM_OK ? st : run_mel(call, &a, 0);
    case AUDIO_OP_MFCC:
        return (st = audio_mel_read_args(call, &a)) != LOOM_OK ? st : run_mel(call, &a, 1);
    case AUDIO_OP_ISTFT:
        return (st = audio_istft_read_args(call, &a)) != LOOM_OK ? st : run_inverse(call, &a);
    case AUDIO_OP_INVERSE_SPECTROGRAM:
        return (st = audio_inverse_spectrogram_read_args(call, &a)) != LOOM_OK ? st : run_inverse(call, &a);
    default:
        return pk_host->fail(LOOM_EINTERNAL, "no cuda kernel for this spectral op");
    }
}

static const loom_kernel_desc spectral_cuda_kernels[] = {
    PK_KERNEL_CUDA(audio_stft_schema, "cuda:cufft", AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cuda,
                   .user = &audio_spectral_ids[0]),
    PK_KERNEL_CUDA(audio_istft_schema, "cuda:cufft", AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cuda,
                   .user = &audio_spectral_ids[1]),
    PK_KERNEL_CUDA(audio_spectrogram_schema, "cuda:cufft", AUDIO_REAL, spectral_run_cuda,
                   .user = &audio_spectral_ids[2]),
    PK_KERNEL_CUDA(audio_inverse_spectrogram_schema, "cuda:cufft", AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cuda,
                   .user = &audio_spectral_ids[3]),
    PK_KERNEL_CUDA(audio_mel_spectrogram_schema, "cuda:cufft-mel", AUDIO_REAL, spectral_run_cuda,
                   .user = &audio_spectral_ids[6]),
    PK_KERNEL_CUDA(audio_mfcc_schema, "cuda:cufft-mel-cublas", AUDIO_REAL, spectral_run_cuda,
                   .user = &audio_spectral_ids[7]),
};

const pk_module audio_spectral_cuda = PK_MODULE("spectral", audio_spectral_ops, spectral_cuda_kernels, NULL);
