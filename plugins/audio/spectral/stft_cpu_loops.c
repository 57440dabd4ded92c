/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stft_cpu_loops.c - the portable build of the cpu engine's sample loops
** (stft_cpu_tmpl.h), for CPUs without AVX2+FMA or LOOM_CPU_MAX_ISA below it.
*/
#include "stft_cpu.h"

#define PK_SFX f32
#include "stft_cpu_tmpl.h"
#define PK_SFX f64
#include "stft_cpu_tmpl.h"

const audio_stft_fns audio_stft_portable = {
    .pad = { pad_rows_f32, pad_rows_f64 },
    .forward = { forward_f32, forward_f64 },
    .inverse_frames = { inverse_frames_f32, inverse_frames_f64 },
    .overlap_add = { overlap_add_f32, overlap_add_f64 },
    .pad_c = { pad_rows_c_f32, pad_rows_c_f64 },
    .forward_c = { forward_c_f32, forward_c_f64 },
    .inverse_frames_c = { inverse_frames_c_f32, inverse_frames_c_f64 },
    .overlap_add_c = { overlap_add_c_f32, overlap_add_c_f64 },
};
