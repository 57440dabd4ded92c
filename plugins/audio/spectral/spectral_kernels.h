/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_kernels.h - the C launchers of the cuFFT engine of audio-cuda.so
** (spectral_kernels.cu): framing and windowing, batched R2C / C2R
** transforms, the (..., freq, frames) layout with its scale, power or
** mirror, overlap-add divided by the window envelope, the mel filters and
** mfcc's decibels.
** Every launch is asynchronous on `stream`; each returns 0 or writes a
** message into err. Pointers are device memory unless named _host.
*/
#ifndef LOOM_AUDIO_SPECTRAL_KERNELS_H
#define LOOM_AUDIO_SPECTRAL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The framing of one call (audio_stft_geom, without the host-side fields). */
typedef struct audio_cu_geom {
    int f64;                    /* double (else float) */
    int64_t batch, length, pad, center_pad, n_fft, hop, win_length, n_frames, n_freq;
    int pad_mode, out_kind;     /* AUDIO_PAD_*, AUDIO_OUT_* */
    int complex_in;             /* forward: x is complex, C2C / Z2Z, two-sided */
    int complex_out;            /* inverse: out is complex, C2C / Z2Z of all n_fft bins */
    double scale, power;
    int64_t start, out_valid, out_len, trim;
} audio_cu_geom;

/* Bytes of device scratch audio_cu_forward / audio_cu_inverse need. */
size_t audio_cu_forward_scratch(const audio_cu_geom *g);
size_t audio_cu_inverse_scratch(const audio_cu_geom *g);

/* x [batch, length] (complex when complex_in) -> out [batch, n_freq, n_frames] (complex, pairs or power). */
int audio_cu_forward(const audio_cu_geom *g, const void *x, const void *window, void *out, void *scratch,
                     void *stream, char *err, size_t err_size);
/* spec [batch, n_freq, n_frames] complex -> out [batch, out_len - 2 trim] (complex when complex_out);
** inv_env [out_valid]. */
int audio_cu_inverse(const audio_cu_geom *g, const void *spec, const void *window, const void *inv_env, void *out,
                     void *scratch, void *stream, char *err, size_t err_size);
/* out[b, m, t] = sum_f fb[f, m] spec[b, f, t]: fb [n_freq, n_mels], spec [batch, n_freq, n_frames]. */
int audio_cu_mel(const audio_cu_geom *g, const void *fb, int64_t n_mels, const void *spec, void *out, void *stream,
                 char *err, size_t err_size);

/* mfcc's step between the filters and the DCT, in place on x [total]:
** log(x + 1e-6) when log_mels, else AmplitudeToDB('power', top_db) with
** the top_db floor per item of `group` consecutive values. */
int audio_cu_db(int f64, void *x, int64_t total, int64_t group, int log_mels, double top_db, void *stream, char *err,
                size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_AUDIO_SPECTRAL_KERNELS_H */
