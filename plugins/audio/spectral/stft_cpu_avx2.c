/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stft_cpu_avx2.c - the AVX2+FMA build of the cpu engine's sample loops:
** the same template as stft_cpu_loops.c, vectorised by the compiler for
** 256-bit registers (windowing, power, overlap-add). Only run when the
** core's CPU features (capped by LOOM_CPU_MAX_ISA) have AVX2 and FMA.
** Floating-point contraction stays off, so both builds give the same bits.
** The system headers come first, outside the target region.
*/
#include <math.h>
#include <string.h>

#include <fftw3.h>
#include <immintrin.h>

#include "stft_cpu.h"

/* the template's AVX2-only parts (the complex spectrum's transposed store) */
#define AUDIO_STFT_AVX2 1

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#pragma GCC optimize("tree-vectorize", "fp-contract=off")
#endif

#define PK_SFX f32
#include "stft_cpu_tmpl.h"
#define PK_SFX f64
#include "stft_cpu_tmpl.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

const audio_stft_fns audio_stft_avx2 = {
    .pad = { pad_rows_f32, pad_rows_f64 },
    .forward = { forward_f32, forward_f64 },
    .inverse_frames = { inverse_frames_f32, inverse_frames_f64 },
    .overlap_add = { overlap_add_f32, overlap_add_f64 },
    .pad_c = { pad_rows_c_f32, pad_rows_c_f64 },
    .forward_c = { forward_c_f32, forward_c_f64 },
    .inverse_frames_c = { inverse_frames_c_f32, inverse_frames_c_f64 },
    .overlap_add_c = { overlap_add_c_f32, overlap_add_c_f64 },
};
