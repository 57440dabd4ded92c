/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_cpu.c - the cpu kernels of the spectral ops: each resolves its
** framing (spectral_checks.c), allocates its output and runs the FFTW
** engine (stft_cpu.h); the mel filters and the DCT are applied with the
** toolkit's GEMM.
*/
#include <math.h>
#include <string.h>

#include "describe.h"
#include "gemm/gemm.h"
#include "stft_cpu.h"

/* stft and spectrogram: the spectrum as g.out_kind says. */
static loom_status run_forward(loom_call *call, const audio_stft_args *a)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1];
    audio_stft_geom g;
    loom_tensor *out;
    loom_status st = audio_stft_resolve(call, x, w, a, &g);
    if (st != LOOM_OK)
        return st;
    const int64_t tail[3] = { g.n_freq, g.n_frames, 2 };
    loom_dtype dt = g.out_kind == AUDIO_OUT_COMPLEX ? audio_complex_of(g.real) : g.real;
    if ((st = audio_alloc_lead(call, 0, dt, x, x->ndim - 1, tail, g.out_kind == AUDIO_OUT_REAL_PAIRS ? 3 : 2, &out))
        != LOOM_OK)
        return st;
    return audio_stft_forward_cpu(call, &g, loom_data(x), loom_data(out));
}

/* istft and inverse_spectrogram. */
static loom_status run_inverse(loom_call *call, const audio_stft_args *a)
{
    const loom_tensor *s = call->inputs[0], *w = call->inputs[1];
    const int pairs = !(loom_tensor_dtype_of(s) == LOOM_DTYPE_C64 || loom_tensor_dtype_of(s) == LOOM_DTYPE_C128);
    audio_stft_geom g;
    loom_tensor *out;
    loom_status st = audio_istft_resolve(call, s, pairs, w, a, &g);
    if (st != LOOM_OK)
        return st;
    const int64_t len = g.out_len - 2 * g.trim > 0 ? g.out_len - 2 * g.trim : 0;
    if ((st = audio_alloc_lead(call, 0, g.complex_out ? audio_complex_of(g.real) : g.real, s, s->ndim - 2 - pairs,
                               &len, 1, &out)) != LOOM_OK)
        return st;
    return audio_stft_inverse_cpu(call, &g, loom_data(s), loom_data(out));
}

static loom_status run_fbanks(loom_call *call)
{
    const loom_attr_value *v = call->attrs;
    audio_mel_args m = {
        .n_freqs = v[PK_ATTR(audio_melscale_fbanks, n_freqs)].u.i,
        .n_mels = v[PK_ATTR(audio_melscale_fbanks, n_mels)].u.i,
        .sample_rate = v[PK_ATTR(audio_melscale_fbanks, sample_rate)].u.i,
        .f_min = v[PK_ATTR(audio_melscale_fbanks, f_min)].u.f,
        .f_max = v[PK_ATTR(audio_melscale_fbanks, f_max)].u.f,
        .slaney_norm = strcmp(v[PK_ATTR(audio_melscale_fbanks, norm)].u.s, "slaney") == 0,
        .slaney_scale = strcmp(v[PK_ATTR(audio_melscale_fbanks, mel_scale)].u.s, "slaney") == 0,
    };
    const int64_t shape[2] = { m.n_freqs, m.n_mels };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    float *work = st == LOOM_OK ? pk_host->scratch(call->ctx, (size_t)(m.n_freqs + m.n_mels + 2) * sizeof(float))
                                : NULL;
    if (st != LOOM_OK || work == NULL)
        return st != LOOM_OK ? st : LOOM_ENOMEM;
    audio_melscale_fbanks_fill(&m, LOOM_DTYPE_F32, loom_data(out), work);
    return LOOM_OK;
}

static loom_status run_dct(loom_call *call)
{
    const loom_attr_value *v = call->attrs;
    const int64_t n_mfcc = v[PK_ATTR(audio_create_dct, n_mfcc)].u.i, n_mels = v[PK_ATTR(audio_create_dct, n_mels)].u.i;
    const int64_t shape[2] = { n_mels, n_mfcc };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    audio_create_dct_fill(n_mfcc, n_mels, strcmp(v[PK_ATTR(audio_create_dct, norm)].u.s, "ortho") == 0,
                          LOOM_DTYPE_F32, loom_data(out));
    return LOOM_OK;
}

/* C[b] (m x n) = op(A) (m x k, shared by every b) @ B[b] (k x n). */
static loom_status gemm_shared_a(loom_call *call, loom_dtype dt, const void *a, int64_t lda_t, int64_t batch,
                                 int64_t m, int64_t k, int64_t n, const void *b, void *c)
{
    pk_gemm_args ga = PK_GEMM_ARGS_INIT;
    ga.m = m; ga.n = n; ga.k = k; ga.batch = batch;
    ga.a = pk_gemm_matrix(a, dt, lda_t, 1);         /* a is stored k x m: its transpose */
    ga.a.bs = 0;
    ga.b = pk_gemm_matrix(b, dt, n, 0);
    ga.b.bs = k * n;
    ga.c = c; ga.ldc = n; ga.c_bs = m * n;
    return pk_gemm(call->ctx, &ga);
}

/* mfcc's decibels (or log) in place, element by element: the one pass
** with a libm call per value, so it is spread over the pool. */
typedef struct mel_log_job {
    void *mel;
    size_t es;
    int log_mels;
} mel_log_job;

static void mel_log_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const mel_log_job *j = user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++) {
        double y = j->es == 8 ? ((double *)j->mel)[i] : ((float *)j->mel)[i];
        y = j->log_mels ? log(y + 1e-6) : 10.0 * log10(y > 1e-10 ? y : 1e-10);
        if (j->es == 8)
            ((double *)j->mel)[i] = y;
        else
            ((float *)j->mel)[i] = (float)y;
    }
}

/* mel_spectrogram and mfcc: the power spectrogram, the filters, and for
** mfcc the decibels (or log) and the DCT. */
static loom_status run_mel(loom_call *call, int mfcc)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1];
    const loom_attr_value *v = call->attrs;
    audio_stft_args a;
    audio_stft_geom g;
    audio_mel_args m;
    loom_tensor *out;
    loom_status st = audio_mel_read_args(call, &a);
    if (st != LOOM_OK || (st = audio_stft_resolve(call, x, w, &a, &g)) != LOOM_OK
        || (st = audio_mel_read_fbank_args(call, g.n_fft, &m)) != LOOM_OK)
        return st;
    const int64_t n_mfcc = mfcc ? v[PK_ATTR(audio_mfcc, n_mfcc)].u.i : 0;
    if (mfcc && v[PK_ATTR(audio_mfcc, dct_type)].u.i != 2)   /* torchaudio: "DCT type not supported" */
        return pk_host->fail(LOOM_EINVAL, "'dct_type' %lld is not supported: only 2",
                             (long long)v[PK_ATTR(audio_mfcc, dct_type)].u.i);
    if (mfcc && n_mfcc > m.n_mels)      /* torchaudio: "Cannot select more MFCC coefficients than # mel bins" */
        return pk_host->fail(LOOM_EINVAL, "'n_mfcc' %lld exceeds 'n_mels' %lld", (long long)n_mfcc,
                             (long long)m.n_mels);
    const int64_t tail[2] = { mfcc ? n_mfcc : m.n_mels, g.n_frames };
    if ((st = audio_alloc_lead(call, 0, g.real, x, x->ndim - 1, tail, 2, &out)) != LOOM_OK)
        return st;
    if (g.batch == 0 || g.n_frames == 0)
        return LOOM_OK;
    const size_t es = g.real == LOOM_DTYPE_F64 ? 8 : 4;
    const int64_t per = g.n_freq * g.n_frames, mel_per = m.n_mels * g.n_frames;
    void *spec = pk_host->scratch(call->ctx, (size_t)(g.batch * per) * es);
    void *fb = pk_host->scratch(call->ctx, (size_t)(m.n_freqs * m.n_mels) * es);
    float *work = pk_host->scratch(call->ctx, (size_t)(m.n_freqs + m.n_mels + 2) * sizeof(float));
    void *mel = mfcc ? pk_host->scratch(call->ctx, (size_t)(g.batch * mel_per) * es) : loom_data(out);
    if (spec == NULL || fb == NULL || work == NULL || mel == NULL)
        return LOOM_ENOMEM;
    audio_melscale_fbanks_fill(&m, g.real, fb, work);
    if ((st = audio_stft_forward_cpu(call, &g, loom_data(x), spec)) != LOOM_OK
        || (st = gemm_shared_a(call, g.real, fb, m.n_mels, g.batch, m.n_mels, g.n_freq, g.n_frames, spec, mel))
               != LOOM_OK || !mfcc)
        return st;
    /* AmplitudeToDB('power', top_db): 10 log10(max(x, 1e-10)), then at
    ** least (the peak - top_db) over each item's last three dims (torchaudio
    ** packs (..., C, mels, time) per batch entry; fewer dims are one item) */
    const int64_t total = g.batch * mel_per;
    const int64_t group = x->ndim >= 2 ? x->shape[x->ndim - 2] * mel_per : total;
    const int log_mels = v[PK_ATTR(audio_mfcc, log_mels)].u.b;
    const double top_db = v[PK_ATTR(audio_mfcc, top_db)].u.f;
    mel_log_job lj = { mel, es, log_mels };
    if ((st = pk_host->parallel_for(call->ctx, total, 16384, mel_log_range, &lj)) != LOOM_OK)
        return st;
    for (int64_t g0 = 0; g0 < total && !log_mels; g0 += group) {
        /* the peak of the stored values: rounding to f32 is monotonic, so it
        ** is the rounded peak of the unrounded ones */
        double peak = -INFINITY;
        for (int64_t i = g0; i < g0 + group; i++) {
            const double y = es == 8 ? ((double *)mel)[i] : ((float *)mel)[i];
            peak = y > peak ? y : peak;
        }
        const double floor_db = es == 8 ? peak - top_db : (double)(float)((float)peak - (float)top_db);
        for (int64_t i = g0; i < g0 + group; i++) {
            if (es == 8)
                ((double *)mel)[i] = ((double *)mel)[i] > floor_db ? ((double *)mel)[i] : floor_db;
            else
                ((float *)mel)[i] = ((float *)mel)[i] > (float)floor_db ? ((float *)mel)[i] : (float)floor_db;
        }
    }
    void *dct = pk_host->scratch(call->ctx, (size_t)(m.n_mels * n_mfcc) * es);
    if (dct == NULL)
        return LOOM_ENOMEM;
    audio_create_dct_fill(n_mfcc, m.n_mels, strcmp(v[PK_ATTR(audio_mfcc, dct_norm)].u.s, "ortho") == 0, g.real, dct);
    return gemm_shared_a(call, g.real, dct, n_mfcc, g.batch, n_mfcc, m.n_mels, g.n_frames, mel, loom_data(out));
}

static loom_status spectral_run_cpu(loom_call *call)
{
    audio_stft_args a;
    loom_status st;
    switch (*(const audio_spectral_op *)call->kernel->user) {
    case AUDIO_OP_STFT:
        return (st = audio_stft_read_args(call, &a)) != LOOM_OK ? st : run_forward(call, &a);
    case AUDIO_OP_SPECTROGRAM:
        return (st = audio_spectrogram_read_args(call, &a)) != LOOM_OK ? st : run_forward(call, &a);
    case AUDIO_OP_ISTFT:
        return (st = audio_istft_read_args(call, &a)) != LOOM_OK ? st : run_inverse(call, &a);
    case AUDIO_OP_INVERSE_SPECTROGRAM:
        return (st = audio_inverse_spectrogram_read_args(call, &a)) != LOOM_OK ? st : run_inverse(call, &a);
    case AUDIO_OP_MELSCALE_FBANKS:
        return run_fbanks(call);
    case AUDIO_OP_CREATE_DCT:
        return run_dct(call);
    case AUDIO_OP_MEL_SPECTROGRAM:
        return run_mel(call, 0);
    case AUDIO_OP_MFCC:
        return run_mel(call, 1);
    }
    return pk_host->fail(LOOM_EINTERNAL, "unknown spectral op");
}

/* The FFT ops' impl name says which build of the sample loops runs, so
** they are registered once the CPU features are known. */
static loom_status spectral_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    const int avx2 = strcmp(audio_stft_cpu_isa(), "avx2") == 0;
    const char *fft = avx2 ? "cpu:fftw-avx2" : "cpu:fftw";
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(audio_stft_schema, fft, AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cpu,
                      .user = &audio_spectral_ids[0]),
        PK_KERNEL_CPU(audio_istft_schema, fft, AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cpu,
                      .user = &audio_spectral_ids[1]),
        PK_KERNEL_CPU(audio_spectrogram_schema, fft, AUDIO_REAL, spectral_run_cpu, .user = &audio_spectral_ids[2]),
        PK_KERNEL_CPU(audio_inverse_spectrogram_schema, fft, AUDIO_REAL | AUDIO_COMPLEX, spectral_run_cpu,
                      .user = &audio_spectral_ids[3]),
        PK_KERNEL_CPU(audio_mel_spectrogram_schema, avx2 ? "cpu:fftw-gemm-avx2" : "cpu:fftw-gemm", AUDIO_REAL,
                      spectral_run_cpu, .user = &audio_spectral_ids[6]),
        PK_KERNEL_CPU(audio_mfcc_schema, avx2 ? "cpu:fftw-gemm-avx2" : "cpu:fftw-gemm", AUDIO_REAL, spectral_run_cpu,
                      .user = &audio_spectral_ids[7]),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

static const loom_kernel_desc spectral_cpu_kernels[] = {
    PK_KERNEL_CPU(audio_melscale_fbanks_schema, "cpu:float32-table", 0, spectral_run_cpu,
                  .user = &audio_spectral_ids[4]),
    PK_KERNEL_CPU(audio_create_dct_schema, "cpu:float32-table", 0, spectral_run_cpu, .user = &audio_spectral_ids[5]),
};

const pk_module audio_spectral_cpu = PK_MODULE("spectral", audio_spectral_ops, spectral_cpu_kernels,
                                               spectral_register_cpu);
