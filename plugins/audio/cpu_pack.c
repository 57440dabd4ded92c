/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of audio.so: defines the audio ops and registers
** their cpu kernels, module by module (pack.h). FFTW's plans, made on first
** use, are destroyed at unload.
*/
#include "audio_pack.h"
#include "spectral/fft_plans.h"

void audio_cpu_fini(void) { audio_fft_plans_free(); }

#ifdef LOOM_AUDIO_HAVE_SNDFILE
#define AUDIO_FILES_MODULE , &audio_files_cpu
#else
#define AUDIO_FILES_MODULE
#endif
#ifdef LOOM_AUDIO_HAVE_FFMPEG
#define AUDIO_STREAM_MODULE , &audio_stream_cpu
#else
#define AUDIO_STREAM_MODULE
#endif

PK_PACK_DEFINE("audio", "0.1.0",
               "torchaudio: STFT family, spectrograms, mel features, multi-channel beamforming; audio files through "
               "libsndfile; CTC decoding with n-gram LMs; media streams through FFmpeg (cpu)", NULL, audio_cpu_fini,
               &audio_spectral_cpu, &audio_beamform_cpu, &audio_ctc_cpu, &audio_ctc_greedy_cpu, &audio_ctc_prefix_cpu AUDIO_FILES_MODULE
               AUDIO_STREAM_MODULE)
