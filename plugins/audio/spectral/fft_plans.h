/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fft_plans.h - FFTW plans of the cpu kernels, made once per (size, kind,
** precision) and kept until the pack is unloaded.
**
** FFTW's planner is not thread-safe, its new-array execute functions are:
** plans are made under one mutex and then executed concurrently by any
** number of threads, each on its own arrays. Every array handed to a plan
** must be aligned as FFTW's own allocations are (the kernels use 64-byte
** aligned scratch at offsets that are multiples of 64 bytes).
*/
#ifndef LOOM_AUDIO_FFT_PLANS_H
#define LOOM_AUDIO_FFT_PLANS_H

#include <stdint.h>

#include "loom/plugin.h"

typedef enum audio_fft_kind {
    AUDIO_FFT_R2C,      /* n reals -> n/2+1 complex (forward, unnormalised) */
    AUDIO_FFT_C2R,      /* n/2+1 complex -> n reals (backward, unnormalised; destroys its input) */
    AUDIO_FFT_C2C_FWD,  /* n complex -> n complex (forward, unnormalised; out of place, keeps its input) */
    AUDIO_FFT_C2C_BWD,  /* n complex -> n complex (backward, unnormalised; out of place, keeps its input) */
} audio_fft_kind;

/* The plan (an fftw_plan or fftwf_plan for real F64 / F32), or NULL with
** the error set. */
void *audio_fft_plan(audio_fft_kind kind, int64_t n, loom_dtype real);

/* Destroy every plan (the pack's fini). */
void audio_fft_plans_free(void);

/* Bytes, rounded up to a multiple of 64, of `count` elements of `size` bytes. */
static inline size_t audio_round64(size_t count, size_t size) { return (count * size + 63) & ~(size_t)63; }

#endif /* LOOM_AUDIO_FFT_PLANS_H */
