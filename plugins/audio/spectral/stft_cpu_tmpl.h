/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stft_cpu_tmpl.h - the sample loops of the cpu engine (stft_cpu.h) for one
** real dtype: included with PK_SFX f32 or f64 by stft_cpu_loops.c (portable)
** and stft_cpu_avx2.c (the same source built for AVX2+FMA). Every function
** is a loom_range_fn over the units named in its comment.
*/
#include <math.h>
#include <string.h>

#include <fftw3.h>

#define AUDIO_R PK_S(PK_SFX)
#define AUDIO_F32_f32 1
#define AUDIO_F32_f64 0
#define AUDIO_IS_F32_(s) AUDIO_F32_##s
#define AUDIO_IS_F32(s) AUDIO_IS_F32_(s)

#if AUDIO_IS_F32(PK_SFX)
#define AUDIO_R2C(p, in, out) fftwf_execute_dft_r2c((const fftwf_plan)(p), (in), (fftwf_complex *)(out))
#define AUDIO_C2R(p, in, out) fftwf_execute_dft_c2r((const fftwf_plan)(p), (fftwf_complex *)(in), (out))
#define AUDIO_C2C(p, in, out) fftwf_execute_dft((const fftwf_plan)(p), (fftwf_complex *)(in), (fftwf_complex *)(out))
#define AUDIO_SQRT sqrtf
#define AUDIO_POW powf
#else
#define AUDIO_R2C(p, in, out) fftw_execute_dft_r2c((const fftw_plan)(p), (in), (fftw_complex *)(out))
#define AUDIO_C2R(p, in, out) fftw_execute_dft_c2r((const fftw_plan)(p), (fftw_complex *)(in), (out))
#define AUDIO_C2C(p, in, out) fftw_execute_dft((const fftw_plan)(p), (fftw_complex *)(in), (fftw_complex *)(out))
#define AUDIO_SQRT sqrt
#define AUDIO_POW pow
#endif

/* The sample of the signal at q after spectrogram's zero `pad` (length lp)
** and the centring's padding mode (q in [-cp, lp + cp)), or -1 for a zero. */
static inline int64_t PK_FN(padded_index)(int64_t length, int64_t pad, int mode, int64_t q)
{
    const int64_t lp = length + 2 * pad;
    if (q < 0 || q >= lp) {
        switch (mode) {
        case AUDIO_PAD_REFLECT: q = q < 0 ? -q : 2 * (lp - 1) - q; break;
        case AUDIO_PAD_REPLICATE: q = q < 0 ? 0 : lp - 1; break;
        case AUDIO_PAD_CIRCULAR: q = ((q % lp) + lp) % lp; break;
        default: return -1;
        }
    }
    q -= pad;
    return q >= 0 && q < length ? q : -1;
}

static inline AUDIO_R PK_FN(padded_at)(const AUDIO_R *x, int64_t length, int64_t pad, int mode, int64_t q)
{
    const int64_t i = PK_FN(padded_index)(length, pad, mode, q);
    return i >= 0 ? x[i] : 0;
}

/* Bin k of nf frames from m0 of spectrum b, from the transforms in c (one
** frame every j->cstride values): its power, or the complex value with the
** real part scaled by scale and the imaginary part by isign (the negated
** scale conjugates a mirrored bin). */
static void PK_FN(store_bin)(const audio_stft_job *j, int64_t b, int64_t k, int64_t m0, int64_t nf,
                             const AUDIO_R *restrict c, AUDIO_R scale, AUDIO_R isign)
{
    const audio_stft_geom *g = j->g;
    const int64_t n_freq = g->n_freq, nfr = g->n_frames;
    if (g->out_kind == AUDIO_OUT_POWER) {
        AUDIO_R *restrict o = (AUDIO_R *)j->out + (b * n_freq + k) * nfr + m0;
        const double p = g->power;
        for (int64_t f = 0; f < nf; f++) {
            const AUDIO_R re = c[f * j->cstride] * scale, im = c[f * j->cstride + 1] * scale;
            const AUDIO_R sq = re * re + im * im;
            o[f] = p == 2.0 ? sq : p == 1.0 ? AUDIO_SQRT(sq) : AUDIO_POW(AUDIO_SQRT(sq), (AUDIO_R)p);
        }
    } else {
        AUDIO_R *restrict o = (AUDIO_R *)j->out + 2 * ((b * n_freq + k) * nfr + m0);
        for (int64_t f = 0; f < nf; f++) {
            o[2 * f] = c[f * j->cstride] * scale;
            o[2 * f + 1] = c[f * j->cstride + 1] * isign;
        }
    }
}

#if defined(AUDIO_STFT_AVX2) && AUDIO_IS_F32(PK_SFX)
/* store_bin's complex case for bins [0, nk) (none mirrored) of nf frames,
** with the same products (c * scale, bit for bit): the spectrum arrives
** frame-major and leaves bin-major, so 4 frames x 4 bins are moved at a
** time as a 4 x 4 transpose of 64-bit (re, im) pairs, four 32-byte stores
** to four output rows instead of 32 scalar ones. */
static void store_bins_c64_avx2(const audio_stft_job *j, int64_t b, int64_t nk, int64_t m0, int64_t nf,
                                const float *restrict c, float scale)
{
    const int64_t nfr = j->g->n_frames, cs = j->cstride;
    float *restrict o = (float *)j->out + 2 * (b * j->g->n_freq * nfr + m0);   /* bin k: o + 2 k nfr */
    const __m256 sv = _mm256_set1_ps(scale);
    int64_t k = 0;
    for (; k + 4 <= nk; k += 4) {
        int64_t f = 0;
        for (; f + 4 <= nf; f += 4) {
            const __m256d r0 = _mm256_castps_pd(_mm256_mul_ps(_mm256_loadu_ps(c + (f + 0) * cs + 2 * k), sv));
            const __m256d r1 = _mm256_castps_pd(_mm256_mul_ps(_mm256_loadu_ps(c + (f + 1) * cs + 2 * k), sv));
            const __m256d r2 = _mm256_castps_pd(_mm256_mul_ps(_mm256_loadu_ps(c + (f + 2) * cs + 2 * k), sv));
            const __m256d r3 = _mm256_castps_pd(_mm256_mul_ps(_mm256_loadu_ps(c + (f + 3) * cs + 2 * k), sv));
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            _mm256_storeu_pd((double *)(o + 2 * ((k + 0) * nfr + f)), _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd((double *)(o + 2 * ((k + 1) * nfr + f)), _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd((double *)(o + 2 * ((k + 2) * nfr + f)), _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd((double *)(o + 2 * ((k + 3) * nfr + f)), _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; f < nf; f++)
            for (int64_t q = k; q < k + 4; q++) {
                o[2 * (q * nfr + f)] = c[f * cs + 2 * q] * scale;
                o[2 * (q * nfr + f) + 1] = c[f * cs + 2 * q + 1] * scale;
            }
    }
    for (; k < nk; k++)
        for (int64_t f = 0; f < nf; f++) {
            o[2 * (k * nfr + f)] = c[f * cs + 2 * k] * scale;
            o[2 * (k * nfr + f) + 1] = c[f * cs + 2 * k + 1] * scale;
        }
}
#endif

/* units: signals. Row b of padded = the padded signal b, where forward
** reads it: the margins, and the signal's first and last n_fft samples
** (forward reads the frames that lie inside the signal from the signal
** itself, so the rest of the row is never written or read). */
static void PK_FN(pad_rows)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t off = g->center_pad + g->pad, n = j->padded_len, len = g->length;
    const int64_t head = len < g->n_fft ? len : g->n_fft, tail0 = len - g->n_fft > head ? len - g->n_fft : head;
    (void)tid;
    for (int64_t b = begin; b < end; b++) {
        const AUDIO_R *x = (const AUDIO_R *)j->x + b * g->length;
        AUDIO_R *row = (AUDIO_R *)j->padded + b * j->padded_stride;
        if (head > 0)
            memcpy(row + off, x, (size_t)head * sizeof(AUDIO_R));
        if (len > tail0)
            memcpy(row + off + tail0, x + tail0, (size_t)(len - tail0) * sizeof(AUDIO_R));
        for (int64_t p = 0; p < off && p < n; p++)
            row[p] = PK_FN(padded_at)(x, g->length, g->pad, g->pad_mode, p - g->center_pad);
        for (int64_t p = off + g->length; p < n; p++)
            row[p] = PK_FN(padded_at)(x, g->length, g->pad, g->pad_mode, p - g->center_pad);
    }
}

/* units: (signal, block of AUDIO_FRAME_BLOCK frames). */
static void PK_FN(forward)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, half = n_fft / 2 + 1, n_freq = g->n_freq, nfr = g->n_frames;
    const int64_t blocks = (nfr + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    const int64_t wl = (n_fft - g->win_length) / 2, wr = wl + g->win_length;
    const AUDIO_R *restrict w = g->window;
    const AUDIO_R scale = (AUDIO_R)g->scale;
    AUDIO_R *rbuf = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    AUDIO_R *cbuf = rbuf + AUDIO_FRAME_BLOCK * j->rstride;
    for (int f = 0; f < AUDIO_FRAME_BLOCK; f++) {   /* the window's zero margins stay zero */
        memset(rbuf + f * j->rstride, 0, (size_t)wl * sizeof(AUDIO_R));
        memset(rbuf + f * j->rstride + wr, 0, (size_t)(n_fft - wr) * sizeof(AUDIO_R));
    }
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / blocks, m0 = (u % blocks) * AUDIO_FRAME_BLOCK;
        const int64_t nf = nfr - m0 < AUDIO_FRAME_BLOCK ? nfr - m0 : AUDIO_FRAME_BLOCK;
        const AUDIO_R *row = (const AUDIO_R *)j->padded + b * j->padded_stride;
        const AUDIO_R *sig = (const AUDIO_R *)j->x + b * g->length;
        const int64_t off = g->center_pad + g->pad;
        for (int64_t f = 0; f < nf; f++) {
            /* a frame inside the signal reads it in place; one that
            ** reaches a margin reads the padded row (pad_rows) */
            const int64_t p = (m0 + f) * g->hop;
            const AUDIO_R *restrict src = p >= off && p + wr <= off + g->length ? sig + (p - off) : row + p;
            AUDIO_R *restrict dst = rbuf + f * j->rstride;
            for (int64_t i = wl; i < wr; i++)
                dst[i] = src[i] * w[i];
            AUDIO_R2C(j->plan, dst, cbuf + f * j->cstride);
        }
        int64_t k = 0;
#if defined(AUDIO_STFT_AVX2) && AUDIO_IS_F32(PK_SFX)
        if (g->out_kind != AUDIO_OUT_POWER) {
            k = n_freq < half ? n_freq : half;
            store_bins_c64_avx2(j, b, k, m0, nf, cbuf, scale);
        }
#endif
        for (; k < n_freq; k++) {
            /* a two-sided spectrum of a real signal: X[n - k] = conj(X[k]) */
            const int mirror = k >= half;
            const int64_t kk = mirror ? n_fft - k : k;
            PK_FN(store_bin)(j, b, k, m0, nf, cbuf + 2 * kk, scale, mirror ? -scale : scale);
        }
    }
}

/* units: (spectrum, block of AUDIO_FRAME_BLOCK frames): each frame's
** inverse transform, scaled and windowed, into job->frames. */
static void PK_FN(inverse_frames)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, half = n_fft / 2 + 1, n_freq = g->n_freq, nfr = g->n_frames;
    const int64_t blocks = (nfr + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    const AUDIO_R *restrict w = g->window;
    const AUDIO_R scale = (AUDIO_R)g->scale;
    AUDIO_R *rbuf = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    AUDIO_R *cbuf = rbuf + AUDIO_FRAME_BLOCK * j->rstride;
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / blocks, m0 = (u % blocks) * AUDIO_FRAME_BLOCK;
        const int64_t nf = nfr - m0 < AUDIO_FRAME_BLOCK ? nfr - m0 : AUDIO_FRAME_BLOCK;
        /* torch's irfft reads the first n_fft // 2 + 1 bins of a two-sided input */
        for (int64_t k = 0; k < half; k++) {
            const AUDIO_R *restrict s = (const AUDIO_R *)j->x + 2 * ((b * n_freq + k) * nfr + m0);
            for (int64_t f = 0; f < nf; f++) {
                cbuf[f * j->cstride + 2 * k] = s[2 * f];
                cbuf[f * j->cstride + 2 * k + 1] = s[2 * f + 1];
            }
        }
        for (int64_t f = 0; f < nf; f++) {
            AUDIO_R *restrict c = cbuf + f * j->cstride;
            /* a real signal's DC and Nyquist bins are real: irfft ignores their imaginary parts */
            c[1] = 0;
            if (n_fft % 2 == 0)
                c[2 * (half - 1) + 1] = 0;
            AUDIO_R *restrict r = rbuf + f * j->rstride;
            AUDIO_C2R(j->plan, c, r);
            AUDIO_R *restrict dst = (AUDIO_R *)j->frames + (b * nfr + m0 + f) * n_fft;
            for (int64_t i = 0; i < n_fft; i++)
                dst[i] = r[i] * scale * w[i];
        }
    }
}



/* units: (signal, chunk of AUDIO_OLA_CHUNK output samples): the sum of
** the frames over the chunk, divided by the envelope, then the zeros of a
** `length` past the signal; the trim of inverse_spectrogram's pad. */
static void PK_FN(overlap_add)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, hop = g->hop, nfr = g->n_frames;
    const int64_t chunks = (g->out_len + AUDIO_OLA_CHUNK - 1) / AUDIO_OLA_CHUNK;
    const int64_t out_row = g->out_len - 2 * g->trim;
    const AUDIO_R *restrict inv = j->inv_env;
    AUDIO_R *acc = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / chunks, t0 = (u % chunks) * AUDIO_OLA_CHUNK;
        const int64_t t1 = t0 + AUDIO_OLA_CHUNK < g->out_len ? t0 + AUDIO_OLA_CHUNK : g->out_len;
        const int64_t v1 = t1 < g->out_valid ? t1 : g->out_valid;
        memset(acc, 0, (size_t)(t1 - t0) * sizeof(AUDIO_R));
        if (v1 > t0) {
            /* the chunk is [p0, p1) in overlap-add coordinates */
            const int64_t p0 = t0 + g->start, p1 = v1 + g->start;
            int64_t m_lo = p0 - n_fft + 1 > 0 ? (p0 - n_fft + 1 + hop - 1) / hop : 0;
            int64_t m_hi = (p1 - 1) / hop < nfr - 1 ? (p1 - 1) / hop : nfr - 1;
            for (int64_t m = m_lo; m <= m_hi; m++) {
                const int64_t fs = m * hop;     /* frame m covers [fs, fs + n_fft) */
                const int64_t a = fs > p0 ? fs : p0, e = fs + n_fft < p1 ? fs + n_fft : p1;
                const AUDIO_R *restrict fr = (const AUDIO_R *)j->frames + (b * nfr + m) * n_fft + (a - fs);
                AUDIO_R *restrict dst = acc + (a - p0);
                for (int64_t i = 0; i < e - a; i++)
                    dst[i] += fr[i];
            }
            for (int64_t t = t0; t < v1; t++)
                acc[t - t0] *= inv[t];
        }
        AUDIO_R *row = (AUDIO_R *)j->out + b * out_row;
        for (int64_t t = t0; t < t1; t++) {
            const int64_t o = t - g->trim;
            if (o >= 0 && o < out_row)
                row[o] = acc[t - t0];
        }
    }
}

/* ---- complex signals (stft of c64 / c128) and outputs (istft return_complex):
** the same steps on interleaved (re, im) values with the C2C plans; the
** window is real and multiplies both parts. */

/* units: signals. Row b of padded = the padded complex signal b (2 reals a sample). */
static void PK_FN(pad_rows_c)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    (void)tid;
    for (int64_t b = begin; b < end; b++) {
        const AUDIO_R *x = (const AUDIO_R *)j->x + 2 * b * g->length;
        AUDIO_R *row = (AUDIO_R *)j->padded + b * j->padded_stride;
        for (int64_t p = 0; p < j->padded_len; p++) {
            const int64_t i = PK_FN(padded_index)(g->length, g->pad, g->pad_mode, p - g->center_pad);
            row[2 * p] = i >= 0 ? x[2 * i] : 0;
            row[2 * p + 1] = i >= 0 ? x[2 * i + 1] : 0;
        }
    }
}

/* units: (signal, block of AUDIO_FRAME_BLOCK frames): the two-sided spectrum. */
static void PK_FN(forward_c)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, n_freq = g->n_freq, nfr = g->n_frames;
    const int64_t blocks = (nfr + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    const int64_t wl = (n_fft - g->win_length) / 2, wr = wl + g->win_length;
    const AUDIO_R *restrict w = g->window;
    const AUDIO_R scale = (AUDIO_R)g->scale;
    AUDIO_R *rbuf = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    AUDIO_R *cbuf = rbuf + AUDIO_FRAME_BLOCK * j->rstride;
    for (int f = 0; f < AUDIO_FRAME_BLOCK; f++) {   /* the window's zero margins stay zero */
        memset(rbuf + f * j->rstride, 0, (size_t)(2 * wl) * sizeof(AUDIO_R));
        memset(rbuf + f * j->rstride + 2 * wr, 0, (size_t)(2 * (n_fft - wr)) * sizeof(AUDIO_R));
    }
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / blocks, m0 = (u % blocks) * AUDIO_FRAME_BLOCK;
        const int64_t nf = nfr - m0 < AUDIO_FRAME_BLOCK ? nfr - m0 : AUDIO_FRAME_BLOCK;
        const AUDIO_R *row = (const AUDIO_R *)j->padded + b * j->padded_stride;
        for (int64_t f = 0; f < nf; f++) {
            const AUDIO_R *restrict src = row + 2 * (m0 + f) * g->hop;
            AUDIO_R *restrict dst = rbuf + f * j->rstride;
            for (int64_t i = wl; i < wr; i++) {
                dst[2 * i] = src[2 * i] * w[i];
                dst[2 * i + 1] = src[2 * i + 1] * w[i];
            }
            AUDIO_C2C(j->plan, dst, cbuf + f * j->cstride);
        }
        for (int64_t k = 0; k < n_freq; k++)
            PK_FN(store_bin)(j, b, k, m0, nf, cbuf + 2 * k, scale, scale);
    }
}

/* units: (spectrum, block of AUDIO_FRAME_BLOCK frames): each frame's
** inverse C2C of all n_fft bins, scaled and windowed, into job->frames
** [batch, n_frames, n_fft] complex. */
static void PK_FN(inverse_frames_c)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, n_freq = g->n_freq, nfr = g->n_frames;
    const int64_t blocks = (nfr + AUDIO_FRAME_BLOCK - 1) / AUDIO_FRAME_BLOCK;
    const AUDIO_R *restrict w = g->window;
    const AUDIO_R scale = (AUDIO_R)g->scale;
    AUDIO_R *rbuf = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    AUDIO_R *cbuf = rbuf + AUDIO_FRAME_BLOCK * j->rstride;
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / blocks, m0 = (u % blocks) * AUDIO_FRAME_BLOCK;
        const int64_t nf = nfr - m0 < AUDIO_FRAME_BLOCK ? nfr - m0 : AUDIO_FRAME_BLOCK;
        for (int64_t k = 0; k < n_freq; k++) {
            const AUDIO_R *restrict s = (const AUDIO_R *)j->x + 2 * ((b * n_freq + k) * nfr + m0);
            for (int64_t f = 0; f < nf; f++) {
                cbuf[f * j->cstride + 2 * k] = s[2 * f];
                cbuf[f * j->cstride + 2 * k + 1] = s[2 * f + 1];
            }
        }
        for (int64_t f = 0; f < nf; f++) {
            AUDIO_R *restrict r = rbuf + f * j->rstride;
            AUDIO_C2C(j->plan, cbuf + f * j->cstride, r);
            AUDIO_R *restrict dst = (AUDIO_R *)j->frames + 2 * (b * nfr + m0 + f) * n_fft;
            for (int64_t i = 0; i < n_fft; i++) {
                dst[2 * i] = r[2 * i] * scale * w[i];
                dst[2 * i + 1] = r[2 * i + 1] * scale * w[i];
            }
        }
    }
}

/* units: (signal, chunk of AUDIO_OLA_CHUNK output samples): overlap_add on complex frames. */
static void PK_FN(overlap_add_c)(void *user, int64_t begin, int64_t end, int32_t tid)
{
    const audio_stft_job *j = user;
    const audio_stft_geom *g = j->g;
    const int64_t n_fft = g->n_fft, hop = g->hop, nfr = g->n_frames;
    const int64_t chunks = (g->out_len + AUDIO_OLA_CHUNK - 1) / AUDIO_OLA_CHUNK;
    const int64_t out_row = g->out_len - 2 * g->trim;
    const AUDIO_R *restrict inv = j->inv_env;
    AUDIO_R *acc = (AUDIO_R *)((char *)j->work + (size_t)tid * j->work_stride);
    for (int64_t u = begin; u < end; u++) {
        const int64_t b = u / chunks, t0 = (u % chunks) * AUDIO_OLA_CHUNK;
        const int64_t t1 = t0 + AUDIO_OLA_CHUNK < g->out_len ? t0 + AUDIO_OLA_CHUNK : g->out_len;
        const int64_t v1 = t1 < g->out_valid ? t1 : g->out_valid;
        memset(acc, 0, (size_t)(2 * (t1 - t0)) * sizeof(AUDIO_R));
        if (v1 > t0) {
            const int64_t p0 = t0 + g->start, p1 = v1 + g->start;
            int64_t m_lo = p0 - n_fft + 1 > 0 ? (p0 - n_fft + 1 + hop - 1) / hop : 0;
            int64_t m_hi = (p1 - 1) / hop < nfr - 1 ? (p1 - 1) / hop : nfr - 1;
            for (int64_t m = m_lo; m <= m_hi; m++) {
                const int64_t fs = m * hop;
                const int64_t a = fs > p0 ? fs : p0, e = fs + n_fft < p1 ? fs + n_fft : p1;
                const AUDIO_R *restrict fr = (const AUDIO_R *)j->frames + 2 * ((b * nfr + m) * n_fft + (a - fs));
                AUDIO_R *restrict dst = acc + 2 * (a - p0);
                for (int64_t i = 0; i < 2 * (e - a); i++)
                    dst[i] += fr[i];
            }
            for (int64_t t = t0; t < v1; t++) {
                acc[2 * (t - t0)] *= inv[t];
                acc[2 * (t - t0) + 1] *= inv[t];
            }
        }
        AUDIO_R *row = (AUDIO_R *)j->out + 2 * b * out_row;
        for (int64_t t = t0; t < t1; t++) {
            const int64_t o = t - g->trim;
            if (o >= 0 && o < out_row) {
                row[2 * o] = acc[2 * (t - t0)];
                row[2 * o + 1] = acc[2 * (t - t0) + 1];
            }
        }
    }
}

#undef AUDIO_R
#undef AUDIO_C2C
#undef AUDIO_R2C
#undef AUDIO_C2R
#undef AUDIO_SQRT
#undef AUDIO_POW
#undef PK_SFX
