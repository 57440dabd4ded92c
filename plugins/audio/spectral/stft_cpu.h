/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stft_cpu.h - the cpu engine of every spectral op: framing, windowing and
** FFTW's real transforms, spread over the core's pool.
**
** Forward (audio_stft_forward_cpu): each signal is padded once (spectrogram's
** zeros, then the centring) into scratch; blocks of AUDIO_FRAME_BLOCK frames
** are windowed into a per-thread buffer, transformed one by one with the
** cached r2c plan, and written to the (..., freq, frames) output as complex
** values, (re, im) pairs or |X|^power, block-transposed so every store is a
** run of consecutive frames.
**
** Inverse (audio_stft_inverse_cpu): every frame is gathered, transformed with
** the c2r plan, scaled and windowed into a [batch, frames, n_fft] scratch
** array; then each output sample sums its frames (no two threads write one
** sample) and is divided by the window's overlap-added square.
**
** A complex signal (g->complex_in) or output (g->complex_out) takes the
** same steps on interleaved values with the cached C2C plans.
**
** The loops over samples come in a portable and an AVX2+FMA build of one
** template (stft_cpu_tmpl.h); audio_stft_cpu_isa says which runs.
*/
#ifndef LOOM_AUDIO_STFT_CPU_H
#define LOOM_AUDIO_STFT_CPU_H

#include "spectral.h"

#define AUDIO_FRAME_BLOCK 64
#define AUDIO_OLA_CHUNK 4096

/* What one forward or inverse call hands its tasks. */
typedef struct audio_stft_job {
    const audio_stft_geom *g;
    const void *x;              /* forward: the signals [batch, length]; inverse: the spectra */
    void *padded;               /* forward: [batch, padded_len] */
    int64_t padded_len, padded_stride;
    void *out;
    void *work;                 /* per-thread buffers, work_stride bytes each */
    size_t work_stride;
    size_t rstride, cstride;    /* elements between frames in the real / complex buffers */
    void *plan;                 /* fftw(f)_plan */
    void *frames;               /* inverse: [batch, n_frames, n_fft] windowed frames */
    const void *inv_env;        /* inverse: 1 / envelope over the output range */
    int64_t n_units;
} audio_stft_job;

/* The range functions of one build, per real dtype (0 f32, 1 f64). */
typedef struct audio_stft_fns {
    loom_range_fn pad[2], forward[2], inverse_frames[2], overlap_add[2];
    /* complex signals (forward) and complex outputs (inverse): C2C */
    loom_range_fn pad_c[2], forward_c[2], inverse_frames_c[2], overlap_add_c[2];
} audio_stft_fns;
extern const audio_stft_fns audio_stft_portable, audio_stft_avx2;

/* "avx2" or "portable": the build the kernels run (from the core's CPU features). */
const char *audio_stft_cpu_isa(void);

/* The spectrum of every signal into out, as g->out_kind says. */
loom_status audio_stft_forward_cpu(loom_call *call, const audio_stft_geom *g, const void *x, void *out);
/* The signals of every spectrum (complex interleaved) into out [batch, g->out_len - 2 g->trim], complex when
** g->complex_out. */
loom_status audio_stft_inverse_cpu(loom_call *call, const audio_stft_geom *g, const void *spec, void *out);

#endif /* LOOM_AUDIO_STFT_CPU_H */
